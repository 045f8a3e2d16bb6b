// Errors follow cl_khr_semaphore / cl_khr_external_semaphore 1.0
// (OpenCL-Docs api/opencl_runtime_layer.asciidoc, "Semaphores") and what the
// Khronos CTS test_semaphores negative tests accept: CL_INVALID_PROPERTY for
// an unknown or repeated name, a bad value, or a multi-device context without
// a device list; CL_INVALID_DEVICE for a device list that does not name
// exactly one device of the context.
#include "layer/sync/properties.hpp"

#include <algorithm>

namespace cldmabuf::sync {

cl_int parse_semaphore_properties(const cl_semaphore_properties_khr *props,
                                  const std::vector<cl_device_id> &context_devices, bool can_export_sync_fd,
                                  SemaphoreRequest *out, const char **why) {
    *out = SemaphoreRequest{};
    if (!props) {
        *why = "sema_props is NULL (CL_SEMAPHORE_TYPE_KHR is required)";
        return CL_INVALID_VALUE;
    }
    bool seen_type = false, seen_devices = false, seen_export = false;
    std::vector<cl_device_id> listed;
    const cl_semaphore_properties_khr *p = props;
    while (*p) {
        switch (*p) {
        case CL_SEMAPHORE_TYPE_KHR:
            if (seen_type) return *why = "CL_SEMAPHORE_TYPE_KHR given twice", CL_INVALID_PROPERTY;
            seen_type = true;
            if (p[1] != CL_SEMAPHORE_TYPE_BINARY_KHR)
                return *why = "CL_SEMAPHORE_TYPE_KHR is not CL_SEMAPHORE_TYPE_BINARY_KHR", CL_INVALID_PROPERTY;
            p += 2;
            break;
        case CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR:
            if (seen_devices) return *why = "CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR given twice", CL_INVALID_PROPERTY;
            seen_devices = true;
            for (++p; *p != CL_SEMAPHORE_DEVICE_HANDLE_LIST_END_KHR; ++p)
                listed.push_back(reinterpret_cast<cl_device_id>(*p));
            ++p;
            break;
        case CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR:
            if (seen_export) return *why = "CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR given twice", CL_INVALID_PROPERTY;
            seen_export = true;
            for (++p; *p != CL_SEMAPHORE_EXPORT_HANDLE_TYPES_LIST_END_KHR; ++p) {
                if (*p != CL_SEMAPHORE_HANDLE_SYNC_FD_KHR)
                    return *why = "export handle type is not CL_SEMAPHORE_HANDLE_SYNC_FD_KHR", CL_INVALID_PROPERTY;
                if (!can_export_sync_fd)
                    return *why = "no fence source for a sync_fd export here (neither sw_sync nor vgem)", CL_INVALID_DEVICE;
                out->export_sync_fd = true;
            }
            ++p;
            break;
        case CL_SEMAPHORE_HANDLE_SYNC_FD_KHR:
            if (out->import_sync_fd) return *why = "CL_SEMAPHORE_HANDLE_SYNC_FD_KHR given twice", CL_INVALID_PROPERTY;
            out->import_sync_fd = true;
            out->import_fd = static_cast<int>(p[1]);
            p += 2;
            break;
        default: return *why = "unknown semaphore property", CL_INVALID_PROPERTY;
        }
    }
    if (!seen_type) return *why = "CL_SEMAPHORE_TYPE_KHR is missing", CL_INVALID_VALUE;
    if (seen_devices) {
        if (listed.size() != 1)
            return *why = "CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR does not name exactly one device", CL_INVALID_DEVICE;
        if (std::find(context_devices.begin(), context_devices.end(), listed[0]) == context_devices.end())
            return *why = "the listed device is not a device of the context", CL_INVALID_DEVICE;
        out->device = listed[0];
        out->device_listed = true;
    } else if (context_devices.size() != 1) {
        return *why = "multi-device context without CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR", CL_INVALID_PROPERTY;
    } else {
        out->device = context_devices[0];
    }
    out->properties.assign(props, p + 1);
    return CL_SUCCESS;
}

}  // namespace cldmabuf::sync
