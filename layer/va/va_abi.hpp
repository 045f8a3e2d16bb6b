// The few libva and cl_intel_va_api_media_sharing declarations the layer
// needs, written down here so that the layer builds without libva's headers
// and never links libva (it is dlopened: layer/va/libva.cpp).  Debian's
// opencl-headers ship CL/cl_va_api_media_sharing_intel.h, but it includes
// <va/va.h>, which only libva-dev provides.  Values are libva's ABI (va.h,
// va_drmcommon.h of libva 2.x, stable since 2.1) and the extension's
// registered enums; tests/va/test_va_abi.cpp checks them against the real
// headers where those are installed.
#pragma once

#include <cstdint>

#include "layer/base/cl_compat.h"

namespace cldmabuf::va {

using VADisplay = void *;
using VAStatus = int;
using VASurfaceID = unsigned int;

constexpr VAStatus kVaSuccess = 0;
constexpr VAStatus kVaInvalidSurface = 0x00000006;
constexpr VAStatus kVaUnimplemented = 0x00000014;
constexpr VAStatus kVaTimedOut = 0x00000026;
constexpr unsigned int kVaInvalidSurfaceId = 0xffffffff;  // VA_INVALID_SURFACE
constexpr uint32_t kMemTypeDrmPrime2 = 0x40000000;        // VA_SURFACE_ATTRIB_MEM_TYPE_DRM_PRIME_2
constexpr uint32_t kExportReadOnly = 0x0001;              // VA_EXPORT_SURFACE_READ_ONLY
constexpr uint32_t kExportWriteOnly = 0x0002;             // VA_EXPORT_SURFACE_WRITE_ONLY
constexpr uint32_t kExportSeparateLayers = 0x0004;        // VA_EXPORT_SURFACE_SEPARATE_LAYERS
constexpr uint32_t kRtFormatYuv420 = 0x00000001;          // VA_RT_FORMAT_YUV420

// VADRMPRIMESurfaceDescriptor (va_drmcommon.h).
struct PrimeDescriptor {
    uint32_t fourcc;
    uint32_t width;
    uint32_t height;
    uint32_t num_objects;
    struct {
        int fd;
        uint32_t size;
        uint64_t drm_format_modifier;
    } objects[4];
    uint32_t num_layers;
    struct {
        uint32_t drm_format;
        uint32_t num_planes;
        uint32_t object_index[4];
        uint32_t offset[4];
        uint32_t pitch[4];
    } layers[4];
};

// VAImageFormat (va.h): what clGetSupportedVA_APIMediaSurfaceFormatsINTEL
// answers, one per surface format.
constexpr uint32_t kVaLsbFirst = 1;  // VA_LSB_FIRST
struct ImageFormat {
    uint32_t fourcc;
    uint32_t byte_order;
    uint32_t bits_per_pixel;
    uint32_t depth;  // RGB formats: significant bits per pixel, and the masks
    uint32_t red_mask;
    uint32_t green_mask;
    uint32_t blue_mask;
    uint32_t alpha_mask;
    uint32_t va_reserved[4];  // VA_PADDING_LOW
};
static_assert(sizeof(ImageFormat) == 48, "VAImageFormat is 12 32-bit words");

}  // namespace cldmabuf::va

// cl_intel_va_api_media_sharing (the registered values; CL/cl_va_api_media_sharing_intel.h).
#ifndef CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL
#define CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL -1098
#define CL_INVALID_VA_API_MEDIA_SURFACE_INTEL -1099
#define CL_VA_API_MEDIA_SURFACE_ALREADY_ACQUIRED_INTEL -1100
#define CL_VA_API_MEDIA_SURFACE_NOT_ACQUIRED_INTEL -1101
#define CL_VA_API_DISPLAY_INTEL 0x4094
#define CL_PREFERRED_DEVICES_FOR_VA_API_INTEL 0x4095
#define CL_ALL_DEVICES_FOR_VA_API_INTEL 0x4096
#define CL_CONTEXT_VA_API_DISPLAY_INTEL 0x4097
#define CL_MEM_VA_API_MEDIA_SURFACE_INTEL 0x4098
#define CL_IMAGE_VA_API_PLANE_INTEL 0x4099
#define CL_COMMAND_ACQUIRE_VA_API_MEDIA_SURFACES_INTEL 0x409A
#define CL_COMMAND_RELEASE_VA_API_MEDIA_SURFACES_INTEL 0x409B
typedef cl_uint cl_va_api_device_source_intel;
typedef cl_uint cl_va_api_device_set_intel;
#endif
#ifndef CL_CONTEXT_INTEROP_USER_SYNC
#define CL_CONTEXT_INTEROP_USER_SYNC 0x1085
#endif
