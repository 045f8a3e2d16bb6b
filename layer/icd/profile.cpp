#include "layer/icd/profile.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>

#include "layer/base/log.hpp"
#include "layer/base/settings.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/core/extension_list.hpp"
#include "layer/core/step_poll.hpp"
#include "layer/icd/devices.hpp"

namespace cldmabuf {
namespace {

// The one lock of every profile.  ICD calls are made outside it: a fact is
// learned first, then stored (the first store wins, as the caches did).
std::mutex profiles_mutex;
// Never destroyed: read by the layer's own threads until the process ends.
auto *platforms = new std::map<cl_platform_id, PlatformProfile>;
auto *devices = new std::map<cl_device_id, DeviceProfile>;

PlatformProfile &platform_entry(cl_platform_id platform) {
    PlatformProfile &p = (*platforms)[platform];
    p.platform = platform;
    return p;
}

// Under the lock.  `platform` of a new entry is asked before the lock.
DeviceProfile &device_entry(cl_device_id root, cl_platform_id platform) {
    DeviceProfile &d = (*devices)[root];
    d.device = root;
    if (!d.platform) d.platform = platform;
    return d;
}

cl_version parse_version(const std::string &text) {
    unsigned major = 0, minor = 0;
    if (std::sscanf(text.c_str(), "OpenCL %u.%u", &major, &minor) != 2) return 0;
    return CL_MAKE_VERSION(major, minor, 0);
}

// "OpenCL 3.0 PoCL 3.1+debian ..." names PoCL.
bool names_pocl(const std::string &version) { return version.find("PoCL ") != std::string::npos; }

// Records the identity strings (asked of the ICD) where they were read.
void record_identity(PlatformProfile &p, const std::string &name, const std::string &version) {
    if (!name.empty() && !p.name.known()) p.name = {name, FactSource::icd};
    if (!version.empty() && !p.version.known()) p.version = {version, FactSource::icd};
    // Which ICD it is needs both strings (NVIDIA is named, PoCL versioned).
    if (!p.kind.known() && p.name.known() && p.version.known())
        p.kind = {icd_kind_of(p.name.value, p.version.value), FactSource::icd};
}

// How long a marker the device holds is watched.  Tuned on PoCL 3.1, which
// completes a marker asynchronously even on an idle queue (within a
// microsecond; yielding, 600 of 600 within 50 us at load 7 on 2 cores), and
// used for every ICD: an ICD that reports a marker behind a running kernel
// as CL_SUBMITTED costs the caller at most this.  The 64 looks are for a
// slow machine (the VM lane's TCG), where the ICD's thread is slower by the
// same factor as each look.
constexpr MarkerTiming kMarkerTiming{std::chrono::microseconds(50), 64};

FailureMode failure_mode_of_queue(cl_command_queue queue) {
    cl_platform_id platform = queue_platform(queue);
    if (!platform) return FailureMode::sidetable;
    return profile_failure_mode(platform);
}

bool step_poll_of_queue(cl_command_queue queue) {
    cl_platform_id platform = queue_platform(queue);
    return platform && profile_step_poll(platform);
}

}  // namespace

const char *fact_source_name(FactSource source) {
    switch (source) {
    case FactSource::unknown: return "not known yet";
    case FactSource::icd: return "asked of the ICD";
    case FactSource::chosen: return "chosen from the ICD's identity";
    case FactSource::probe: return "measured by a probe";
    case FactSource::setting: return "set by a setting";
    }
    return "?";
}

const char *icd_kind_name(IcdKind kind) {
    switch (kind) {
    case IcdKind::pocl: return "PoCL";
    case IcdKind::rusticl: return "rusticl";
    case IcdKind::neo: return "Intel NEO";
    case IcdKind::nvidia: return "NVIDIA";
    case IcdKind::other: return "other";
    }
    return "?";
}

// The same tests as decide_failure_mode (layer/core/failed_events.cpp).
IcdKind icd_kind_of(const std::string &name, const std::string &version) {
    if (name.find("NVIDIA") != std::string::npos) return IcdKind::nvidia;
    if (name.find("Intel(R) OpenCL") != std::string::npos && name.find("Graphics") != std::string::npos)
        return IcdKind::neo;
    if (names_pocl(version)) return IcdKind::pocl;
    if (name == "rusticl") return IcdKind::rusticl;
    return IcdKind::other;
}

// ---- platform facts -------------------------------------------------------------------

cl_version profile_platform_version(cl_platform_id platform) {
    {
        std::lock_guard lock(profiles_mutex);
        if (auto it = platforms->find(platform); it != platforms->end() && it->second.slots_version.known())
            return it->second.slots_version.value;
    }
    const std::string text = platform_string(platform, CL_PLATFORM_VERSION);
    if (text.empty()) return 0;
    const cl_version version = parse_version(text);
    std::lock_guard lock(profiles_mutex);
    PlatformProfile &p = platform_entry(platform);
    record_identity(p, {}, text);
    if (!p.slots_version.known()) p.slots_version = {version, FactSource::icd};
    return p.slots_version.value;
}

FailureMode profile_failure_mode(cl_platform_id platform) {
    {
        std::lock_guard lock(profiles_mutex);
        if (auto it = platforms->find(platform); it != platforms->end() && it->second.failure_mode.known())
            return it->second.failure_mode.value;
    }
    const std::string name = platform_string(platform, CL_PLATFORM_NAME);
    const std::string version = platform_string(platform, CL_PLATFORM_VERSION);
    const char *forced = setting("CLDMABUF_FAILED_EVENTS");
    std::string why;
    const FailureMode mode = decide_failure_mode(name, version, forced, &why);
    const bool by_setting =
        forced && (std::string(forced) == "propagate" || std::string(forced) == "sidetable");
    std::lock_guard lock(profiles_mutex);
    PlatformProfile &p = platform_entry(platform);
    record_identity(p, name, version);
    if (p.failure_mode.known()) return p.failure_mode.value;
    p.failure_mode = {mode, by_setting ? FactSource::setting : FactSource::chosen};
    p.failure_why = why;
    LOG_INFO("failed host steps on \"%s\" (%s): %s (%s)", name.c_str(), version.c_str(),
             mode == FailureMode::propagate ? "propagate to the ICD" : "side table", why.c_str());
    return mode;
}

bool profile_step_poll(cl_platform_id platform) {
    {
        std::lock_guard lock(profiles_mutex);
        if (auto it = platforms->find(platform); it != platforms->end() && it->second.step_poll.known())
            return it->second.step_poll.value;
    }
    const std::string name = platform_string(platform, CL_PLATFORM_NAME);
    const char *forced = setting("CLDMABUF_STEP_POLL");
    std::string why;
    const bool poll = decide_step_poll(name, forced, &why);
    const bool by_setting = forced && (std::string(forced) == "on" || std::string(forced) == "off");
    std::lock_guard lock(profiles_mutex);
    PlatformProfile &p = platform_entry(platform);
    if (p.step_poll.known()) return p.step_poll.value;
    p.step_poll = {poll, by_setting ? FactSource::setting : FactSource::chosen};
    LOG_INFO("host steps on \"%s\": %s (%s)", name.c_str(),
             poll ? "their markers' status polled as well as their callbacks" : "their markers' callbacks",
             why.c_str());
    return poll;
}

Fact<bool> profile_native_semaphores(cl_platform_id platform) {
    if (!platform) return {};
    {
        std::lock_guard lock(profiles_mutex);
        if (auto it = platforms->find(platform); it != platforms->end() && it->second.native_semaphores.known())
            return it->second.native_semaphores;
    }
    // An invalid platform is not recorded: the ICD's own error answers the query.
    if (next().clGetPlatformInfo(platform, CL_PLATFORM_PROFILE, 0, nullptr, nullptr) != CL_SUCCESS) return {};
    const bool native = platform_has_extension(platform, "cl_khr_semaphore");
    std::lock_guard lock(profiles_mutex);
    PlatformProfile &p = platform_entry(platform);
    if (!p.native_semaphores.known()) {
        p.native_semaphores = {native, FactSource::icd};
        LOG_INFO("semaphores: %s", native ? "the ICD's own" : "the ICD has no cl_khr_semaphore: the layer's");
    }
    return p.native_semaphores;
}

namespace {
// Both GL/EGL sharing facts {egl_image, gl_sharing}, asked once per
// platform (even when the platform cannot answer: the extension string does
// not change).
std::pair<bool, bool> sharing_facts(cl_platform_id platform) {
    {
        std::lock_guard lock(profiles_mutex);
        if (auto it = platforms->find(platform); it != platforms->end() && it->second.native_gl_sharing.known())
            return {it->second.native_egl_image.value, it->second.native_gl_sharing.value};
    }
    bool egl_image = false, gl_sharing = false;
    if (platform) {
        const std::string list = platform_string(platform, CL_PLATFORM_EXTENSIONS);
        egl_image = extension_listed(list, "cl_khr_egl_image");
        gl_sharing = extension_listed(list, "cl_khr_gl_sharing");
    }
    std::lock_guard lock(profiles_mutex);
    PlatformProfile &p = platform_entry(platform);
    if (!p.native_gl_sharing.known()) {
        p.native_egl_image = {egl_image, FactSource::icd};
        p.native_gl_sharing = {gl_sharing, FactSource::icd};
    }
    return {p.native_egl_image.value, p.native_gl_sharing.value};
}
}  // namespace

bool profile_native_egl_image(cl_platform_id platform) { return sharing_facts(platform).first; }
bool profile_native_gl_sharing(cl_platform_id platform) { return sharing_facts(platform).second; }

MarkerTiming profile_marker_timing(cl_platform_id platform) {
    if (!platform) return kMarkerTiming;
    std::lock_guard lock(profiles_mutex);
    PlatformProfile &p = platform_entry(platform);
    if (!p.marker_timing.known()) p.marker_timing = {kMarkerTiming, FactSource::chosen};
    return p.marker_timing.value;
}

void profile_learn_platform(cl_platform_id platform) {
    const std::string vendor = platform_string(platform, CL_PLATFORM_VENDOR);
    {
        std::lock_guard lock(profiles_mutex);
        PlatformProfile &p = platform_entry(platform);
        if (!vendor.empty() && !p.vendor.known()) p.vendor = {vendor, FactSource::icd};
        record_identity(p, platform_string(platform, CL_PLATFORM_NAME), platform_string(platform, CL_PLATFORM_VERSION));
    }
    profile_platform_version(platform);
    profile_failure_mode(platform);
    profile_native_semaphores(platform);
    sharing_facts(platform);
    profile_marker_timing(platform);
}

// ---- device facts ---------------------------------------------------------------------

namespace {

// The ICD's answer (next() is below the layer's query overrides); an error
// other than CL_INVALID_DEVICE means it lists none (no cl_khr_external_memory).
Fact<std::vector<cl_external_memory_handle_type_khr>> ask_import_handle_types(cl_device_id device) {
    using Types = std::vector<cl_external_memory_handle_type_khr>;
    size_t bytes = 0;
    cl_int err = next().clGetDeviceInfo(device, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, 0, nullptr, &bytes);
    if (err == CL_INVALID_DEVICE) return {};
    Types types(err == CL_SUCCESS ? bytes / sizeof(cl_external_memory_handle_type_khr) : 0);
    if (!types.empty() && next().clGetDeviceInfo(device, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR,
                                                 types.size() * sizeof types[0], types.data(), nullptr) != CL_SUCCESS)
        types.clear();
    return {std::move(types), FactSource::icd};
}

}  // namespace

bool profile_imports_handle_type(cl_device_id device, cl_external_memory_handle_type_khr type) {
    const cl_device_id root = root_device_of(device);
    auto lists = [type](const std::vector<cl_external_memory_handle_type_khr> &types) {
        return std::find(types.begin(), types.end(), type) != types.end();
    };
    {
        std::lock_guard lock(profiles_mutex);
        if (auto it = devices->find(root); it != devices->end() && it->second.import_handle_types.known())
            return lists(it->second.import_handle_types.value);
    }
    Fact<std::vector<cl_external_memory_handle_type_khr>> asked = ask_import_handle_types(root);
    if (!asked.known()) return false;
    const cl_platform_id platform = device_platform(root);
    std::lock_guard lock(profiles_mutex);
    auto &fact = device_entry(root, platform).import_handle_types;
    if (!fact.known()) fact = std::move(asked);
    return lists(fact.value);
}

std::optional<ZeroCopyVerdict> recorded_zero_copy(cl_device_id device, ExporterKind exporter) {
    const cl_device_id root = root_device_of(device);
    std::lock_guard lock(profiles_mutex);
    auto it = devices->find(root);
    if (it == devices->end()) return std::nullopt;
    auto f = it->second.zero_copy.find(exporter);
    if (f == it->second.zero_copy.end() || !f->second.known()) return std::nullopt;
    return f->second.value;
}

void record_zero_copy(cl_device_id device, ExporterKind exporter, ZeroCopyVerdict verdict, FactSource source) {
    const cl_device_id root = root_device_of(device);
    const cl_platform_id platform = device_platform(root);
    std::lock_guard lock(profiles_mutex);
    device_entry(root, platform).zero_copy.emplace(exporter, Fact<ZeroCopyVerdict>{verdict, source});
}

std::optional<bool> recorded_route_in_place(cl_device_id device, Route route) {
    const cl_device_id root = root_device_of(device);
    std::lock_guard lock(profiles_mutex);
    auto it = devices->find(root);
    if (it == devices->end()) return std::nullopt;
    auto f = it->second.route_in_place.find(route);
    if (f == it->second.route_in_place.end() || !f->second.known()) return std::nullopt;
    return f->second.value;
}

void record_route_in_place(cl_device_id device, Route route, bool in_place) {
    const cl_device_id root = root_device_of(device);
    const cl_platform_id platform = device_platform(root);
    std::lock_guard lock(profiles_mutex);
    device_entry(root, platform).route_in_place[route] = {in_place, FactSource::probe};
}

namespace {
bool record_refusal(cl_device_id device, Fact<bool> DeviceProfile::*fact) {
    const cl_device_id root = root_device_of(device);
    const cl_platform_id platform = device_platform(root);
    std::lock_guard lock(profiles_mutex);
    Fact<bool> &f = device_entry(root, platform).*fact;
    if (f.known() && f.value) return false;
    f = {true, FactSource::probe};
    return true;
}
}  // namespace

bool record_staging_refused(cl_device_id device) { return record_refusal(device, &DeviceProfile::staging_refused); }
bool record_registration_refused(cl_device_id device) {
    return record_refusal(device, &DeviceProfile::registration_refused);
}

// ---- lookups, snapshot ----------------------------------------------------------------

cl_platform_id queue_platform(cl_command_queue queue) {
    cl_device_id device = queue_device(queue);
    return device ? device_platform(device) : nullptr;
}

void install_icd_profile() {
    install_failure_mode_source(failure_mode_of_queue);
    install_step_poll_source(step_poll_of_queue);
}

ProfileSnapshot profile_snapshot() {
    ProfileSnapshot s;
    std::lock_guard lock(profiles_mutex);
    for (const auto &[_, p] : *platforms) s.platforms.push_back(p);
    for (const auto &[_, d] : *devices) s.devices.push_back(d);
    return s;
}

void profile_reset_for_tests() {
    std::lock_guard lock(profiles_mutex);
    platforms->clear();
    devices->clear();
}

}  // namespace cldmabuf
