// The device-pairing rule (device_pairing_rule.hpp) applied to a real EGL
// display and real OpenCL devices: what the display renders on, and which
// devices of a context or platform may share with it (docs/egl.md, "GPU
// match").
#pragma once

#include <string>
#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/egl/device_pairing_rule.hpp"
#include "layer/egl/egl_api.hpp"

namespace cldmabuf {

// What the display renders on (EGL_EXT_device_query).  Without the query
// the display counts as having no DRM device.
DisplayDevice display_device(const EglApi &egl, EGLDisplay dpy);

}  // namespace cldmabuf

namespace cldmabuf::egl {

// CL_SUCCESS when every device may share with the display (unverified ones
// with a warning); CL_INVALID_OPERATION with *why naming the first that may not.
cl_int check_devices(const EglApi &egl, EGLDisplay dpy, const std::vector<cl_device_id> &devices,
                     std::string *why);

// The devices among `devices` that may share with the display (unverified
// ones included), in order.
std::vector<cl_device_id> devices_for_display(const EglApi &egl, EGLDisplay dpy,
                                              const std::vector<cl_device_id> &devices);

// CL_CONTEXT_DEVICES (empty when the context is not valid).
std::vector<cl_device_id> context_device_list(cl_context context);

}  // namespace cldmabuf::egl
