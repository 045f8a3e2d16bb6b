// The checks of an image import that need no ICD object: the layer's
// modifier rules, element sizes, the descriptor's geometry against the
// dma-buf, and the ICD's format list.
#pragma once

#include <cstddef>
#include <string>

#include "layer/cl_compat.h"
#include "layer/import/request.hpp"

namespace cldmabuf {

// Whether the modifier (if any) may be imported: linear, or X/Y tiled with
// CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF (layer/blit/tiled_shadow.hpp then
// decides whether the blitter can serve it).  CL_SUCCESS or
// CL_INVALID_PROPERTY with a reason.
cl_int check_modifier(const ImageLayerProperties &props, std::string *why);

// Bytes per pixel of an image format, 0 when the order/type pair is not one
// the OpenCL spec defines.
size_t image_element_size(const cl_image_format &format);

struct Geometry {
    size_t elem = 0;
    size_t row_pitch = 0, slice_pitch = 0;
    size_t region[3] = {1, 1, 1};
    size_t needed = 0;  // bytes of the dma-buf the image spans from the plane offset
    size_t bytes = 0;   // pixel bytes
};

// Pitches and extent of the descriptor; CL_SUCCESS or the error with a reason.
cl_int image_geometry(const cl_image_desc &desc, size_t elem, Geometry *g, std::string *why);

// True when the ICD lists the format for this image type and access.
bool format_supported(cl_context context, cl_mem_flags flags, cl_mem_object_type type, const cl_image_format &f);

}  // namespace cldmabuf
