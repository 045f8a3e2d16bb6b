#include "layer/egl/gl_buffer.hpp"

#include "layer/base/kernel_ops.hpp"

#include <cstdint>

namespace cldmabuf {
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
    if (rc != kInteropSuccess || o.dmabuf_fd < 0) {
        if (o.dmabuf_fd >= 0) kernel().close(o.dmabuf_fd);
        *code = rc == kInteropInvalidObject ? CL_INVALID_GL_OBJECT : CL_INVALID_OPERATION;
        *why = "eglGLInteropExportObjectMESA(GL buffer " + std::to_string(buffer) + ") failed (MESA_GLINTEROP error " +
               std::to_string(rc) + (rc == kInteropInvalidObject ? ": not a buffer object of the context)"
                                     : rc == kInteropUnsupported ? ": the driver cannot export it)" : ")");
        return false;
    }
    out->fd = o.dmabuf_fd;
    out->offset = static_cast<size_t>(o.buffer_offset);
    out->size = static_cast<size_t>(o.buffer_size);
    return true;
}

}  // namespace cldmabuf
