// GL buffer objects as dma-bufs (clCreateFromGLBuffer): EGL has no image of
// a buffer object, but Mesa's EGL_MESA_gl_interop (the export rusticl uses
// for its own GL sharing) hands out a buffer's dma-buf.  Measured in the VM:
// Mesa 25.0.7 llvmpipe exports GL_ARRAY_BUFFER objects, offset 0.
#pragma once

#include <cstddef>
#include <string>

#include "layer/base/cl_compat.h"
#include "layer/egl/egl_api.hpp"

namespace cldmabuf {

struct GlBufferExport {
    int fd = -1;            // owned by the caller
    size_t offset = 0;      // of the buffer inside the dma-buf
    size_t size = 0;        // bytes
};

// Flushes the buffer (eglGLInteropFlushObjectsMESA, where present) and exports
// it.  false with *why and *code (CL_INVALID_GL_OBJECT for a name that is not
// a buffer of the context, CL_INVALID_OPERATION when the display cannot
// export buffers); no fd is left open then.
bool export_gl_buffer(const EglApi &egl, EGLDisplay dpy, EGLContext ctx, GLuint buffer, cl_mem_flags flags,
                      GlBufferExport *out, cl_int *code, std::string *why);

}  // namespace cldmabuf
