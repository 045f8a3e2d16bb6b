#include "tools/info/icd_profile.hpp"

#include <string>

#include "layer/core/dispatch.hpp"
#include "layer/dmabuf/exporter.hpp"
#include "layer/icd/devices.hpp"
#include "layer/icd/profile.hpp"

namespace cldmabuf::info {
namespace {

// The ICD's own table: the first word of every ICD object (cl_khr_icd).
// Only its OpenCL 1.0 query slots are read, which every ICD has.
const cl_icd_dispatch *icd_table(const void *object) {
    return object ? *static_cast<const cl_icd_dispatch *const *>(object) : nullptr;
}

// Points this process's copy of the layer's next() at the ICD behind
// `object` for the profile's queries, and back.
class AskTheIcd {
public:
    explicit AskTheIcd(const void *object) : saved_(dispatch_tables::guarded_next) {
        const cl_icd_dispatch *t = icd_table(object);
        ok_ = t && t->clGetPlatformInfo && t->clGetDeviceInfo;
        if (!ok_) return;
        dispatch_tables::guarded_next.clGetPlatformInfo = t->clGetPlatformInfo;
        dispatch_tables::guarded_next.clGetDeviceInfo = t->clGetDeviceInfo;
        dispatch_tables::guarded_next.clGetCommandQueueInfo = t->clGetCommandQueueInfo;
    }
    ~AskTheIcd() { dispatch_tables::guarded_next = saved_; }
    bool ok() const { return ok_; }

private:
    cl_icd_dispatch saved_;
    bool ok_ = false;
};

template <typename T>
Json fact(const Fact<T> &f, Json value) {
    Json j = Json::object();
    if (!f.known()) {
        j.set("value", "unknown");
    } else {
        j.set("value", std::move(value));
    }
    j.set("from", fact_source_name(f.source));
    return j;
}

std::string version_text(cl_version v) {
    return std::to_string(CL_VERSION_MAJOR(v)) + "." + std::to_string(CL_VERSION_MINOR(v));
}

const PlatformProfile *find_platform(const ProfileSnapshot &s, cl_platform_id p) {
    for (const auto &e : s.platforms)
        if (e.platform == p) return &e;
    return nullptr;
}

const DeviceProfile *find_device(const ProfileSnapshot &s, cl_device_id d) {
    for (const auto &e : s.devices)
        if (e.device == d) return &e;
    return nullptr;
}

}  // namespace

Json platform_profile(cl_platform_id platform) {
    AskTheIcd icd(platform);
    if (!icd.ok()) return Json();
    profile_learn_platform(platform);
    const ProfileSnapshot s = profile_snapshot();
    const PlatformProfile *p = find_platform(s, platform);
    if (!p) return Json();
    Json j = Json::object();
    j.set("icd", fact(p->kind, icd_kind_name(p->kind.value)));
    j.set("slots_version", fact(p->slots_version, version_text(p->slots_version.value)));
    Json failure = fact(p->failure_mode, p->failure_mode.value == FailureMode::propagate ? "propagate to the ICD"
                                                                                         : "side table");
    if (p->failure_mode.known()) failure.set("why", p->failure_why);
    j.set("failed_host_steps", failure);
    j.set("native_semaphores", fact(p->native_semaphores, p->native_semaphores.value));
    j.set("native_egl_image", fact(p->native_egl_image, p->native_egl_image.value));
    j.set("native_gl_sharing", fact(p->native_gl_sharing, p->native_gl_sharing.value));
    const MarkerTiming &t = p->marker_timing.value;
    j.set("marker_watch", fact(p->marker_timing, std::to_string(t.look.count()) + " us, at least " +
                                                     std::to_string(t.looks) + " looks"));
    return j;
}

Json device_profile(cl_device_id device) {
    AskTheIcd icd(device);
    if (!icd.ok()) return Json();
    const cl_device_id root = root_device_of(device);
    const ProfileSnapshot s = profile_snapshot();
    const DeviceProfile *d = find_device(s, root);
    Json j = Json::object();
    j.set("measured", d != nullptr);
    if (!d) {
        j.set("note", "zero-copy, image routes and staging are measured by the layer on a device's first import, "
                      "in the application's process");
        return j;
    }
    Json zero_copy = Json::object();
    for (const auto &[kind, f] : d->zero_copy)
        zero_copy.set(exporter_kind_name(kind),
                      fact(f, f.value == ZeroCopyVerdict::in_place ? "in place" : "the ICD keeps its own copy"));
    j.set("zero_copy", zero_copy);
    Json routes = Json::object();
    for (const auto &[route, f] : d->route_in_place)
        routes.set(route_name(route), fact(f, f.value ? "shares host memory" : "keeps its own copy"));
    j.set("image_routes", routes);
    j.set("staging_refused", fact(d->staging_refused, d->staging_refused.value));
    j.set("registration_refused", fact(d->registration_refused, d->registration_refused.value));
    return j;
}

}  // namespace cldmabuf::info
