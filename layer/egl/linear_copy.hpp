// The tiled-export path (docs/egl.md, "Tiled exports"): an OpenCL image
// cannot use a tiled GL texture in place, so the layer keeps a LINEAR
// dma-buf next to it and copies on the GPU, inside the producer's context,
// with one glBlitFramebuffer per direction: texture -> linear on acquire,
// linear -> texture on release.  Never a host copy.  The linear buffer is
// allocated with GBM (dlopen'ed libgbm.so.1) on the display's render node,
// or on its card node when the render node cannot allocate (vgem under
// llvmpipe: dumb buffers only on the card node), and is bound as a
// renderbuffer through an EGLImage (EGL_EXT_image_dma_buf_import).
#pragma once

#include <cstdint>
#include <string>

#include "layer/base/owned_fd.hpp"
#include "layer/egl/device_pairing_rule.hpp"
#include "layer/egl/egl_api.hpp"

namespace cldmabuf {

struct LinearCopy {
    void *bo = nullptr;                     // struct gbm_bo
    EGLImageKHR linear = EGL_NO_IMAGE_KHR;  // the GBM buffer as an EGLImage
    OwnedFd fd;                             // the GBM buffer's dma-buf, until the import takes it
    uint32_t stride = 0;
    int width = 0, height = 0;
    std::string node;                       // where GBM allocated it
};

// Allocates the linear buffer for a `fourcc` image of width x height and
// wraps it as an EGLImage of `dpy`.  false with *why; nothing is left
// allocated then.
bool create_linear_copy(const EglApi &egl, EGLDisplay dpy, const DisplayDevice &device, int fourcc, int width,
                        int height, LinearCopy *out, std::string *why);

// Frees the EGLImage and the GBM buffer (and the fd if still held).
void destroy_linear_copy(const EglApi &egl, EGLDisplay dpy, LinearCopy *copy);

// One glBlitFramebuffer between `source` (the producer's EGLImage) and the
// linear buffer, in the context current on the calling thread, then
// glFinish so that the other side sees the result.  The context's
// framebuffer (draw and read), renderbuffer and 2D-texture bindings,
// scissor test, rasterizer discard, colour mask and viewport are restored.
bool blit_linear(const EglApi &egl, EGLImageKHR source, const LinearCopy &copy, bool to_linear, std::string *why);

}  // namespace cldmabuf
