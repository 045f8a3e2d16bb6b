// What an import asks the ICD about its devices.  Every call goes to next():
// the ICD's own answers, below the layer's query overrides.
#pragma once

#include <string>
#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/core/dispatch.hpp"

namespace cldmabuf {

// Devices of a context: as created (layer/core/context_devices.hpp), else
// through the ICD.
cl_int context_devices(cl_context context, std::vector<cl_device_id> *out);

// The platform of a device (nullptr when the ICD does not answer).
cl_platform_id device_platform(cl_device_id device);
// The device of a queue (nullptr when the ICD does not answer).
cl_device_id queue_device(cl_command_queue queue);
// The context of a queue, of a memory object (nullptr when the ICD does not answer).
cl_context queue_context(cl_command_queue queue);
cl_context mem_context(cl_mem mem);
// The platform of a context: its first device's (nullptr when not a context).
cl_platform_id context_platform(cl_context context);

// A platform's string (CL_PLATFORM_NAME, _VERSION, _EXTENSIONS, ...),
// empty when the ICD has none.
std::string platform_string(cl_platform_id platform, cl_platform_info what);
// True when the platform's CL_PLATFORM_EXTENSIONS lists `ext`.
bool platform_has_extension(cl_platform_id platform, const char *ext);

// True when `device` is in `list` (no ICD call: `device` may be garbage).
bool device_in(const std::vector<cl_device_id> &list, cl_device_id device);
// The same, also accepting a sub-device of a listed device.  Asks the ICD
// about `device`, so only for a device the ICD handed out (a queue's).
// PoCL 3.1 reports a sub-device context's CL_CONTEXT_DEVICES as the parent.
bool device_or_parent_in(const std::vector<cl_device_id> &list, cl_device_id device);

// The root device of `device` (itself unless a sub-device).  Root devices
// live as long as their platform, so their handles are a stable cache key;
// a released sub-device's address may be handed to another device.
cl_device_id root_device_of(cl_device_id device);

// True when `device` shares memory with the host (CL_DEVICE_HOST_UNIFIED_MEMORY,
// or a CPU device).
bool device_shares_host_memory(cl_device_id device);

// True when the device's CL_DEVICE_EXTENSIONS lists `ext`.
bool device_has_extension(cl_device_id device, const char *ext);

// A fixed-size clGetDeviceInfo answer, `fallback` when the ICD has none.
template <typename T>
T device_value(cl_device_id device, cl_device_info name, T fallback = T{}) {
    T v = fallback;
    if (next().clGetDeviceInfo(device, name, sizeof v, &v, nullptr) != CL_SUCCESS) return fallback;
    return v;
}

}  // namespace cldmabuf
