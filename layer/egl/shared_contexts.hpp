// OpenCL contexts created with CL_GL_CONTEXT_KHR / CL_EGL_DISPLAY_KHR (or the
// layer's CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF) that the layer serves: the EGL
// display and GL context they share with, kept until the ICD destroys the
// context.
#pragma once

#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/egl/egl_api.hpp"

namespace cldmabuf::egl {

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
