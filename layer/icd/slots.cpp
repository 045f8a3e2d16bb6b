#include "layer/icd/slots.hpp"

#include <cstddef>
#include <cstring>
#include <vector>

#include "layer/core/refuse.hpp"
#include "layer/icd/devices.hpp"
#include "layer/icd/profile.hpp"
#include "layer/base/log.hpp"

namespace cldmabuf {
namespace {

const cl_icd_dispatch *raw_table = nullptr;
cl_uint raw_entries = 0;

// True when the loader's table has slot `offset` (a member offset) and it is set.
bool slot_present(size_t offset) {
    if (offset / sizeof(void *) >= raw_entries) return false;
    void *slot = nullptr;
    std::memcpy(&slot, reinterpret_cast<const char *>(raw_table) + offset, sizeof slot);
    return slot != nullptr;
}
#define SLOT_PRESENT(name) slot_present(offsetof(cl_icd_dispatch, name))

cl_version device_version(cl_device_id device) {
    cl_platform_id platform = device_platform(device);
    return platform ? icd_platform_version(platform) : 0;
}

constexpr cl_version v2_0 = CL_MAKE_VERSION(2, 0, 0);
constexpr cl_version v2_1 = CL_MAKE_VERSION(2, 1, 0);
constexpr cl_version v3_0 = CL_MAKE_VERSION(3, 0, 0);

bool empty_list(const cl_mem_properties *props) { return !props || props[0] == 0; }

cl_mem refuse(cl_int *errcode_ret, const char *what) {
    return refuse_import(errcode_ret, CL_INVALID_PROPERTY, what,
                         "the OpenCL implementation predates OpenCL 3.0 and takes no memory properties; "
                         "the layer accepts only the external memory properties it imports itself");
}

// ---- the guards --------------------------------------------------------------------

cl_mem CL_API_CALL guard_create_buffer_with_properties(cl_context context, const cl_mem_properties *props,
                                                       cl_mem_flags flags, size_t size, void *host_ptr,
                                                       cl_int *errcode_ret) {
    if (SLOT_PRESENT(clCreateBufferWithProperties) && icd_context_version(context) >= v3_0)
        return raw_table->clCreateBufferWithProperties(context, props, flags, size, host_ptr, errcode_ret);
    if (!empty_list(props)) return refuse(errcode_ret, "clCreateBufferWithProperties");
    return raw_table->clCreateBuffer(context, flags, size, host_ptr, errcode_ret);
}

cl_mem CL_API_CALL guard_create_image_with_properties(cl_context context, const cl_mem_properties *props,
                                                      cl_mem_flags flags, const cl_image_format *format,
                                                      const cl_image_desc *desc, void *host_ptr,
                                                      cl_int *errcode_ret) {
    if (SLOT_PRESENT(clCreateImageWithProperties) && icd_context_version(context) >= v3_0)
        return raw_table->clCreateImageWithProperties(context, props, flags, format, desc, host_ptr, errcode_ret);
    if (!empty_list(props)) return refuse(errcode_ret, "clCreateImageWithProperties");
    return raw_table->clCreateImage(context, flags, format, desc, host_ptr, errcode_ret);
}

cl_int CL_API_CALL guard_set_context_destructor_callback(cl_context context,
                                                         void(CL_CALLBACK *fn)(cl_context, void *), void *data) {
    if (SLOT_PRESENT(clSetContextDestructorCallback) && icd_context_version(context) >= v3_0)
        return raw_table->clSetContextDestructorCallback(context, fn, data);
    // Callers treat this as "no notification": their per-context entries stay until exit.
    LOG_DEBUG("clSetContextDestructorCallback: not available below OpenCL 3.0");
    return CL_INVALID_OPERATION;
}

cl_command_queue CL_API_CALL guard_create_command_queue_with_properties(cl_context context, cl_device_id device,
                                                                        const cl_queue_properties *props,
                                                                        cl_int *errcode_ret) {
    if (SLOT_PRESENT(clCreateCommandQueueWithProperties) && device_version(device) >= v2_0)
        return raw_table->clCreateCommandQueueWithProperties(context, device, props, errcode_ret);
    cl_command_queue_properties bits = 0;
    for (const cl_queue_properties *p = props; p && *p; p += 2) {
        if (p[0] != CL_QUEUE_PROPERTIES) {
            LOG_ERROR("clCreateCommandQueueWithProperties: property 0x%llx needs OpenCL 2.0",
                      static_cast<unsigned long long>(p[0]));
            if (errcode_ret) *errcode_ret = CL_INVALID_VALUE;
            return nullptr;
        }
        bits = p[1];
    }
    return raw_table->clCreateCommandQueue(context, device, bits, errcode_ret);
}

cl_int CL_API_CALL guard_get_host_timer(cl_device_id device, cl_ulong *host) {
    if (SLOT_PRESENT(clGetHostTimer) && device_version(device) >= v2_1) return raw_table->clGetHostTimer(device, host);
    return CL_INVALID_OPERATION;
}

cl_int CL_API_CALL guard_get_device_and_host_timer(cl_device_id device, cl_ulong *dev, cl_ulong *host) {
    if (SLOT_PRESENT(clGetDeviceAndHostTimer) && device_version(device) >= v2_1)
        return raw_table->clGetDeviceAndHostTimer(device, dev, host);
    return CL_INVALID_OPERATION;
}

}  // namespace

cl_version icd_platform_version(cl_platform_id platform) { return profile_platform_version(platform); }

cl_version icd_context_version(cl_context context) {
    std::vector<cl_device_id> devices;
    if (context_devices(context, &devices) != CL_SUCCESS || devices.empty()) return 0;
    return device_version(devices[0]);
}

void guard_icd_slots(cl_icd_dispatch &table, const cl_icd_dispatch *raw, cl_uint num_entries) {
    raw_table = raw;
    raw_entries = num_entries;
    table.clCreateBufferWithProperties = guard_create_buffer_with_properties;
    table.clCreateImageWithProperties = guard_create_image_with_properties;
    table.clSetContextDestructorCallback = guard_set_context_destructor_callback;
    table.clCreateCommandQueueWithProperties = guard_create_command_queue_with_properties;
    table.clGetHostTimer = guard_get_host_timer;
    table.clGetDeviceAndHostTimer = guard_get_device_and_host_timer;
}

}  // namespace cldmabuf
