#include "layer/base/image_format.hpp"

namespace cldmabuf {

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

}  // namespace cldmabuf
