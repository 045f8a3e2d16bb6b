#include "layer/import/devices.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "layer/core/extension_list.hpp"

namespace cldmabuf {

cl_int context_devices(cl_context context, std::vector<cl_device_id> *out) {
    size_t bytes = 0;
    cl_int err = next().clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, nullptr, &bytes);
    if (err != CL_SUCCESS) return err;
    out->resize(bytes / sizeof(cl_device_id));
    return next().clGetContextInfo(context, CL_CONTEXT_DEVICES, bytes, out->data(), nullptr);
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
