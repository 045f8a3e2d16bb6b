// What the layer adds to platform and device queries.  The plain and
// _WITH_VERSION lists are patched the same way (the CTS's
// extended_versioning test compares them).  The extension functions the
// layer hands out by name are listed in layer/entry/dispatch_table.cpp.
#include "layer/entry/extensions.hpp"
#include "layer/icd/devices.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "layer/base/param_answer.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/base/name_filter.hpp"
#include "layer/core/step_events.hpp"
#include "layer/core/worker.hpp"
#include "layer/egl/egl.hpp"
#include "layer/core/registry.hpp"
#include "layer/dmabuf/mapping_cache.hpp"
#include "layer/base/stats.hpp"
#include "layer/core/extension_list.hpp"
#include "layer/sync/availability.hpp"
#include "layer/va/entry_points.hpp"
#include "CL/cl_ext_cldmabuf.h"

namespace cldmabuf {
namespace {

struct AddedExtension {
    const char *name;
    cl_version version;
};
// cl_khr_external_memory 1.0.1 and cl_khr_external_memory_dma_buf 1.0.0
// (OpenCL-Docs xml/cl.xml revisions).
const AddedExtension added[] = {
    {"cl_khr_external_memory", CL_MAKE_VERSION(1, 0, 1)},
    {"cl_khr_external_memory_dma_buf", CL_MAKE_VERSION(1, 0, 0)},
    // clImportMemoryARM with CL_IMPORT_TYPE_DMA_BUF_ARM (layer/import/arm.cpp).
    {"cl_arm_import_memory", CL_MAKE_VERSION(1, 0, 0)},
    {"cl_arm_import_memory_dma_buf", CL_MAKE_VERSION(1, 0, 0)},
};
// Plus what layer/egl adds when EGL can be loaded (cl_khr_egl_image, cl_khr_gl_sharing).
// Plus layer/sync's semaphores on a platform whose ICD has none.
std::vector<AddedExtension> all_added(cl_platform_id platform) {
    std::vector<AddedExtension> list(std::begin(added), std::end(added));
    std::vector<std::pair<const char *, cl_version>> egl;
    egl_added_extensions(&egl);
    for (const auto &[name, version] : egl) list.push_back({name, version});
    for (const auto &[name, version] : sync::semaphore_extensions(platform)) list.push_back({name, version});
    // cl_intel_va_api_media_sharing over dma-buf (layer/va/) where libva loads;
    // an ICD that lists it itself keeps its own (the name is added only once).
    // With it the format query of cl_intel_sharing_format_query (1.0.0), its VA-API function only.
    if (va::offered()) {
        list.push_back({"cl_intel_va_api_media_sharing", CL_MAKE_VERSION(1, 0, 0)});
        list.push_back({"cl_intel_sharing_format_query", CL_MAKE_VERSION(1, 0, 0)});
    }
    return list;
}
const cl_external_memory_handle_type_khr import_types[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR};

// The ICD's handle types (none when it does not answer) followed by ours
// that it lacks: never take away a type the ICD imports itself.
template <typename Query>
cl_int union_handle_types(Query query, cl_uint name, bool add_ours, size_t size, void *value, size_t *size_ret) {
    std::vector<cl_external_memory_handle_type_khr> list;
    size_t bytes = 0;
    if (query(name, 0, nullptr, &bytes) == CL_SUCCESS && bytes) {
        list.resize(bytes / sizeof(cl_external_memory_handle_type_khr));
        if (query(name, bytes, list.data(), nullptr) != CL_SUCCESS) list.clear();
    }
    if (add_ours)
        for (auto t : import_types)
            if (std::find(list.begin(), list.end(), t) == list.end()) list.push_back(t);
    return answer(list.data(), list.size() * sizeof(cl_external_memory_handle_type_khr), size, value, size_ret);
}

// Fetches a string/array query through `query`, then appends our entries.
template <typename Query>
cl_int patched_extension_string(Query query, cl_platform_id platform, cl_uint name, size_t size, void *value,
                                size_t *size_ret) {
    size_t bytes = 0;
    cl_int err = query(name, 0, nullptr, &bytes);
    if (err != CL_SUCCESS) return err;
    std::string list(bytes, '\0');
    if (bytes && (err = query(name, bytes, list.data(), nullptr)) != CL_SUCCESS) return err;
    list.resize(std::strlen(list.c_str()));
    for (const auto &ext : all_added(platform)) {
        if (extension_listed(list, ext.name)) continue;
        if (!list.empty() && list.back() != ' ') list += ' ';
        list += ext.name;
    }
    return answer(list.c_str(), list.size() + 1, size, value, size_ret);
}

template <typename Query>
cl_int patched_extension_versions(Query query, cl_platform_id platform, cl_uint name, size_t size, void *value,
                                  size_t *size_ret) {
    size_t bytes = 0;
    cl_int err = query(name, 0, nullptr, &bytes);
    if (err != CL_SUCCESS) return err;
    std::vector<cl_name_version> list(bytes / sizeof(cl_name_version));
    if (bytes && (err = query(name, bytes, list.data(), nullptr)) != CL_SUCCESS) return err;
    // One entry per extension.  Where the ICD reports one of ours too, the
    // higher version wins: the layer answers every query and entry point of
    // the extensions it adds (handle-type queries incl. 1.0.1's
    // ASSUME_LINEAR_IMAGES, properties, acquire/release) and passes the rest
    // to the ICD, so an ICD's 1.0.0 plus the layer is a 1.0.1
    // implementation, and an ICD newer than the layer keeps its own number
    // (the layer forwards everything it does not own).  The extension
    // string lists the name once either way.
    for (const auto &ext : all_added(platform)) {
        bool present = false;
        for (auto &entry : list) {
            if (std::strcmp(entry.name, ext.name)) continue;
            present = true;
            if (entry.version < ext.version) entry.version = ext.version;
        }
        if (present) continue;
        cl_name_version entry{};
        entry.version = ext.version;
        std::strncpy(entry.name, ext.name, sizeof entry.name - 1);
        list.push_back(entry);
    }
    return answer(list.data(), list.size() * sizeof(cl_name_version), size, value, size_ret);
}

// CLDMABUF_DEBUG=worker-manual's controls (tests/README.md): the held worker
// jobs, and run one.  Test-only values; without the word they reach the ICD.
constexpr cl_platform_info kHeldWorkerJobs = 0x7E70;
constexpr cl_platform_info kRunHeldWorkerJob = 0x7E71;

bool held_worker_control(cl_platform_info name, size_t size, void *value, size_t *size_ret, cl_int *err) {
    if ((name != kHeldWorkerJobs && name != kRunHeldWorkerJob) || !worker_manual()) return false;
    if (name == kHeldWorkerJobs) {
        const std::string jobs = held_worker_jobs();
        *err = answer(jobs.c_str(), jobs.size() + 1, size, value, size_ret);
        return true;
    }
    if (!value || size != sizeof(cl_ulong)) {
        *err = CL_INVALID_VALUE;
        return true;
    }
    const auto key = reinterpret_cast<const void *>(static_cast<uintptr_t>(*static_cast<const cl_ulong *>(value)));
    *err = run_held_worker_job(key) ? CL_SUCCESS : CL_INVALID_VALUE;
    if (size_ret) *size_ret = 0;
    return true;
}

}  // namespace

cl_int CL_API_CALL get_platform_info(cl_platform_id platform, cl_platform_info name, size_t size, void *value,
                                     size_t *size_ret) {
    auto query = [platform](cl_uint n, size_t s, void *v, size_t *r) {
        return next().clGetPlatformInfo(platform, n, s, v, r);
    };
    if (cl_int err; held_worker_control(name, size, value, size_ret, &err)) return err;
    if (cl_int err; sync::semaphore_platform_info(platform, name, size, value, size_ret, &err)) return err;
    switch (name) {
    case CL_PLATFORM_EXTENSIONS: return patched_extension_string(query, platform, name, size, value, size_ret);
    case CL_PLATFORM_EXTENSIONS_WITH_VERSION:
        return patched_extension_versions(query, platform, name, size, value, size_ret);
    case CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR: {
        // Validate the platform through the ICD before answering for it.
        cl_int err = next().clGetPlatformInfo(platform, CL_PLATFORM_PROFILE, 0, nullptr, nullptr);
        if (err != CL_SUCCESS) return err;
        return union_handle_types(query, name, true, size, value, size_ret);
    }
    case CL_PLATFORM_STATS_CLDMABUF: {
        cl_int err = next().clGetPlatformInfo(platform, CL_PLATFORM_PROFILE, 0, nullptr, nullptr);
        if (err != CL_SUCCESS) return err;
        const Stats &s = stats();
        const cl_ulong counters[CL_STATS_COUNT_CLDMABUF] = {s.blt_copies,       s.copy_in_bytes,
                                                            s.copy_out_bytes,   s.staged_bytes,
                                                            s.staged_transfers, s.direct_transfers,
                                                            s.staging_fallbacks, live_workers(),
                                                            s.fast_handoffs,    s.queued_handoffs,
                                                            s.blt_fence_in_batches, s.blt_fence_out_batches,
                                                            s.blt_fence_in_fallbacks, s.quiet_handoffs,
                                                            imports().size(),   event_types().size(),
                                                            s.fence_timeouts,   s.release_fences_expired,
                                                            s.alias_merges, mapping_cache_stats().parked,
                                                            s.registrations_made, s.registrations_reused,
                                                            s.steps_polled, step_callback_records()};
        // The array only grows at its end: a caller built with an older
        // header (13 counters, before quiet_handoffs) gets those it knows.
        constexpr size_t first_header_bytes = 13 * sizeof(cl_ulong);
        if (value && size >= first_header_bytes && size < sizeof counters && size % sizeof(cl_ulong) == 0) {
            std::memcpy(value, counters, size);
            if (size_ret) *size_ret = sizeof counters;
            return CL_SUCCESS;
        }
        return answer(counters, sizeof counters, size, value, size_ret);
    }
    default: return next().clGetPlatformInfo(platform, name, size, value, size_ret);
    }
}

namespace {

// The device names the layer answers (the rest is the ICD's).
constexpr cl_uint layer_device_names[] = {CL_DEVICE_EXTENSIONS, CL_DEVICE_EXTENSIONS_WITH_VERSION,
                                          CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR,
                                          CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR,
                                          CL_DEVICE_SEMAPHORE_TYPES_KHR,  // layer/sync where its semaphores serve
                                          CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR,
                                          CL_DEVICE_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR};
constexpr NameFilter layer_device_name(layer_device_names);

// Out of line, so that the pass-through below needs no stack frame.
[[gnu::noinline]] cl_int answer_device_info(cl_device_id device, cl_device_info name, size_t size, void *value,
                                            size_t *size_ret) {
    auto query = [device](cl_uint n, size_t s, void *v, size_t *r) {
        return next().clGetDeviceInfo(device, n, s, v, r);
    };
    if (cl_int err; sync::semaphore_device_info(device, name, size, value, size_ret, &err)) return err;
    switch (name) {
    case CL_DEVICE_EXTENSIONS:
    case CL_DEVICE_EXTENSIONS_WITH_VERSION: {
        // nullptr when the ICD does not answer: its own error answers the query below.
        cl_platform_id platform = device_platform(device);
        return name == CL_DEVICE_EXTENSIONS
                       ? patched_extension_string(query, platform, name, size, value, size_ret)
                       : patched_extension_versions(query, platform, name, size, value, size_ret);
    }
    case CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR:
    case CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR: {
        cl_int err = next().clGetDeviceInfo(device, CL_DEVICE_TYPE, 0, nullptr, nullptr);
        if (err != CL_SUCCESS) return err;
        if (name == CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR)
            return union_handle_types(query, name, true, size, value, size_ret);
        // Images import linear dma-bufs (layer/import/image.cpp): DMA_BUF
        // assumes linear images on devices with image support, none otherwise.
        cl_bool images = CL_FALSE;
        if (next().clGetDeviceInfo(device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, nullptr) != CL_SUCCESS)
            images = CL_FALSE;
        return union_handle_types(query, name, images, size, value, size_ret);
    }
    default: return next().clGetDeviceInfo(device, name, size, value, size_ret);
    }
}

}  // namespace

// Every other name (CL_DEVICE_TYPE, ...) goes straight down: one table byte
// decides (layer/base/name_filter.hpp).
cl_int CL_API_CALL get_device_info(cl_device_id device, cl_device_info name, size_t size, void *value,
                                   size_t *size_ret) {
    if (layer_device_name.may_be_ours(name)) return answer_device_info(device, name, size, value, size_ret);
    return next().clGetDeviceInfo(device, name, size, value, size_ret);
}

}  // namespace cldmabuf
