// What the layer adds to clGetPlatformInfo / clGetDeviceInfo answers
// (layer/entry/extensions.cpp): its extensions in the plain and _WITH_VERSION
// lists, the external-memory handle types, CL_PLATFORM_STATS_CLDMABUF.
#pragma once

#include "layer/base/cl_compat.h"

namespace cldmabuf {

cl_int CL_API_CALL get_platform_info(cl_platform_id platform, cl_platform_info name, size_t size, void *value,
                                     size_t *size_ret);
cl_int CL_API_CALL get_device_info(cl_device_id device, cl_device_info name, size_t size, void *value,
                                   size_t *size_ret);

}  // namespace cldmabuf
