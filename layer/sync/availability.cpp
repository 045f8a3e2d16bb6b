#include "layer/sync/availability.hpp"

#include <cstring>

#include "layer/icd/devices.hpp"
#include "layer/icd/profile.hpp"
#include "layer/base/param_answer.hpp"
#include "layer/base/settings.hpp"
#include "layer/sync/fence_source.hpp"

namespace cldmabuf::sync {

SemaphoreMode semaphore_mode() {
    static const SemaphoreMode mode = [] {
        // force: CLDMABUF_DEBUG=semaphores-force, a test's instrument, over the user's auto or off.
        if (debug_on(DebugWord::semaphores_force)) return SemaphoreMode::force;
        const char *v = setting("CLDMABUF_SEMAPHORES");
        if (v && !std::strcmp(v, "off")) return SemaphoreMode::off;
        return SemaphoreMode::automatic;  // unset, auto, or refused by the settings loader with its one line
    }();
    return mode;
}

bool layer_semaphores_on(cl_platform_id platform) {
    switch (semaphore_mode()) {
    case SemaphoreMode::off: return false;
    case SemaphoreMode::force: return true;
    case SemaphoreMode::automatic: break;
    }
    // The ICD's own cl_khr_semaphore, from the platform's profile (logged
    // there once); unknown for an invalid platform, whose own error then
    // answers the application's query.
    const Fact<bool> native = profile_native_semaphores(platform);
    return native.known() && !native.value;
}

bool layer_semaphores_on_device(cl_device_id device) {
    cl_platform_id platform = device_platform(device);
    return platform && layer_semaphores_on(platform);
}

std::vector<std::pair<const char *, cl_version>> semaphore_extensions(cl_platform_id platform) {
    std::vector<std::pair<const char *, cl_version>> out;
    if (!layer_semaphores_on(platform)) return out;
    // cl_khr_semaphore 1.0.0, cl_khr_external_semaphore 1.0.0,
    // cl_khr_external_semaphore_sync_fd 1.0.1 (OpenCL-Docs xml/cl.xml).
    out.emplace_back("cl_khr_semaphore", CL_MAKE_VERSION(1, 0, 0));
    out.emplace_back("cl_khr_external_semaphore", CL_MAKE_VERSION(1, 0, 0));
    out.emplace_back("cl_khr_external_semaphore_sync_fd", CL_MAKE_VERSION(1, 0, 1));
    return out;
}

namespace {

// Binary semaphores; sync_fd import always (any sync_file is waited by
// poll), export only where the layer has a fence to signal.
cl_int answer_semaphore_query(cl_uint name, size_t size, void *value, size_t *size_ret) {
    static const cl_semaphore_type_khr types[] = {CL_SEMAPHORE_TYPE_BINARY_KHR};
    static const cl_external_semaphore_handle_type_khr handles[] = {CL_SEMAPHORE_HANDLE_SYNC_FD_KHR};
    switch (name) {
    case CL_PLATFORM_SEMAPHORE_TYPES_KHR:
    case CL_DEVICE_SEMAPHORE_TYPES_KHR: return answer(types, sizeof types, size, value, size_ret);
    case CL_PLATFORM_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR:
    case CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR: return answer(handles, sizeof handles, size, value, size_ret);
    default:  // the export lists
        return answer(handles, can_export_sync_fd() ? sizeof handles : 0, size, value, size_ret);
    }
}

}  // namespace

bool semaphore_platform_info(cl_platform_id platform, cl_platform_info name, size_t size, void *value,
                             size_t *size_ret, cl_int *err) {
    if (name != CL_PLATFORM_SEMAPHORE_TYPES_KHR && name != CL_PLATFORM_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR &&
        name != CL_PLATFORM_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR)
        return false;
    if (!layer_semaphores_on(platform)) return false;
    *err = answer_semaphore_query(name, size, value, size_ret);
    return true;
}

bool semaphore_device_info(cl_device_id device, cl_device_info name, size_t size, void *value, size_t *size_ret,
                           cl_int *err) {
    if (name != CL_DEVICE_SEMAPHORE_TYPES_KHR && name != CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR &&
        name != CL_DEVICE_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR)
        return false;
    if (!layer_semaphores_on_device(device)) return false;
    *err = answer_semaphore_query(name, size, value, size_ret);
    return true;
}

bool hand_out_semaphore_functions(cl_platform_id platform, bool icd_answered) {
    if (semaphore_mode() == SemaphoreMode::off) return false;
    if (platform) return layer_semaphores_on(platform);
    // No platform named: the ICD's own where it answers, unless forced.
    return semaphore_mode() == SemaphoreMode::force || !icd_answered;
}

}  // namespace cldmabuf::sync
