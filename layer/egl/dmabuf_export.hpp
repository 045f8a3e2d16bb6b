// EGL and GL objects out as dma-bufs.  An EGLImage
// (EGL_MESA_image_dma_buf_export), and what its import needs that the export
// does not give: the image's size, read in a GLES context (with_gl_context).
// A GL buffer object: EGL has no image of a buffer object, but Mesa's
// EGL_MESA_gl_interop (the export rusticl uses for its own GL sharing) hands
// out a buffer's dma-buf.  Measured in the VM: Mesa 25.0.7 llvmpipe exports
// GL_ARRAY_BUFFER objects, offset 0.  (The device the display renders on is
// in display_devices.hpp.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "layer/base/owned_fd.hpp"
#include "layer/base/cl_compat.h"
#include "layer/egl/egl_api.hpp"

namespace cldmabuf {

struct ExportedImage {
    OwnedFd fd;
    int fourcc = 0;
    uint64_t modifier = 0;
    EGLint stride = 0;  // bytes
    EGLint offset = 0;  // bytes
    int width = 0, height = 0;
};

// eglExportDMABUFImageQueryMESA + eglExportDMABUFImageMESA.  Single-plane
// images only.  false with *why (the EGL error included) on failure; no fd
// is left open then.
bool export_dmabuf(const EglApi &egl, EGLDisplay dpy, EGLImageKHR image, ExportedImage *out, std::string *why);

// The image's width and height: EGL has no query for them, so the layer
// binds the image to a texture of a private, surfaceless GLES 3.1 context
// on the same display (EGL_KHR_no_config_context,
// EGL_KHR_surfaceless_context) and asks glGetTexLevelParameteriv.  The
// calling thread's current context and bound API are restored.
bool query_image_size(const EglApi &egl, EGLDisplay dpy, EGLImageKHR image, int *width, int *height,
                      std::string *why);

// Runs `work` with a GLES context of `dpy` current: the producer's own
// context when it is current on the calling thread (`producer`, or any
// context of `dpy` when `producer` is EGL_NO_CONTEXT), so the GL commands are
// ordered after the producer's; otherwise the layer's private context, made
// current for the call and the thread's binding restored after it.
bool with_gl_context(const EglApi &egl, EGLDisplay dpy, EGLContext producer, const std::function<bool(std::string *)> &work,
                     std::string *why);

struct GlBufferExport {
    OwnedFd fd;
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
