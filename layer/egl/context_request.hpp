// A context property list as cl_khr_gl_sharing on EGL reads it
// (clCreateContext, clCreateContextFromType, clGetGLContextInfoKHR), and
// the checks on a GL request the layer serves.
#pragma once

#include <string>
#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/egl/egl_api.hpp"

namespace cldmabuf::egl {

struct ContextRequest {
    bool any_gl = false;             // a GL property was given
    cl_platform_id platform = nullptr;
    EGLDisplay display = EGL_NO_DISPLAY;
    bool has_display = false;
    EGLContext gl_context = EGL_NO_CONTEXT;
    bool has_gl_context = false;
    bool other_window_system = false;  // GLX/WGL/CGL
    bool allow_tiled = false;
    std::vector<cl_context_properties> stripped;  // for the ICD: the GL and layer properties taken out
    std::vector<cl_context_properties> original;
    // The first rule the layer's part of the list breaks (the ICD never sees
    // those entries, so it cannot judge them): CL_INVALID_PROPERTY when a GL
    // key is given twice or CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF is not
    // CL_TRUE/CL_FALSE, with the reason.  check_gl_request refuses it.
    cl_int error = CL_SUCCESS;
    std::string why;
};

void parse_context_properties(const cl_context_properties *props, ContextRequest *req);

// Validates a GL request the layer serves: CL_SUCCESS with *egl_out, or an
// error after one log line naming `what`.
cl_int check_gl_request(const ContextRequest &req, const EglApi **egl_out, const char *what);

}  // namespace cldmabuf::egl
