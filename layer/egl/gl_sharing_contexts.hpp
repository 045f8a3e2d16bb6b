// GL sharing contexts: OpenCL contexts created with CL_GL_CONTEXT_KHR /
// CL_EGL_DISPLAY_KHR (or the layer's CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF) that
// the layer serves (clCreateContext, clCreateContextFromType,
// CL_CONTEXT_PROPERTIES and clGetGLContextInfoKHR are in
// gl_sharing_contexts.cpp): the checks on such a request, and the EGL
// display and GL context each shares with, kept until the ICD destroys the
// context.
#pragma once

#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/egl/attrib_lists.hpp"
#include "layer/egl/egl_api.hpp"

namespace cldmabuf::egl {

// Validates a GL request the layer serves (the list read by
// parse_context_properties): CL_SUCCESS with *egl_out, or an error after one
// log line naming `what`.
cl_int check_gl_request(const ContextRequest &req, const EglApi **egl_out, const char *what);

struct GlShare {
    EGLDisplay display = EGL_NO_DISPLAY;
    EGLContext context = EGL_NO_CONTEXT;
    bool allow_tiled = false;
    std::vector<cl_context_properties> properties;  // the application's list, for CL_CONTEXT_PROPERTIES
};

// Records `share` for `context` until the ICD destroys the context.
void remember_share(cl_context context, const GlShare &share);

// Whether `context` is one the layer serves; a copy of its entry in *out
// (the entry may go at any moment after).  out may be nullptr.
bool find_share(cl_context context, GlShare *out);

}  // namespace cldmabuf::egl
