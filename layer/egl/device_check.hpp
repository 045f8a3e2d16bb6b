// Applies the device-pairing rule (device_match.hpp) to real OpenCL devices
// and a real EGL display: which devices of a context or platform may share
// with the display.
#pragma once

#include <string>
#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/egl/egl_api.hpp"

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
