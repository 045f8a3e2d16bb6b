// The checks of an image import that need no ICD object: the layer's
// modifier rules, element sizes, the descriptor's geometry against the
// dma-buf, and the ICD's format list.
#pragma once

#include <cstddef>
#include <string>

#include "layer/base/cl_compat.h"
#include "layer/i915/batch_encoder.hpp"
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

// The surface an image import describes in its dma-buf, before any ICD is
// asked: the format's element size, the tiling (X/Y only with the caller's
// consent; a tiled pitch left 0 is the row in whole tiles) and the
// descriptor's geometry.  CL_SUCCESS, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR for
// a format without an element size, or image_geometry's error, with a reason.
struct SurfaceLayout {
    size_t elem = 0;
    i915::Tiling tiling = i915::Tiling::Linear;
    bool tiled = false;
    Geometry g;
};
cl_int describe_surface(const ImageLayerProperties &layer, const cl_image_format &format, const cl_image_desc &desc,
                        SurfaceLayout *out, std::string *why);

// *end = plane offset + the bytes the image spans; false when that
// overflows or passes the dma-buf's `dmabuf_bytes` (CL_INVALID_IMAGE_SIZE).
bool plane_end(uint64_t plane_offset, size_t needed, int64_t dmabuf_bytes, size_t *end);

// True when the ICD lists the format for this image type and access.
bool format_supported(cl_context context, cl_mem_flags flags, cl_mem_object_type type, const cl_image_format &f);

}  // namespace cldmabuf
