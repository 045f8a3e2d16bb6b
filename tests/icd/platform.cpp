// Platform, device, context and queue: the test ICD's one platform with one
// device, what they report in each mode, and the loader's entry points.
#include <chrono>
#include <cstring>

#include "testicd.hpp"

#define TESTICD_EXPORT extern "C" __attribute__((visibility("default")))

namespace testicd {
namespace {

std::string version_string(const char *prefix) {
    return std::string(prefix) + std::to_string(config().major) + "." + std::to_string(config().minor) +
           " cldmabuf-testicd";
}

cl_version numeric_version() { return CL_MAKE_VERSION(config().major, config().minor, 0); }

cl_int CL_API_CALL get_platform_ids(cl_uint n, cl_platform_id *platforms, cl_uint *num) {
    if ((n == 0 && platforms) || (!platforms && !num)) return CL_INVALID_VALUE;
    if (platforms) platforms[0] = the_platform();
    if (num) *num = 1;
    return CL_SUCCESS;
}

cl_int CL_API_CALL get_platform_info(cl_platform_id platform, cl_platform_info name, size_t size, void *value,
                                     size_t *size_ret) {
    if (platform != the_platform()) return CL_INVALID_PLATFORM;
    const bool v3 = config().at_least(3, 0);
    switch (name) {
    case CL_PLATFORM_PROFILE: return answer_string("FULL_PROFILE", size, value, size_ret);
    case CL_PLATFORM_VERSION: return answer_string(version_string("OpenCL "), size, value, size_ret);
    case CL_PLATFORM_NAME: return answer_string("cldmabuf test ICD", size, value, size_ret);
    case CL_PLATFORM_VENDOR: return answer_string("cldmabuf", size, value, size_ret);
    case CL_PLATFORM_EXTENSIONS: return answer_string(extension_string(), size, value, size_ret);
    case CL_PLATFORM_ICD_SUFFIX_KHR: return answer_string("TESTICD", size, value, size_ret);
    case CL_PLATFORM_HOST_TIMER_RESOLUTION:
        if (!config().at_least(2, 1)) return CL_INVALID_VALUE;
        return answer_value(cl_ulong{1}, size, value, size_ret);
    case CL_PLATFORM_NUMERIC_VERSION:
        if (!v3) return CL_INVALID_VALUE;
        return answer_value(numeric_version(), size, value, size_ret);
    case CL_PLATFORM_EXTENSIONS_WITH_VERSION: {
        if (!v3) return CL_INVALID_VALUE;
        auto list = extension_versions();
        return answer(list.data(), list.size() * sizeof list[0], size, value, size_ret);
    }
    case CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR: {
        if (!config().external_memory()) return CL_INVALID_VALUE;
        auto types = import_handle_types();
        return answer(types.data(), types.size() * sizeof types[0], size, value, size_ret);
    }
    case CL_PLATFORM_SEMAPHORE_TYPES_KHR:
    case CL_PLATFORM_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR: {
        if (!config().semaphores) return CL_INVALID_VALUE;
        const cl_uint v = name == CL_PLATFORM_SEMAPHORE_TYPES_KHR ? CL_SEMAPHORE_TYPE_BINARY_KHR
                                                                 : CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR;
        return answer_value(v, size, value, size_ret);
    }
    case PLATFORM_TESTICD_LOG: return answer_string(recorded(), size, value, size_ret);
    case PLATFORM_TESTICD_FAIL:
        arm_failure(value && size ? std::string(static_cast<const char *>(value), strnlen(static_cast<const char *>(value), size)) : std::string());
        if (size_ret) *size_ret = 0;
        return CL_SUCCESS;
    case PLATFORM_TESTICD_FAULT_STATE: {
        cl_ulong state[4];
        fault_state(state);
        return answer(state, sizeof state, size, value, size_ret);
    }
    case PLATFORM_TESTICD_RUN_CALLBACKS:
        run_held_callbacks();
        return answer(nullptr, 0, size, value, size_ret);
    case PLATFORM_TESTICD_HELD_CALLBACKS: return answer_value(held_callbacks(), size, value, size_ret);
    case PLATFORM_TESTICD_RUN_DESTRUCTORS:
        run_late_destructors();
        return answer(nullptr, 0, size, value, size_ret);
    case PLATFORM_TESTICD_PARK:
        arm_park(value && size ? std::string(static_cast<const char *>(value), strnlen(static_cast<const char *>(value), size)) : std::string());
        if (size_ret) *size_ret = 0;
        return CL_SUCCESS;
    case PLATFORM_TESTICD_PARKED: return answer_value(cl_uint{park_state()}, size, value, size_ret);
    case PLATFORM_TESTICD_UNPARK:
        unpark();
        return answer(nullptr, 0, size, value, size_ret);
    case PLATFORM_TESTICD_DROP_EVENT_REFS:
        drop_held_event_refs();
        return answer(nullptr, 0, size, value, size_ret);
    case PLATFORM_TESTICD_PENDING: return answer_string(pending_commands(), size, value, size_ret);
    case PLATFORM_TESTICD_SCHEDULER:
        note_scheduler_thread();
        return answer(nullptr, 0, size, value, size_ret);
    case PLATFORM_TESTICD_STEPS: return answer_string(manual_steps(), size, value, size_ret);
    case PLATFORM_TESTICD_RUN_STEP:
        if (!value || size != sizeof(cl_uint)) return CL_INVALID_VALUE;
        if (size_ret) *size_ret = 0;
        return manual_run_step(*static_cast<const cl_uint *>(value));
    case PLATFORM_TESTICD_WAITERS: {
        cl_ulong waiters[2];
        manual_waiters(waiters);
        return answer(waiters, sizeof waiters, size, value, size_ret);
    }
    case PLATFORM_TESTICD_LOG_CLEAR:
        clear_record();
        return answer(nullptr, 0, size, value, size_ret);
    default: return CL_INVALID_VALUE;
    }
}

cl_int CL_API_CALL get_device_ids(cl_platform_id platform, cl_device_type type, cl_uint n, cl_device_id *devices,
                                  cl_uint *num) {
    if (platform && platform != the_platform()) return CL_INVALID_PLATFORM;
    if ((n == 0 && devices) || (!devices && !num)) return CL_INVALID_VALUE;
    const cl_device_type mine = config().discrete ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_CPU;
    if (!(type == CL_DEVICE_TYPE_ALL || type == CL_DEVICE_TYPE_DEFAULT || (type & mine))) return CL_DEVICE_NOT_FOUND;
    if (devices) devices[0] = the_device();
    if (num) *num = 1;
    return CL_SUCCESS;
}

cl_int CL_API_CALL get_device_info(cl_device_id device, cl_device_info name, size_t size, void *value,
                                   size_t *size_ret) {
    if (device != the_device()) return CL_INVALID_DEVICE;
    const Config &c = config();
    const bool v3 = c.at_least(3, 0);
    switch (name) {
    case CL_DEVICE_TYPE:
        return answer_value(static_cast<cl_device_type>(c.discrete ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_CPU), size,
                            value, size_ret);
    case CL_DEVICE_VENDOR_ID: return answer_value(cl_uint{0x7e57}, size, value, size_ret);
    case CL_DEVICE_MAX_COMPUTE_UNITS: return answer_value(cl_uint{1}, size, value, size_ret);
    case CL_DEVICE_MAX_WORK_GROUP_SIZE: return answer_value(size_t{1}, size, value, size_ret);
    case CL_DEVICE_ADDRESS_BITS: return answer_value(cl_uint{64}, size, value, size_ret);
    case CL_DEVICE_MAX_MEM_ALLOC_SIZE: return answer_value(cl_ulong{1} << 30, size, value, size_ret);
    case CL_DEVICE_GLOBAL_MEM_SIZE: return answer_value(cl_ulong{4} << 30, size, value, size_ret);
    case CL_DEVICE_MEM_BASE_ADDR_ALIGN: return answer_value(cl_uint{1024}, size, value, size_ret);
    case CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE: return answer_value(cl_uint{128}, size, value, size_ret);
    case CL_DEVICE_IMAGE_SUPPORT: return answer_value(cl_bool{CL_FALSE}, size, value, size_ret);
    case CL_DEVICE_HOST_UNIFIED_MEMORY: return answer_value(cl_bool{!c.discrete}, size, value, size_ret);
    case CL_DEVICE_ENDIAN_LITTLE:
    case CL_DEVICE_AVAILABLE: return answer_value(cl_bool{CL_TRUE}, size, value, size_ret);
    case CL_DEVICE_COMPILER_AVAILABLE:
    case CL_DEVICE_LINKER_AVAILABLE: return answer_value(cl_bool{CL_FALSE}, size, value, size_ret);
    case CL_DEVICE_QUEUE_PROPERTIES: {
        cl_command_queue_properties p = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
        if (c.profiling) p |= CL_QUEUE_PROFILING_ENABLE;
        return answer_value(p, size, value, size_ret);
    }
    case CL_DEVICE_NAME: return answer_string("cldmabuf test device", size, value, size_ret);
    case CL_DEVICE_VENDOR: return answer_string("cldmabuf", size, value, size_ret);
    case CL_DRIVER_VERSION: return answer_string("1.0", size, value, size_ret);
    case CL_DEVICE_PROFILE: return answer_string("FULL_PROFILE", size, value, size_ret);
    case CL_DEVICE_VERSION: return answer_string(version_string("OpenCL "), size, value, size_ret);
    case CL_DEVICE_OPENCL_C_VERSION: return answer_string("OpenCL C 1.2 ", size, value, size_ret);
    case CL_DEVICE_EXTENSIONS: return answer_string(extension_string(), size, value, size_ret);
    case CL_DEVICE_PLATFORM: return answer_value(the_platform(), size, value, size_ret);
    case CL_DEVICE_PARENT_DEVICE: return answer_value(cl_device_id{nullptr}, size, value, size_ret);
    case CL_DEVICE_REFERENCE_COUNT: return answer_value(cl_uint{1}, size, value, size_ret);
    case CL_DEVICE_NUMERIC_VERSION:
        if (!v3) return CL_INVALID_VALUE;
        return answer_value(numeric_version(), size, value, size_ret);
    case CL_DEVICE_EXTENSIONS_WITH_VERSION: {
        if (!v3) return CL_INVALID_VALUE;
        auto list = extension_versions();
        return answer(list.data(), list.size() * sizeof list[0], size, value, size_ret);
    }
    case CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR: {
        if (!c.external_memory()) return CL_INVALID_VALUE;
        auto types = import_handle_types();
        return answer(types.data(), types.size() * sizeof types[0], size, value, size_ret);
    }
    case 0x2052:  // CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR: no images here
        if (!c.external_memory()) return CL_INVALID_VALUE;
        return answer(nullptr, 0, size, value, size_ret);
    case CL_DEVICE_SEMAPHORE_TYPES_KHR:
    case CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR: {
        if (!c.semaphores) return CL_INVALID_VALUE;
        const cl_uint v = name == CL_DEVICE_SEMAPHORE_TYPES_KHR ? CL_SEMAPHORE_TYPE_BINARY_KHR
                                                               : CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR;
        return answer_value(v, size, value, size_ret);
    }
    default: return CL_INVALID_VALUE;
    }
}

cl_int CL_API_CALL retain_device(cl_device_id d) { return d == the_device() ? CL_SUCCESS : CL_INVALID_DEVICE; }
cl_int CL_API_CALL release_device(cl_device_id d) { return d == the_device() ? CL_SUCCESS : CL_INVALID_DEVICE; }
// One device that cannot be partitioned: the spec's answer for a partition
// type the device does not support (CL_DEVICE_PARTITION_PROPERTIES is empty).
// A NULL slot here would crash whoever calls it, the loader first.
cl_int CL_API_CALL create_sub_devices(cl_device_id d, const cl_device_partition_property *, cl_uint, cl_device_id *,
                                      cl_uint *) {
    return d == the_device() ? CL_INVALID_VALUE : CL_INVALID_DEVICE;
}

cl_context make_context(const cl_context_properties *props, cl_int *errcode_ret) {
    auto *ctx = new _cl_context{};
    ctx->disp = dispatch();
    ctx->kind = Kind::context;
    if (props) {
        const cl_context_properties *p = props;
        while (*p) p += 2;
        ctx->properties.assign(props, p + 1);
    }
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return ctx;
}

cl_context CL_API_CALL create_context(const cl_context_properties *props, cl_uint n, const cl_device_id *devices,
                                      void(CL_CALLBACK *)(const char *, const void *, size_t, void *), void *,
                                      cl_int *errcode_ret) {
    if (n == 0 || !devices) {
        if (errcode_ret) *errcode_ret = CL_INVALID_VALUE;
        return nullptr;
    }
    for (cl_uint i = 0; i < n; ++i)
        if (devices[i] != the_device()) {
            if (errcode_ret) *errcode_ret = CL_INVALID_DEVICE;
            return nullptr;
        }
    return make_context(props, errcode_ret);
}

cl_context CL_API_CALL create_context_from_type(const cl_context_properties *props, cl_device_type type,
                                                void(CL_CALLBACK *)(const char *, const void *, size_t, void *),
                                                void *, cl_int *errcode_ret) {
    cl_uint n = 0;
    if (cl_int err = get_device_ids(nullptr, type, 0, nullptr, &n); err != CL_SUCCESS) {
        if (errcode_ret) *errcode_ret = err;
        return nullptr;
    }
    return make_context(props, errcode_ret);
}

cl_int CL_API_CALL retain_context(cl_context ctx) {
    std::lock_guard guard(lock());
    if (!valid(ctx, Kind::context)) return CL_INVALID_CONTEXT;
    ++ctx->refs;
    return CL_SUCCESS;
}

cl_int CL_API_CALL release_context(cl_context ctx) {
    Later later;
    {
        std::lock_guard guard(lock());
        if (!valid(ctx, Kind::context)) return CL_INVALID_CONTEXT;
        if (--ctx->refs == 0) {
            later.push_back([ctx] {
                // Most recently registered first (the spec's order).
                for (auto it = ctx->destructors.rbegin(); it != ctx->destructors.rend(); ++it)
                    it->first(ctx, it->second);
                ctx->kind = Kind{};
                delete ctx;
            });
        }
    }
    run_later(later);
    return CL_SUCCESS;
}

cl_int CL_API_CALL get_context_info(cl_context ctx, cl_context_info name, size_t size, void *value,
                                    size_t *size_ret) {
    std::lock_guard guard(lock());
    if (!valid(ctx, Kind::context)) return CL_INVALID_CONTEXT;
    switch (name) {
    case CL_CONTEXT_REFERENCE_COUNT: return answer_value(ctx->refs, size, value, size_ret);
    case CL_CONTEXT_NUM_DEVICES: return answer_value(cl_uint{1}, size, value, size_ret);
    case CL_CONTEXT_DEVICES: return answer_value(the_device(), size, value, size_ret);
    case CL_CONTEXT_PROPERTIES:
        return answer(ctx->properties.data(), ctx->properties.size() * sizeof(cl_context_properties), size, value,
                      size_ret);
    default: return CL_INVALID_VALUE;
    }
}

cl_int CL_API_CALL set_context_destructor_callback(cl_context ctx, void(CL_CALLBACK *fn)(cl_context, void *),
                                                   void *data) {
    std::lock_guard guard(lock());
    if (!valid(ctx, Kind::context)) return CL_INVALID_CONTEXT;
    if (!fn) return CL_INVALID_VALUE;
    ctx->destructors.emplace_back(fn, data);
    return CL_SUCCESS;
}

cl_command_queue make_queue(cl_context ctx, cl_device_id device, cl_command_queue_properties props,
                            cl_int *errcode_ret) {
    record("clCreateCommandQueue properties=" + hex(props));
    cl_int err = CL_SUCCESS;
    cl_command_queue_properties allowed = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    if (config().profiling) allowed |= CL_QUEUE_PROFILING_ENABLE;
    std::lock_guard guard(lock());
    if (!valid(ctx, Kind::context)) err = CL_INVALID_CONTEXT;
    else if (device != the_device()) err = CL_INVALID_DEVICE;
    else if (props & ~allowed) err = CL_INVALID_QUEUE_PROPERTIES;
    if (errcode_ret) *errcode_ret = err;
    if (err != CL_SUCCESS) return nullptr;
    auto *q = new _cl_command_queue{};
    q->disp = dispatch();
    q->kind = Kind::queue;
    q->context = ctx;
    q->properties = props;
    ++ctx->refs;
    return q;
}

cl_command_queue CL_API_CALL create_command_queue(cl_context ctx, cl_device_id device,
                                                  cl_command_queue_properties props, cl_int *errcode_ret) {
    return make_queue(ctx, device, props, errcode_ret);
}

cl_command_queue CL_API_CALL create_command_queue_with_properties(cl_context ctx, cl_device_id device,
                                                                  const cl_queue_properties *props,
                                                                  cl_int *errcode_ret) {
    cl_command_queue_properties p = 0;
    for (const cl_queue_properties *it = props; it && *it; it += 2) {
        if (it[0] != CL_QUEUE_PROPERTIES) {
            if (errcode_ret) *errcode_ret = CL_INVALID_VALUE;
            return nullptr;
        }
        p = it[1];
    }
    return make_queue(ctx, device, p, errcode_ret);
}

cl_int CL_API_CALL get_command_queue_info(cl_command_queue q, cl_command_queue_info name, size_t size, void *value,
                                          size_t *size_ret) {
    std::lock_guard guard(lock());
    if (!valid(q, Kind::queue)) return CL_INVALID_COMMAND_QUEUE;
    switch (name) {
    case CL_QUEUE_CONTEXT: return answer_value(q->context, size, value, size_ret);
    case CL_QUEUE_DEVICE: return answer_value(the_device(), size, value, size_ret);
    case CL_QUEUE_REFERENCE_COUNT: return answer_value(q->refs, size, value, size_ret);
    case CL_QUEUE_PROPERTIES: return answer_value(q->properties, size, value, size_ret);
    default: return CL_INVALID_VALUE;
    }
}

cl_int CL_API_CALL get_host_timer(cl_device_id device, cl_ulong *host) {
    if (device != the_device()) return CL_INVALID_DEVICE;
    if (!host) return CL_INVALID_VALUE;
    *host = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::steady_clock::now().time_since_epoch()).count();
    return CL_SUCCESS;
}

cl_int CL_API_CALL get_device_and_host_timer(cl_device_id device, cl_ulong *dev, cl_ulong *host) {
    if (!dev) return CL_INVALID_VALUE;
    cl_int err = get_host_timer(device, host);
    if (err == CL_SUCCESS) *dev = *host;
    return err;
}

cl_int CL_API_CALL unload_platform_compiler(cl_platform_id p) {
    return p == the_platform() ? CL_SUCCESS : CL_INVALID_PLATFORM;
}

void *CL_API_CALL get_extension_function_address_for_platform(cl_platform_id p, const char *name) {
    if (p != the_platform()) return nullptr;
    return extension_function(name);
}

}  // namespace

