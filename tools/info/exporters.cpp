#include "tools/info/exporters.hpp"

#include <dlfcn.h>
#include <drm.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "layer/i915/gen9_probe.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/core/pci_address.hpp"
#include "layer/base/settings.hpp"

namespace cldmabuf::info {
namespace {

std::string basename_of(const std::string &path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The kernel driver's own name (DRM_IOCTL_VERSION), e.g. "i915", "vgem".
std::string drm_driver_name(const std::string &node) {
    const int fd = kernel().open(node.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return {};
    char name[64] = {};
    drm_version v{};
    v.name = name;
    v.name_len = sizeof name - 1;
    std::string out;
    if (kernel_ioctl_retry(fd, DRM_IOCTL_VERSION, &v) == 0) out.assign(name, std::min<size_t>(v.name_len, 63));
    kernel().close(fd);
    return out;
}

// The sysfs driver of the node's device: /sys/dev/char/MAJ:MIN/device/driver.
std::string sysfs_driver(const std::string &node) {
    struct stat st {};
    if (kernel().stat(node.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) return {};
    const std::string link =
        "/sys/dev/char/" + std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev)) + "/device/driver";
    const std::string target = kernel().real_path(link.c_str());
    return target.empty() ? std::string() : basename_of(target);
}

// ---- EGL, loaded at run time (no build dependency) ---------------------------

using EGLDisplay = void *;
using EGLBoolean = unsigned;
using EGLint = int32_t;
constexpr EGLint kEglExtensions = 0x3055, kEglVendor = 0x3053, kEglPlatformSurfaceless = 0x31DD;

Json probe_egl_exporter() {
    Json egl = Json::object();
    void *lib = dlopen("libEGL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        egl.set("loaded", false);
        egl.set("dma_buf_export", false);
        egl.set("reason", "libEGL.so.1 cannot be loaded (install libegl1 and a driver, e.g. libegl-mesa0)");
        return egl;
    }
    egl.set("loaded", true);
    auto query = reinterpret_cast<const char *(*)(EGLDisplay, EGLint)>(dlsym(lib, "eglQueryString"));
    auto get_platform_display =
        reinterpret_cast<EGLDisplay (*)(unsigned, void *, const intptr_t *)>(dlsym(lib, "eglGetPlatformDisplay"));
    auto initialize = reinterpret_cast<EGLBoolean (*)(EGLDisplay, EGLint *, EGLint *)>(dlsym(lib, "eglInitialize"));
    auto terminate = reinterpret_cast<EGLBoolean (*)(EGLDisplay)>(dlsym(lib, "eglTerminate"));
    std::string reason;
    bool exports = false;
    const char *client = query ? query(nullptr, kEglExtensions) : nullptr;
    if (!query || !get_platform_display || !initialize || !terminate) {
        reason = "libEGL lacks EGL 1.5 entry points";
    } else if (!client || !std::strstr(client, "EGL_MESA_platform_surfaceless")) {
        reason = "no EGL_MESA_platform_surfaceless (the layer needs a display without a window system)";
    } else {
        EGLDisplay dpy = get_platform_display(kEglPlatformSurfaceless, nullptr, nullptr);
        EGLint major = 0, minor = 0;
        if (!dpy || !initialize(dpy, &major, &minor)) {
            reason = "eglInitialize on the surfaceless platform failed";
        } else {
            const char *vendor = query(dpy, kEglVendor);
            const char *ext = query(dpy, kEglExtensions);
            egl.set("vendor", vendor ? vendor : "");
            egl.set("version", std::to_string(major) + "." + std::to_string(minor));
            exports = ext && std::strstr(ext, "EGL_MESA_image_dma_buf_export");
            if (!exports) reason = "the display has no EGL_MESA_image_dma_buf_export";
            terminate(dpy);
        }
    }
    egl.set("dma_buf_export", exports);
    if (!reason.empty()) egl.set("reason", reason);
    // libEGL stays loaded: Mesa's drivers register atexit handlers.
    return egl;
}

}  // namespace

Json find_exporters(bool probe_egl) {
    Json out = Json::object();
    Json heaps = Json::array();
    std::vector<std::string> names = kernel().list_dir("/dev/dma_heap");
    std::sort(names.begin(), names.end());
    for (const std::string &n : names) heaps.push("/dev/dma_heap/" + n);
    out.set("dma_heaps", heaps);
    struct stat st {};
    out.set("udmabuf", kernel().stat("/dev/udmabuf", &st) == 0);

    Json nodes = Json::array();
    names = kernel().list_dir("/dev/dri");
    std::sort(names.begin(), names.end());
    for (const std::string &n : names) {
        if (n.rfind("renderD", 0) != 0) continue;
        const std::string path = "/dev/dri/" + n;
        Json node = Json::object();
        node.set("node", path);
        std::string drv = drm_driver_name(path);
        node.set("driver", drv.empty() ? sysfs_driver(path) : drv);
        node.set("sysfs_driver", sysfs_driver(path));
        PciAddress pci;
        if (drm_node_pci_address(path, &pci)) node.set("pci", pci_text(pci));
        nodes.push(node);
    }
    out.set("render_nodes", nodes);
    if (probe_egl) {
        out.set("egl", probe_egl_exporter());
    } else {
        Json egl = Json::object();
        egl.set("loaded", false);
        egl.set("dma_buf_export", false);
        egl.set("reason", "not probed (--no-egl)");
        out.set("egl", egl);
    }
    return out;
}

Json find_blitter(i915::Gen9Info *node) {
    *node = i915::Gen9Info{};
    Json out = Json::object();
    const char *blt = setting("CLDMABUF_BLT");
    if (blt && std::strcmp(blt, "off") == 0) {
        out.set("available", false);
        out.set("reason", "turned off by CLDMABUF_BLT=off");
        return out;
    }
    i915::Gen9Info info;
    if (i915::probe_gen9(&info) != 0) {
        out.set("available", false);
        const char *forced = setting("CLDMABUF_BLT_NODE");
        out.set("reason", forced && *forced ? std::string("CLDMABUF_BLT_NODE=") + forced + " is not a usable Gen9 i915 node"
                                            : std::string("no Gen9 (Skylake..Comet Lake) i915 render node with "
                                                          "BLT, softpin, exec fences in /dev/dri"));
        return out;
    }
    kernel().close(info.fd);
    info.fd = -1;
    *node = info;
    out.set("available", true);
    out.set("node", info.path);
    char id[8];
    std::snprintf(id, sizeof id, "0x%04x", info.device_id);
    out.set("device_id", id);
    out.set("platform", info.platform);
    out.set("llc", info.has_llc);
    if (info.has_pci) out.set("pci", pci_text(info.pci));
    return out;
}

}  // namespace cldmabuf::info
