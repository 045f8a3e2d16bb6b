#include "layer/icd/devices.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "layer/core/extension_list.hpp"
#include "layer/core/context_devices.hpp"

namespace cldmabuf {

cl_int context_devices(cl_context context, std::vector<cl_device_id> *out) {
    if (recorded_context_devices(context, out)) return CL_SUCCESS;  // not PoCL's parent for sub-devices
    size_t bytes = 0;
    cl_int err = next().clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, nullptr, &bytes);
    if (err != CL_SUCCESS) return err;
    out->resize(bytes / sizeof(cl_device_id));
    return next().clGetContextInfo(context, CL_CONTEXT_DEVICES, bytes, out->data(), nullptr);
}

namespace {

// One handle-valued answer of the ICD's clGet*Info (`info`), nullptr when
// the ICD does not answer (an invalid object).
template <typename T, typename Object, typename Name>
T handle_info(cl_int(CL_API_CALL *info)(Object, Name, size_t, void *, size_t *), Object object,
              std::type_identity_t<Name> name) {
    T value = nullptr;
    return info(object, name, sizeof value, &value, nullptr) == CL_SUCCESS ? value : nullptr;
}

}  // namespace

cl_platform_id device_platform(cl_device_id device) {
    return handle_info<cl_platform_id>(next().clGetDeviceInfo, device, CL_DEVICE_PLATFORM);
}

cl_device_id queue_device(cl_command_queue queue) {
    return handle_info<cl_device_id>(next().clGetCommandQueueInfo, queue, CL_QUEUE_DEVICE);
}

cl_context queue_context(cl_command_queue queue) {
    return handle_info<cl_context>(next().clGetCommandQueueInfo, queue, CL_QUEUE_CONTEXT);
}

cl_context mem_context(cl_mem mem) { return handle_info<cl_context>(next().clGetMemObjectInfo, mem, CL_MEM_CONTEXT); }

cl_platform_id context_platform(cl_context context) {
    std::vector<cl_device_id> devices;
    if (context_devices(context, &devices) != CL_SUCCESS || devices.empty()) return nullptr;
    return device_platform(devices.front());
}

std::string platform_string(cl_platform_id platform, cl_platform_info what) {
    size_t size = 0;
    if (next().clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
    std::string s(size, '\0');
    if (next().clGetPlatformInfo(platform, what, size, s.data(), nullptr) != CL_SUCCESS) return {};
    s.resize(std::strlen(s.c_str()));
    return s;
}

bool platform_has_extension(cl_platform_id platform, const char *ext) {
    return extension_listed(platform_string(platform, CL_PLATFORM_EXTENSIONS), ext);
}

bool device_in(const std::vector<cl_device_id> &list, cl_device_id device) {
    return std::find(list.begin(), list.end(), device) != list.end();
}

bool device_or_parent_in(const std::vector<cl_device_id> &list, cl_device_id device) {
    for (int depth = 0; device && depth < 8; ++depth) {
        if (device_in(list, device)) return true;
        cl_device_id parent = nullptr;
        if (next().clGetDeviceInfo(device, CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, nullptr) != CL_SUCCESS)
            return false;
        device = parent;
    }
    return false;
}

cl_device_id root_device_of(cl_device_id device) {
    for (int depth = 0; depth < 8; ++depth) {
        cl_device_id parent = nullptr;
        if (next().clGetDeviceInfo(device, CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, nullptr) != CL_SUCCESS ||
            !parent)
            return device;
        device = parent;
    }
    return device;
}

bool device_shares_host_memory(cl_device_id device) {
    cl_device_type type = 0;
    if (next().clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, nullptr) == CL_SUCCESS &&
        (type & CL_DEVICE_TYPE_CPU))
        return true;
    cl_bool unified = CL_FALSE;
    return next().clGetDeviceInfo(device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified,
                                  nullptr) == CL_SUCCESS &&
           unified;
}

bool device_has_extension(cl_device_id device, const char *ext) {
    size_t n = 0;
    if (next().clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, nullptr, &n) != CL_SUCCESS) return false;
    std::string s(n, '\0');
    if (next().clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, n, s.data(), nullptr) != CL_SUCCESS) return false;
    s.resize(std::strlen(s.c_str()));
    return extension_listed(s, ext);
}

}  // namespace cldmabuf
