// Memory objects the layer made from EGLImages and GL objects: what the
// acquire/release, the queries and the teardown need to know about each,
// kept until the ICD destroys the cl_mem.
#pragma once

#include <memory>

#include "layer/base/cl_compat.h"
#include "layer/core/icd_ref.hpp"
#include "layer/egl/egl_api.hpp"
#include "layer/egl/linear_copy.hpp"

#include <CL/cl_gl.h>

namespace cldmabuf::egl {

struct EglObject {
    cl_context context = nullptr;
    EGLDisplay display = EGL_NO_DISPLAY;
    EGLImageKHR image = EGL_NO_IMAGE_KHR;
    bool own_image = false;             // created by the layer (from a GL object): destroyed with the cl_mem
    bool from_gl = false;
    cl_gl_object_type gl_type = 0;
    GLenum target = 0;
    GLint level = 0;
    GLuint name = 0;
    EGLContext producer = EGL_NO_CONTEXT;  // the GL-sharing context's GL context (none for EGLImages)
    cl_mem_flags flags = 0;
    std::shared_ptr<LinearCopy> copy;      // the tiled-export path: the linear buffer the import uses
};

// Records `object` for `mem` until the ICD destroys it (then its linear copy
// and its own EGLImage go too).  false (and `mem` released) when the
// destructor callback cannot be registered.
bool track_object(IcdMem &mem, const EglObject &object);

// Whether the layer made `mem`; a copy of its record in *out (the record may
// go at any moment after).  out may be nullptr.
bool find_object(cl_mem mem, EglObject *out);

}  // namespace cldmabuf::egl