cl_platform_id the_platform() {
    static _cl_platform_id platform = [] {
        _cl_platform_id p{};
        p.disp = dispatch();
        p.kind = Kind::platform;
        return p;
    }();
    return &platform;
}

cl_device_id the_device() {
    static _cl_device_id device = [] {
        _cl_device_id d{};
        d.disp = dispatch();
        d.kind = Kind::device;
        return d;
    }();
    return &device;
}

void fill_platform_slots(cl_icd_dispatch &d) {
    d.clGetPlatformIDs = get_platform_ids;
    d.clGetPlatformInfo = get_platform_info;
    d.clGetDeviceIDs = get_device_ids;
    d.clGetDeviceInfo = get_device_info;
    d.clRetainDevice = retain_device;
    d.clReleaseDevice = release_device;
    d.clCreateSubDevices = create_sub_devices;
    d.clCreateContext = create_context;
    d.clCreateContextFromType = create_context_from_type;
    d.clRetainContext = retain_context;
    d.clReleaseContext = release_context;
    d.clGetContextInfo = get_context_info;
    d.clSetContextDestructorCallback = set_context_destructor_callback;
    d.clCreateCommandQueue = create_command_queue;
    d.clCreateCommandQueueWithProperties = create_command_queue_with_properties;
    d.clGetCommandQueueInfo = get_command_queue_info;
    d.clGetHostTimer = get_host_timer;
    d.clGetDeviceAndHostTimer = get_device_and_host_timer;
    d.clUnloadPlatformCompiler = unload_platform_compiler;
    d.clGetExtensionFunctionAddressForPlatform = get_extension_function_address_for_platform;
}

}  // namespace testicd

// ---- what the loader looks up by name -------------------------------------------

TESTICD_EXPORT cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint n, cl_platform_id *platforms, cl_uint *num) {
    return testicd::get_platform_ids(n, platforms, num);
}

TESTICD_EXPORT cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id platform, cl_platform_info name, size_t size,
                                                    void *value, size_t *size_ret) {
    return testicd::get_platform_info(platform, name, size, value, size_ret);
}

TESTICD_EXPORT void *CL_API_CALL clGetExtensionFunctionAddress(const char *name) {
    if (name && !std::strcmp(name, "clIcdGetPlatformIDsKHR")) return reinterpret_cast<void *>(&clIcdGetPlatformIDsKHR);
    return testicd::extension_function(name);
}
