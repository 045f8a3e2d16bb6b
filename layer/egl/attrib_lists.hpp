// The EGL/GL attribute handling that needs neither EGL nor an ICD: a
// context property list as cl_khr_gl_sharing on EGL reads it
// (clCreateContext, clCreateContextFromType, clGetGLContextInfoKHR), the
// clCreateFromEGLImageKHR property list and the GL texture targets the layer
// shares.  Kept in a file of its own so that tests/fuzz links it alone; the
// checks that need EGL are in gl_sharing_contexts.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/egl/egl_api.hpp"

#include <CL/cl_egl.h>
#include <CL/cl_gl.h>

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

// clCreateFromEGLImageKHR's properties (NULL or 0-terminated pairs):
// cl_khr_egl_image defines none, the layer takes
// CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF = CL_TRUE/CL_FALSE.  CL_SUCCESS and
// *allow_tiled, or CL_INVALID_PROPERTY with the reason.
cl_int parse_egl_image_properties(const cl_egl_image_properties_khr *props, bool *allow_tiled, std::string *why);

// clCreateFromGLTexture's texture_target: CL_SUCCESS for GL_TEXTURE_2D (the
// one target the layer shares), CL_INVALID_OPERATION for the other GL
// texture targets the spec lists, CL_INVALID_VALUE for anything else; the
// reason in *why.
cl_int gl_texture_target_rule(cl_GLenum target, std::string *why);

// "0x1f": values in log lines and reasons.
std::string hex_text(uint64_t v);

}  // namespace cldmabuf::egl
