#include "layer/sync/availability.hpp"

#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "layer/core/dispatch.hpp"
#include "layer/core/extension_list.hpp"
#include "layer/base/log.hpp"
#include "layer/base/param_answer.hpp"
#include "layer/base/settings.hpp"
#include "layer/sync/fence_source.hpp"

namespace cldmabuf::sync {
namespace {


bool icd_has_semaphores(cl_platform_id platform) {
    size_t bytes = 0;
    if (next().clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, 0, nullptr, &bytes) != CL_SUCCESS || !bytes)
        return false;
    std::string list(bytes, '\0');
    if (next().clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, bytes, list.data(), nullptr) != CL_SUCCESS)
        return false;
    list.resize(std::strlen(list.c_str()));
    return extension_listed(list, "cl_khr_semaphore");
}

}  // namespace

SemaphoreMode semaphore_mode() {
    static const SemaphoreMode mode = [] {
        const char *v = setting("CLDMABUF_SEMAPHORES");
        if (!v || !*v || !std::strcmp(v, "auto")) return SemaphoreMode::automatic;
        if (!std::strcmp(v, "force")) return SemaphoreMode::force;
        if (!std::strcmp(v, "off")) return SemaphoreMode::off;
        return SemaphoreMode::automatic;  // the settings loader refused it with its one line
    }();
    return mode;
}

bool layer_semaphores_on(cl_platform_id platform) {
    switch (semaphore_mode()) {
    case SemaphoreMode::off: return false;
    case SemaphoreMode::force: return true;
    case SemaphoreMode::automatic: break;
    }
    if (!platform) return false;
    static std::mutex m;
    static std::map<cl_platform_id, bool> *cache = new std::map<cl_platform_id, bool>;
    {
        std::lock_guard<std::mutex> l(m);
        if (auto it = cache->find(platform); it != cache->end()) return it->second;
    }
    // An invalid platform is not cached: the ICD's own error answers the query.
    cl_int err = next().clGetPlatformInfo(platform, CL_PLATFORM_PROFILE, 0, nullptr, nullptr);
    if (err != CL_SUCCESS) return false;
    const bool ours = !icd_has_semaphores(platform);
    LOG_INFO("semaphores: %s", ours ? "the ICD has no cl_khr_semaphore: the layer's" : "the ICD's own");
    std::lock_guard<std::mutex> l(m);
    (*cache)[platform] = ours;
    return ours;
}

bool layer_semaphores_on_device(cl_device_id device) {
    cl_platform_id platform = nullptr;
    if (next().clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr) != CL_SUCCESS)
        return false;
    return layer_semaphores_on(platform);
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
