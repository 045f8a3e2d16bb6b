#include "layer/egl/display_devices.hpp"

#include "layer/core/dispatch.hpp"
#include "layer/base/log.hpp"

namespace cldmabuf {

DisplayDevice display_device(const EglApi &egl, EGLDisplay dpy) {
    DisplayDevice d;
    d.software = true;
    // Mesa's surfaceless platform names the first render node as the
    // display's device (measured: vgem's renderD128) even when it then
    // renders with llvmpipe; the driver's name says what really renders.
    if (egl.GetDisplayDriverName && egl_display_has(egl, dpy, "EGL_MESA_query_driver")) {
        if (const char *name = egl.GetDisplayDriverName(dpy)) d.driver = name;
        egl.GetError();
    }
    EGLAttrib attrib = 0;
    if (!egl.QueryDisplayAttribEXT || !egl.QueryDeviceStringEXT ||
        !egl.QueryDisplayAttribEXT(dpy, EGL_DEVICE_EXT, &attrib) || !attrib) {
        egl.GetError();
        LOG_DEBUG("EGL display %p: no EGL device (EGL_EXT_device_query), driver %s: software", dpy,
                  d.driver.empty() ? "(unknown)" : d.driver.c_str());
        return d;
    }
    auto dev = reinterpret_cast<EGLDeviceEXT>(attrib);
    const char *ext = egl.QueryDeviceStringEXT(dev, EGL_EXTENSIONS);
    std::string exts = ext ? std::string(" ") + ext + " " : "";
    d.software = exts.find(" EGL_MESA_device_software ") != std::string::npos;
    const char *node = nullptr;
    if (exts.find(" EGL_EXT_device_drm_render_node ") != std::string::npos)
        node = egl.QueryDeviceStringEXT(dev, EGL_DRM_RENDER_NODE_FILE_EXT);
    const char *primary = nullptr;
    if (exts.find(" EGL_EXT_device_drm ") != std::string::npos)
        primary = egl.QueryDeviceStringEXT(dev, EGL_DRM_DEVICE_FILE_EXT);
    if (primary) d.primary_node = primary;
    if (!node) node = primary;
    if (node) d.drm_node = node;
    resolve_display_device(&d);
    LOG_DEBUG("EGL display %p: driver %s, DRM node %s, %s", dpy, d.driver.empty() ? "(unknown)" : d.driver.c_str(),
              d.drm_node.empty() ? "(none)" : d.drm_node.c_str(), d.software ? "software" : "hardware");
    return d;
}

}  // namespace cldmabuf

namespace cldmabuf::egl {
namespace {

ClDeviceFacts device_facts(cl_device_id device) {
    ClDeviceFacts f;
    next().clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof f.type, &f.type, nullptr);
    f.has_pci = cl_device_pci_address(device, &f.pci);
    return f;
}

std::string device_name(cl_device_id device) {
    char name[256] = "";
    next().clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name - 1, name, nullptr);
    return name;
}

}  // namespace

cl_int check_devices(const EglApi &egl, EGLDisplay dpy, const std::vector<cl_device_id> &devices,
                     std::string *why) {
    const DisplayDevice display = display_device(egl, dpy);
    for (cl_device_id d : devices) {
        std::string reason;
        switch (match_device(display, device_facts(d), &reason)) {
        case Match::yes: break;
        case Match::unverified:
            LOG_WARN("EGL sharing with device \"%s\": %s", device_name(d).c_str(), reason.c_str());
            break;
        case Match::no:
            *why = "device \"" + device_name(d) + "\" cannot share with this EGL display: " + reason;
            return CL_INVALID_OPERATION;
        }
    }
    return CL_SUCCESS;
}

std::vector<cl_device_id> devices_for_display(const EglApi &egl, EGLDisplay dpy,
                                              const std::vector<cl_device_id> &devices) {
    const DisplayDevice display = display_device(egl, dpy);
    std::vector<cl_device_id> matching;
    for (cl_device_id d : devices) {
        std::string why;
        if (match_device(display, device_facts(d), &why) != Match::no) matching.push_back(d);
    }
    return matching;
}

std::vector<cl_device_id> context_device_list(cl_context context) {
    size_t bytes = 0;
    if (next().clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, nullptr, &bytes) != CL_SUCCESS) return {};
    std::vector<cl_device_id> devices(bytes / sizeof(cl_device_id));
    if (next().clGetContextInfo(context, CL_CONTEXT_DEVICES, bytes, devices.data(), nullptr) != CL_SUCCESS)
        return {};
    return devices;
}

}  // namespace cldmabuf::egl
