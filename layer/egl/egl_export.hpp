// EGLImage -> dma-buf (EGL_MESA_image_dma_buf_export) and the facts the
// import needs that the export does not give: the image's size, and the
// device the display renders on.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "layer/egl/device_match.hpp"
#include "layer/egl/egl_api.hpp"

namespace cldmabuf {

struct ExportedImage {
    int fd = -1;        // owned by the caller
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

// What the display renders on (EGL_EXT_device_query).  Without the query
// the display counts as having no DRM device.
DisplayDevice display_device(const EglApi &egl, EGLDisplay dpy);

// Whether `dpy` is an initialised EGLDisplay (eglQueryString answers).
bool display_valid(const EglApi &egl, EGLDisplay dpy);

}  // namespace cldmabuf
