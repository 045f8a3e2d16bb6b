#include "layer/egl/device_check.hpp"

#include "layer/core/dispatch.hpp"
#include "layer/egl/device_match.hpp"
#include "layer/egl/egl_export.hpp"
#include "layer/base/log.hpp"

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
