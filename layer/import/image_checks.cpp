#include "layer/import/image_checks.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <drm_fourcc.h>

#include "layer/blit/tiled_shadow.hpp"
#include "layer/core/dispatch.hpp"

namespace cldmabuf {

cl_int check_modifier(const ImageLayerProperties &props, std::string *why) {
    if (!props.has_modifier || props.modifier == DRM_FORMAT_MOD_LINEAR) return CL_SUCCESS;
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(props.modifier));
    if (props.modifier == DRM_FORMAT_MOD_INVALID) {
        if (props.assume_linear) return CL_SUCCESS;
        *why = "DRM_FORMAT_MOD_INVALID means the layout is unknown; set CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF "
               "to CL_TRUE if the dma-buf is linear";
        return CL_INVALID_PROPERTY;
    }
    if (props.modifier == I915_FORMAT_MOD_X_TILED || props.modifier == I915_FORMAT_MOD_Y_TILED) {
        const char *name = props.modifier == I915_FORMAT_MOD_X_TILED ? "I915_FORMAT_MOD_X_TILED"
                                                                       : "I915_FORMAT_MOD_Y_TILED";
        if (!props.allow_tiled) {
            *why = std::string("modifier ") + name + " is tiled: the import needs a de-tiled copy; set "
                   "CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF to CL_TRUE to consent to it";
            return CL_INVALID_PROPERTY;
        }
        return CL_SUCCESS;  // consented: layer/blit/tiled_shadow.cpp decides whether it can be served
    }
    *why = std::string("modifier ") + hex +
           " is not supported (only DRM_FORMAT_MOD_LINEAR; compressed layouts are never imported)";
    return CL_INVALID_PROPERTY;
}

size_t image_element_size(const cl_image_format &f) {
    size_t channels = 0;
    switch (f.image_channel_order) {
    case CL_R: case CL_A: case CL_INTENSITY: case CL_LUMINANCE: case CL_DEPTH: channels = 1; break;
    case CL_RG: case CL_RA: case CL_Rx: channels = 2; break;
    case CL_RGB: case CL_RGx: case CL_sRGB: channels = 3; break;
    case CL_RGBA: case CL_BGRA: case CL_ARGB: case CL_ABGR: case CL_RGBx: case CL_sRGBA: case CL_sBGRA:
    case CL_sRGBx: channels = 4; break;
#ifdef CL_DEPTH_STENCIL
    case CL_DEPTH_STENCIL:
        return f.image_channel_data_type == CL_UNORM_INT24 ? 4 : f.image_channel_data_type == CL_FLOAT ? 8 : 0;
#endif
    default: return 0;
    }
    switch (f.image_channel_data_type) {
    case CL_SNORM_INT8: case CL_UNORM_INT8: case CL_SIGNED_INT8: case CL_UNSIGNED_INT8: return channels;
    case CL_SNORM_INT16: case CL_UNORM_INT16: case CL_SIGNED_INT16: case CL_UNSIGNED_INT16: case CL_HALF_FLOAT:
        return 2 * channels;
    case CL_SIGNED_INT32: case CL_UNSIGNED_INT32: case CL_FLOAT: return 4 * channels;
    // Packed types hold every channel in one element.
    case CL_UNORM_SHORT_565: case CL_UNORM_SHORT_555: return 2;
    case CL_UNORM_INT_101010: case CL_UNORM_INT24: return 4;
#ifdef CL_UNORM_INT_101010_2
    case CL_UNORM_INT_101010_2: return 4;
#endif
    default: return 0;
    }
}

namespace {

bool mul(size_t a, size_t b, size_t *out) { return !__builtin_mul_overflow(a, b, out); }

}  // namespace

