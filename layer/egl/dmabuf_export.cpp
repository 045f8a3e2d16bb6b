// EGL and GL objects out as dma-bufs: an EGLImage
// (EGL_MESA_image_dma_buf_export) and its size, a GL buffer
// (EGL_MESA_gl_interop).
#include "layer/egl/dmabuf_export.hpp"

#include "layer/base/kernel_ops.hpp"

#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>

#include "layer/base/log.hpp"

namespace cldmabuf {

namespace {
std::string egl_failure(const EglApi &egl, const char *what) {
    return std::string(what) + " failed (" + egl_error_name(egl.GetError()) + ")";
}
}  // namespace

bool export_dmabuf(const EglApi &egl, EGLDisplay dpy, EGLImageKHR image, ExportedImage *out, std::string *why) {
    if (!egl.ExportDMABUFImageQueryMESA || !egl.ExportDMABUFImageMESA ||
        !egl_display_has(egl, dpy, "EGL_MESA_image_dma_buf_export")) {
        *why = "the EGL display does not have EGL_MESA_image_dma_buf_export";
        return false;
    }
    int fourcc = 0, planes = 0;
    if (!egl.ExportDMABUFImageQueryMESA(dpy, image, &fourcc, &planes, nullptr)) {
        *why = egl_failure(egl, "eglExportDMABUFImageQueryMESA");
        return false;
    }
    if (planes != 1) {
        *why = "the EGLImage has " + std::to_string(planes) + " planes (only single-plane images are imported)";
        return false;
    }
    EGLuint64KHR modifiers[4] = {0, 0, 0, 0};
    if (!egl.ExportDMABUFImageQueryMESA(dpy, image, &fourcc, &planes, modifiers)) {
        *why = egl_failure(egl, "eglExportDMABUFImageQueryMESA");
        return false;
    }
    int fds[4] = {-1, -1, -1, -1};
    EGLint strides[4] = {0, 0, 0, 0}, offsets[4] = {0, 0, 0, 0};
    const bool exported = egl.ExportDMABUFImageMESA(dpy, image, fds, strides, offsets);
    // Every plane's fd closes here but plane 0's on success.
    OwnedFd plane_fds[4] = {OwnedFd(fds[0]), OwnedFd(fds[1]), OwnedFd(fds[2]), OwnedFd(fds[3])};
    if (!exported || !plane_fds[0]) {
        *why = egl_failure(egl, "eglExportDMABUFImageMESA");
        return false;
    }
    out->fd = std::move(plane_fds[0]);
    out->fourcc = fourcc;
    out->modifier = modifiers[0];
    out->stride = strides[0];
    out->offset = offsets[0];
    return true;
}

namespace {

std::mutex size_mutex;
std::map<EGLDisplay, EGLContext> private_contexts;

// Saves the calling thread's GLES binding (and bound API) and puts it back.
struct CurrentBinding {
    const EglApi &egl;
    EGLenum api;
    EGLDisplay dpy;
    EGLSurface draw, read;
    EGLContext ctx;
    explicit CurrentBinding(const EglApi &e) : egl(e) {
        api = egl.QueryAPI();
        egl.BindAPI(EGL_OPENGL_ES_API);
        dpy = egl.GetCurrentDisplay();
        ctx = egl.GetCurrentContext();
        draw = egl.GetCurrentSurface(EGL_DRAW);
        read = egl.GetCurrentSurface(EGL_READ);
    }
    void restore(EGLDisplay ours) {
        egl.BindAPI(EGL_OPENGL_ES_API);
        if (ctx != EGL_NO_CONTEXT) {
            if (!egl.MakeCurrent(dpy, draw, read, ctx))
                LOG_ERROR("EGL: could not make the application's context current again (%s)",
                          egl_error_name(egl.GetError()));
        } else {
            egl.MakeCurrent(ours, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        }
        if (api != EGL_NONE) egl.BindAPI(api);
    }
};

EGLContext private_context(const EglApi &egl, EGLDisplay dpy, std::string *why) {
    if (auto it = private_contexts.find(dpy); it != private_contexts.end()) return it->second;
    if (!egl_display_has(egl, dpy, "EGL_KHR_no_config_context") &&
        !egl_display_has(egl, dpy, "EGL_MESA_configless_context")) {
        *why = "the EGL display has no EGL_KHR_no_config_context (needed to query the image's size)";
        return EGL_NO_CONTEXT;
    }
    if (!egl_display_has(egl, dpy, "EGL_KHR_surfaceless_context")) {
        *why = "the EGL display has no EGL_KHR_surfaceless_context (needed to query the image's size)";
        return EGL_NO_CONTEXT;
    }
    const EGLint attribs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 1, EGL_NONE};
    EGLContext ctx = egl.CreateContext(dpy, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attribs);
    if (ctx == EGL_NO_CONTEXT) {
        *why = egl_failure(egl, "eglCreateContext (private GLES 3.1 context for size queries)");
        return EGL_NO_CONTEXT;
    }
    private_contexts[dpy] = ctx;
    return ctx;
}

}  // namespace

bool query_image_size(const EglApi &egl, EGLDisplay dpy, EGLImageKHR image, int *width, int *height,
                      std::string *why) {
    if (!egl.GenTextures || !egl.BindTexture || !egl.GetTexLevelParameteriv || !egl.EGLImageTargetTexture2DOES ||
        !egl.DeleteTextures || !egl.GetGLError) {
        *why = "the GLES entry points needed to query the image's size are missing";
        return false;
    }
    std::lock_guard lock(size_mutex);
    CurrentBinding saved(egl);
    EGLContext ctx = private_context(egl, dpy, why);
    if (ctx == EGL_NO_CONTEXT) {
        saved.restore(dpy);
        return false;
    }
    if (!egl.MakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
        // A stale context (the display was terminated and initialised again)
        // or one EGL could not bind: once more with a new one.  The old one
        // is destroyed first (a stale one is gone already and EGL says so):
        // otherwise every failed bind of a live context leaks one.
        egl.GetError();
        egl.DestroyContext(dpy, ctx);
        egl.GetError();
        private_contexts.erase(dpy);
        ctx = private_context(egl, dpy, why);
        if (ctx == EGL_NO_CONTEXT || !egl.MakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
            if (ctx != EGL_NO_CONTEXT) *why = egl_failure(egl, "eglMakeCurrent (private context)");
            saved.restore(dpy);
            return false;
        }
    }
    while (egl.GetGLError() != GL_NO_ERROR) {
    }
    GLuint tex = 0;
    egl.GenTextures(1, &tex);
    egl.BindTexture(GL_TEXTURE_2D, tex);
    egl.EGLImageTargetTexture2DOES(GL_TEXTURE_2D, image);
    GLint w = 0, h = 0;
    egl.GetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_WIDTH, &w);
    egl.GetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_HEIGHT, &h);
    GLenum err = egl.GetGLError();
    egl.BindTexture(GL_TEXTURE_2D, 0);
    egl.DeleteTextures(1, &tex);
    saved.restore(dpy);
    if (err != GL_NO_ERROR || w <= 0 || h <= 0) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "cannot read the EGLImage's size through a GLES texture (GL error 0x%x, %dx%d)",
                      err, w, h);
        *why = buf;
        return false;
    }
    *width = w;
    *height = h;
    return true;
}

