// The EGL/GL attribute handling that needs neither EGL nor an ICD: the
// clCreateFromEGLImageKHR property list and the GL texture targets the
// layer shares (the context property walk, parse_context_properties, is
// declared in context_request.hpp and defined beside these).  Split out so
// that tests/fuzz links them alone.
#pragma once

#include <string>

#include "layer/base/cl_compat.h"

#include <CL/cl_egl.h>
#include <CL/cl_gl.h>

namespace cldmabuf::egl {

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

}  // namespace cldmabuf::egl