cl_int image_geometry(const cl_image_desc &desc, size_t elem, Geometry *g, std::string *why) {
    g->elem = elem;
    const cl_mem_object_type t = desc.image_type;
    if (desc.image_width == 0) {
        *why = "image_width is 0";
        return CL_INVALID_IMAGE_DESCRIPTOR;
    }
    size_t rows = 1, slices = 1;
    switch (t) {
    case CL_MEM_OBJECT_IMAGE1D:
    case CL_MEM_OBJECT_IMAGE1D_BUFFER: break;
    case CL_MEM_OBJECT_IMAGE1D_ARRAY: slices = desc.image_array_size; break;
    case CL_MEM_OBJECT_IMAGE2D: rows = desc.image_height; break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY: rows = desc.image_height; slices = desc.image_array_size; break;
    case CL_MEM_OBJECT_IMAGE3D: rows = desc.image_height; slices = desc.image_depth; break;
    default: *why = "image_type is not an image type"; return CL_INVALID_IMAGE_DESCRIPTOR;
    }
    if (rows == 0 || slices == 0) {
        *why = "image_height, image_depth or image_array_size is 0";
        return CL_INVALID_IMAGE_DESCRIPTOR;
    }
    size_t row_bytes = 0;
    if (!mul(desc.image_width, elem, &row_bytes)) {
        *why = "image_width overflows";
        return CL_INVALID_IMAGE_SIZE;
    }
    g->row_pitch = desc.image_row_pitch ? desc.image_row_pitch : row_bytes;
    if (g->row_pitch < row_bytes) {
        *why = "image_row_pitch " + std::to_string(g->row_pitch) + " is smaller than a row (" +
               std::to_string(row_bytes) + " bytes)";
        return CL_INVALID_IMAGE_DESCRIPTOR;
    }
    if (g->row_pitch % elem) {
        *why = "image_row_pitch " + std::to_string(g->row_pitch) + " is not a multiple of the element size (" +
               std::to_string(elem) + " bytes)";
        return CL_INVALID_IMAGE_DESCRIPTOR;
    }
    const bool layered = t == CL_MEM_OBJECT_IMAGE1D_ARRAY || t == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
                         t == CL_MEM_OBJECT_IMAGE3D;
    size_t plane = 0;
    if (!mul(g->row_pitch, rows, &plane)) {
        *why = "image_row_pitch * image_height overflows";
        return CL_INVALID_IMAGE_SIZE;
    }
    if (layered) {
        g->slice_pitch = desc.image_slice_pitch ? desc.image_slice_pitch : plane;
        if (g->slice_pitch < plane || g->slice_pitch % g->row_pitch) {
            *why = "image_slice_pitch " + std::to_string(g->slice_pitch) +
                   " is smaller than a slice or not a multiple of image_row_pitch";
            return CL_INVALID_IMAGE_DESCRIPTOR;
        }
        if (!mul(g->slice_pitch, slices, &g->needed)) {
            *why = "image_slice_pitch * slices overflows";
            return CL_INVALID_IMAGE_SIZE;
        }
    } else if (desc.image_slice_pitch) {
        *why = "image_slice_pitch must be 0 for this image type";
        return CL_INVALID_IMAGE_DESCRIPTOR;
    } else {
        g->needed = plane;
    }
    g->region[0] = desc.image_width;
    g->region[1] = t == CL_MEM_OBJECT_IMAGE1D_ARRAY ? slices : rows;
    g->region[2] = t == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 1 : slices;
    g->bytes = row_bytes * rows * slices;
    // 1D arrays: the slice pitch is the distance between rows of the array.
    if (t == CL_MEM_OBJECT_IMAGE1D_ARRAY) g->row_pitch = g->slice_pitch;
    return CL_SUCCESS;
}

cl_int describe_surface(const ImageLayerProperties &layer, const cl_image_format &format, const cl_image_desc &desc,
                        SurfaceLayout *out, std::string *why) {
    out->elem = image_element_size(format);
    if (!out->elem) {
        *why = "channel order 0x" + std::to_string(format.image_channel_order) + " / type 0x" +
               std::to_string(format.image_channel_data_type) + " is not a valid image format";
        return CL_INVALID_IMAGE_FORMAT_DESCRIPTOR;
    }
    out->tiled = layer.has_modifier && layer.allow_tiled && tiling_of_modifier(layer.modifier, &out->tiling);
    cl_image_desc surface = desc;
    if (out->tiled)
        surface.image_row_pitch = tiled_row_pitch(out->tiling, desc.image_width * out->elem, desc.image_row_pitch);
    return image_geometry(surface, out->elem, &out->g, why);
}

bool plane_end(uint64_t plane_offset, size_t needed, int64_t dmabuf_bytes, size_t *end) {
    return !__builtin_add_overflow(static_cast<size_t>(plane_offset), needed, end) &&
           plane_offset <= static_cast<uint64_t>(SIZE_MAX) && dmabuf_bytes >= 0 &&
           *end <= static_cast<uint64_t>(dmabuf_bytes);
}

bool format_supported(cl_context context, cl_mem_flags flags, cl_mem_object_type type, const cl_image_format &f) {
    cl_mem_flags access = flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY |
                                   CL_MEM_KERNEL_READ_AND_WRITE);
    if (!access) access = CL_MEM_READ_WRITE;
    cl_uint n = 0;
    if (next().clGetSupportedImageFormats(context, access, type, 0, nullptr, &n) != CL_SUCCESS || n == 0)
        return false;
    std::vector<cl_image_format> formats(n);
    if (next().clGetSupportedImageFormats(context, access, type, n, formats.data(), nullptr) != CL_SUCCESS)
        return false;
    return std::any_of(formats.begin(), formats.end(), [&](const cl_image_format &g) {
        return g.image_channel_order == f.image_channel_order &&
               g.image_channel_data_type == f.image_channel_data_type;
    });
}

}  // namespace cldmabuf