bool with_gl_context(const EglApi &egl, EGLDisplay dpy, EGLContext producer, const std::function<bool(std::string *)> &work,
                     std::string *why) {
    const EGLContext current = egl.GetCurrentContext();
    if (current != EGL_NO_CONTEXT && egl.GetCurrentDisplay() == dpy && egl.QueryAPI() == EGL_OPENGL_ES_API &&
        (producer == EGL_NO_CONTEXT || current == producer))
        return work(why);
    std::lock_guard lock(size_mutex);
    CurrentBinding saved(egl);
    EGLContext ctx = private_context(egl, dpy, why);
    if (ctx == EGL_NO_CONTEXT || !egl.MakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
        if (ctx != EGL_NO_CONTEXT) *why = egl_failure(egl, "eglMakeCurrent (private context)");
        saved.restore(dpy);
        return false;
    }
    const bool ok = work(why);
    saved.restore(dpy);
    return ok;
}

// GL buffers (EGL_MESA_gl_interop).
namespace {

// EGL_MESA_gl_interop's structures, version 1 (Mesa's include/GL/mesa_glinterop.h,
// not installed by Debian's packages).  Version 1 is what every Mesa with the
// extension accepts; a newer Mesa answers in version 1 when asked for it.
struct InteropIn {
    uint32_t version;
    unsigned target, object, miplevel;
    uint32_t access;
    uint32_t driver_data_size;
    void *driver_data;
};
struct InteropOut {
    uint32_t version;
    int dmabuf_fd;
    unsigned internal_format;
    ptrdiff_t buffer_offset, buffer_size;
    unsigned view_min_level, view_num_levels, view_min_layer, view_num_layers;
    uint32_t driver_data_written;
};
enum : int { kInteropSuccess = 0, kInteropInvalidObject = 8, kInteropUnsupported = 10 };
enum : uint32_t { kAccessReadWrite = 0, kAccessReadOnly = 1, kAccessWriteOnly = 2 };

}  // namespace

bool export_gl_buffer(const EglApi &egl, EGLDisplay dpy, EGLContext ctx, GLuint buffer, cl_mem_flags flags,
                      GlBufferExport *out, cl_int *code, std::string *why) {
    if (!egl.GLInteropExportObjectMESA || !egl_display_has(egl, dpy, "EGL_MESA_gl_interop")) {
        *code = CL_INVALID_OPERATION;
        *why = "the EGL display has no EGL_MESA_gl_interop: GL buffer objects cannot be exported as dma-bufs";
        return false;
    }
    InteropIn in{};
    in.version = 1;
    in.target = GL_ARRAY_BUFFER;
    in.object = buffer;
    in.access = flags == CL_MEM_READ_ONLY ? kAccessReadOnly : flags == CL_MEM_WRITE_ONLY ? kAccessWriteOnly
                                                                                         : kAccessReadWrite;
    if (egl.GLInteropFlushObjectsMESA) egl.GLInteropFlushObjectsMESA(dpy, ctx, 1, &in, nullptr);
    InteropOut o{};
    o.version = 1;
    o.dmabuf_fd = -1;
    const int rc = egl.GLInteropExportObjectMESA(dpy, ctx, &in, &o);
    OwnedFd exported(o.dmabuf_fd);
    if (rc != kInteropSuccess || !exported) {
        *code = rc == kInteropInvalidObject ? CL_INVALID_GL_OBJECT : CL_INVALID_OPERATION;
        *why = "eglGLInteropExportObjectMESA(GL buffer " + std::to_string(buffer) + ") failed (MESA_GLINTEROP error " +
               std::to_string(rc) + (rc == kInteropInvalidObject ? ": not a buffer object of the context)"
                                     : rc == kInteropUnsupported ? ": the driver cannot export it)" : ")");
        return false;
    }
    out->fd = std::move(exported);
    out->offset = static_cast<size_t>(o.buffer_offset);
    out->size = static_cast<size_t>(o.buffer_size);
    return true;
}

}  // namespace cldmabuf
