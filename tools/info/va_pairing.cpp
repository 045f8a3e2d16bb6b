#include "tools/info/va_pairing.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>

namespace cldmabuf::info {
namespace {

constexpr const char *kVaExt = "cl_intel_va_api_media_sharing";
constexpr cl_uint kVaApiDisplay = 0x4094;       // CL_VA_API_DISPLAY_INTEL
constexpr cl_uint kPreferredDevices = 0x4095;   // CL_PREFERRED_DEVICES_FOR_VA_API_INTEL

using VADisplay = void *;
using GetDisplayDrm = VADisplay (*)(int);
using Initialize = int (*)(VADisplay, int *, int *);
using Terminate = int (*)(VADisplay);
using QueryVendor = const char *(*)(VADisplay);
using DevicesFromAdapter = cl_int(CL_API_CALL *)(cl_platform_id, cl_uint, void *, cl_uint, cl_uint, cl_device_id *,
                                                 cl_uint *);

struct VaDisplay {
    void *libva = nullptr, *libva_drm = nullptr;
    int fd = -1;
    VADisplay dpy = nullptr;
    Terminate terminate = nullptr;
    ~VaDisplay() {
        if (dpy && terminate) terminate(dpy);
        if (fd >= 0) close(fd);
        // libva stays loaded: the layer may hold it too.
    }
};

// The first render node whose VA driver initialises.
bool open_display(VaDisplay *d, Json *out) {
    d->libva = dlopen("libva.so.2", RTLD_NOW | RTLD_LOCAL);
    d->libva_drm = dlopen("libva-drm.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!d->libva || !d->libva_drm) {
        out->set("reason", "libva / libva-drm cannot be loaded");
        return false;
    }
    auto get = reinterpret_cast<GetDisplayDrm>(dlsym(d->libva_drm, "vaGetDisplayDRM"));
    auto init = reinterpret_cast<Initialize>(dlsym(d->libva, "vaInitialize"));
    auto vendor = reinterpret_cast<QueryVendor>(dlsym(d->libva, "vaQueryVendorString"));
    d->terminate = reinterpret_cast<Terminate>(dlsym(d->libva, "vaTerminate"));
    if (!get || !init || !vendor || !d->terminate) {
        out->set("reason", "libva lacks vaGetDisplayDRM / vaInitialize");
        return false;
    }
    std::string tried;
    for (int minor = 128; minor < 136; ++minor) {
        const std::string node = "/dev/dri/renderD" + std::to_string(minor);
        const int fd = open(node.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) continue;
        VADisplay dpy = get(fd);
        int major = 0, min = 0;
        if (dpy && init(dpy, &major, &min) == 0) {
            d->fd = fd;
            d->dpy = dpy;
            out->set("node", node);
            const char *v = vendor(dpy);
            out->set("vendor", v ? v : "");
            return true;
        }
        if (dpy) d->terminate(dpy);
        close(fd);
        tried += (tried.empty() ? "" : ", ") + node;
    }
    out->set("reason", tried.empty() ? "no DRM render node" : "no VA driver initialises on " + tried);
    return false;
}

}  // namespace

Json va_report(const std::vector<ClPlatform> &with, const std::vector<ClPlatform> &icd_only) {
    Json report = Json::object();
    Json display = Json::object();
    VaDisplay d;
    const bool have_display = open_display(&d, &display);
    report.set("display", display);
    Json platforms = Json::array();
    for (size_t i = 0; i < with.size(); ++i) {
        const ClPlatform &p = with[i];
        Json plat = Json::object();
        plat.set("index", static_cast<int>(i));
        const bool listed = has_extension(p.extensions, kVaExt);
        bool icd_has = false;
        for (const ClPlatform &q : icd_only)
            if (q.name == p.name && q.vendor == p.vendor) icd_has |= has_extension(q.extensions, kVaExt);
        plat.set("extension", listed);
        plat.set("by", !listed ? "none" : icd_has ? "icd" : icd_only.empty() ? "unknown" : "layer");
        if (listed && have_display) {
            auto fn = reinterpret_cast<DevicesFromAdapter>(
                clGetExtensionFunctionAddressForPlatform(p.id, "clGetDeviceIDsFromVA_APIMediaAdapterINTEL"));
            cl_uint n = 0;
            const cl_int err = fn ? fn(p.id, kVaApiDisplay, d.dpy, kPreferredDevices, 0, nullptr, &n) : CL_INVALID_OPERATION;
            if (err == CL_SUCCESS && n) {
                std::vector<cl_device_id> ids(n);
                Json paired = Json::array();
                if (fn(p.id, kVaApiDisplay, d.dpy, kPreferredDevices, n, ids.data(), nullptr) == CL_SUCCESS)
                    for (cl_device_id id : ids)
                        for (const ClDevice &dev : p.devices)
                            if (dev.id == id) paired.push(dev.name);
                plat.set("paired", paired);
            } else {
                plat.set("error", static_cast<int>(err));
            }
        }
        platforms.push(plat);
    }
    report.set("platforms", platforms);
    return report;
}

}  // namespace cldmabuf::info
