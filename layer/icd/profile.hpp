// What the layer knows of each ICD platform and device, in one place
// (docs/layer-rules.md, "What the layer knows of the ICD").
//
// A platform's profile holds the ICD's identity and the choices made from
// it: its strings, which ICD it is, its version (which 2.x/3.0 slots may be
// called, layer/icd/slots), how a failed host step reaches it, whether it
// has semaphores and GL/EGL sharing of its own, and how long a handoff's
// marker is watched.  These are built here, from next() queries, the first
// time each is read (so each is asked, and logged, once, when a feature
// first needs it).
//
// A device's profile (keyed by the root device: root devices live as long
// as their platform, sub-devices' addresses are reused) holds the external
// memory handle types the ICD imports itself (asked once per device, for the
// native forwarding, layer/import/native) and what a feature's probe
// measured on it: zero-copy per exporter kind
// (import/zero_copy_check), the image routes (import/route_probe), the
// copy route's staging and registration (handoff/staging).  The probes stay
// in their features; they record here and read here, and nothing else
// keeps a per-ICD cache.
//
// Each fact carries where it came from and whether it is known yet; a fact
// that could not be learned (an invalid object, a probe that could not run)
// stays unknown and is asked again next time, as the caches did.  One lock
// guards every profile; no ICD call is made under it.  cldmabuf-info prints
// the profiles (profile_snapshot).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/core/failed_events.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {

// Where a fact came from.
enum class FactSource {
    unknown,  // not learned yet
    icd,      // asked of the ICD (a query answer)
    chosen,   // the layer's choice from the ICD's identity (measured ICDs, docs/layer-rules.md)
    probe,    // measured by a feature's probe
    setting,  // set by a CLDMABUF_* setting
};
const char *fact_source_name(FactSource source);

template <typename T>
struct Fact {
    T value{};
    FactSource source = FactSource::unknown;
    bool known() const { return source != FactSource::unknown; }
};

// Which ICD a platform is, from its name and version strings.
enum class IcdKind { other, pocl, rusticl, neo, nvidia };
const char *icd_kind_name(IcdKind kind);
IcdKind icd_kind_of(const std::string &platform_name, const std::string &platform_version);

// How long the application's thread watches a handoff's marker the device
// already holds (layer/handoff/marker_watch.cpp): at least `looks` looks,
// and for at least `look`.
struct MarkerTiming {
    std::chrono::microseconds look{0};
    int looks = 0;
};

// Whether the ICD used a dma-buf mapping in place (import/zero_copy_check).
enum class ZeroCopyVerdict {
    in_place,  // the device's write showed in the dma-buf's mapping
    copies,    // it did not: the ICD keeps its own copy
    unknown,   // not checkable (read-only fd, the ICD refused the probe)
};

struct PlatformProfile {
    cl_platform_id platform = nullptr;
    Fact<std::string> vendor, name, version;
    Fact<IcdKind> kind;
    Fact<cl_version> slots_version;  // CL_PLATFORM_VERSION as CL_MAKE_VERSION(major, minor, 0)
    Fact<FailureMode> failure_mode;
    std::string failure_why;
    Fact<bool> native_semaphores;  // the ICD lists cl_khr_semaphore
    Fact<bool> native_egl_image;   // the ICD lists cl_khr_egl_image
    Fact<bool> native_gl_sharing;  // the ICD lists cl_khr_gl_sharing
    Fact<MarkerTiming> marker_timing;
    Fact<bool> step_poll;  // host steps' markers polled too (layer/core/step_poll.hpp)
};

struct DeviceProfile {
    cl_device_id device = nullptr;  // the root device
    cl_platform_id platform = nullptr;
    // The ICD's own CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR (empty
    // when it has no cl_khr_external_memory).
    Fact<std::vector<cl_external_memory_handle_type_khr>> import_handle_types;
    std::map<ExporterKind, Fact<ZeroCopyVerdict>> zero_copy;
    std::map<Route, Fact<bool>> route_in_place;
    Fact<bool> staging_refused;       // the ICD refused the copy route's pinned staging
    Fact<bool> registration_refused;  // the ICD refused a USE_HOST_PTR buffer over an import's mapping
};

// ---- platform facts, built here ------------------------------------------------------

// The platform's version; 0 (not recorded) when it cannot be read.
cl_version profile_platform_version(cl_platform_id platform);
// How a failed host step reaches the ICD (decide_failure_mode, logged once
// per platform); the safe sidetable, not recorded, when unreadable.
FailureMode profile_failure_mode(cl_platform_id platform);
// The ICD's own cl_khr_semaphore; unknown for an invalid platform (the
// ICD's own error then answers the application's query).
Fact<bool> profile_native_semaphores(cl_platform_id platform);
// The ICD's own cl_khr_egl_image and cl_khr_gl_sharing.
bool profile_native_egl_image(cl_platform_id platform);
bool profile_native_gl_sharing(cl_platform_id platform);
// The marker watch's bounds for the platform.
MarkerTiming profile_marker_timing(cl_platform_id platform);
// Whether host steps' markers are polled on the platform (decide_step_poll,
// logged once per platform).
bool profile_step_poll(cl_platform_id platform);

// ---- device facts ---------------------------------------------------------------------

// True when the ICD itself imports external memory handles of `type` on
// (root of) `device`: its own CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR,
// below the layer's answer, asked once per root device.  An ICD without
// cl_khr_external_memory imports none (its error answer is recorded as
// such); a device the ICD calls invalid is not recorded.
bool profile_imports_handle_type(cl_device_id device, cl_external_memory_handle_type_khr type);

// Recorded by the features' probes:

// What the zero-copy check found for (root of) `device` and `exporter`, if checked.
std::optional<ZeroCopyVerdict> recorded_zero_copy(cl_device_id device, ExporterKind exporter);
void record_zero_copy(cl_device_id device, ExporterKind exporter, ZeroCopyVerdict verdict, FactSource source);
// What the route probe found for (root of) `device` and `route`, if probed.
std::optional<bool> recorded_route_in_place(cl_device_id device, Route route);
void record_route_in_place(cl_device_id device, Route route, bool in_place);
// The staging's refusals: true the first time for the device (its one log line).
bool record_staging_refused(cl_device_id device);
bool record_registration_refused(cl_device_id device);

// ---- the shared lookups ---------------------------------------------------------------

// The platform of a queue's device (nullptr when the ICD does not answer).
cl_platform_id queue_platform(cl_command_queue queue);
// Installs the profile as the host steps' failure-mode source
// (core/failed_events' failure_mode(queue)).  Called by init_dispatch.
void install_icd_profile();

// Every profile built so far, for cldmabuf-info and the tests.
struct ProfileSnapshot {
    std::vector<PlatformProfile> platforms;
    std::vector<DeviceProfile> devices;
};
ProfileSnapshot profile_snapshot();
// Builds every platform fact of `platform` now (cldmabuf-info).
void profile_learn_platform(cl_platform_id platform);
// Forgets every profile (the unit tests only: handles are never reused).
void profile_reset_for_tests();

}  // namespace cldmabuf
