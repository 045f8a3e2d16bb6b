// Import of a dma-buf fd into an image (clCreateImageWithProperties), with
// the layer's own properties from include/CL/cl_ext_cldmabuf.h.  See
// docs/images.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layer/cl_compat.h"

namespace cldmabuf {

// The layer-specific properties of an image import, split off the caller's
// list before the rest goes through parse_import_properties.
struct ImageLayerProperties {
    uint64_t plane_offset = 0;
    bool has_modifier = false;
    uint64_t modifier = 0;
    bool allow_tiled = false;
    bool assume_linear = false;
    // The caller's list without the layer's entries, terminated with 0.
    std::vector<cl_mem_properties> rest;
};

// Splits `props` (non-NULL).  CL_INVALID_PROPERTY with a reason for a
// repeated layer property or a flag whose value is not CL_TRUE/CL_FALSE.
cl_int split_image_layer_properties(const cl_mem_properties *props, ImageLayerProperties *out, std::string *why);

// Whether the modifier (if any) may be imported: linear, or X/Y tiled with
// CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF (layer/blit/tiled_shadow.hpp then
// decides whether the blitter can serve it).  CL_SUCCESS or
// CL_INVALID_PROPERTY with a reason.
cl_int check_modifier(const ImageLayerProperties &props, std::string *why);

// Bytes per pixel of an image format, 0 when the order/type pair is not one
// the OpenCL spec defines.
size_t image_element_size(const cl_image_format &format);

void install_image_overrides(cl_icd_dispatch &table);

}  // namespace cldmabuf
