#include "layer/egl/linear_copy.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/ioctl.h>

#include <drm.h>

#include <map>
#include <mutex>

#include <drm_fourcc.h>

#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"

namespace cldmabuf {
namespace {

// libgbm, declared here (its header is not needed to build the layer).
constexpr uint32_t kGbmUseRendering = 1u << 2;  // GBM_BO_USE_RENDERING
constexpr uint32_t kGbmUseLinear = 1u << 4;     // GBM_BO_USE_LINEAR

struct Gbm {
    void *(*create_device)(int fd) = nullptr;
    void *(*bo_create)(void *dev, uint32_t w, uint32_t h, uint32_t format, uint32_t flags) = nullptr;
    int (*bo_get_fd)(void *bo) = nullptr;
    uint32_t (*bo_get_stride)(void *bo) = nullptr;
    void (*bo_destroy)(void *bo) = nullptr;
    uint64_t (*bo_get_handle)(void *bo) = nullptr;  // union gbm_bo_handle, 8 bytes; .u32 is the GEM handle
};

struct GbmDevice {
    int fd = -1;
    void *dev = nullptr;
};

std::mutex gbm_mutex;
bool gbm_tried = false;
Gbm gbm;
std::string gbm_error;
// GBM devices by node, open for the process's lifetime (a device per bo
// would reopen the node on every import).
std::map<std::string, GbmDevice> devices;

const Gbm *load_gbm(std::string *why) {
    if (!gbm_tried) {
        gbm_tried = true;
        void *lib = dlopen("libgbm.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char *e = dlerror();
            gbm_error = std::string("cannot load libgbm.so.1: ") + (e ? e : "unknown error");
        } else {
            gbm.create_device = reinterpret_cast<decltype(gbm.create_device)>(dlsym(lib, "gbm_create_device"));
            gbm.bo_create = reinterpret_cast<decltype(gbm.bo_create)>(dlsym(lib, "gbm_bo_create"));
            gbm.bo_get_fd = reinterpret_cast<decltype(gbm.bo_get_fd)>(dlsym(lib, "gbm_bo_get_fd"));
            gbm.bo_get_stride = reinterpret_cast<decltype(gbm.bo_get_stride)>(dlsym(lib, "gbm_bo_get_stride"));
            gbm.bo_destroy = reinterpret_cast<decltype(gbm.bo_destroy)>(dlsym(lib, "gbm_bo_destroy"));
            gbm.bo_get_handle = reinterpret_cast<decltype(gbm.bo_get_handle)>(dlsym(lib, "gbm_bo_get_handle"));
            if (!gbm.create_device || !gbm.bo_create || !gbm.bo_get_fd || !gbm.bo_get_stride || !gbm.bo_destroy)
                gbm_error = "libgbm.so.1 lacks gbm_create_device/gbm_bo_create/gbm_bo_get_fd";
        }
    }
    if (!gbm_error.empty()) {
        *why = gbm_error;
        return nullptr;
    }
    return &gbm;
}

GbmDevice gbm_device(const Gbm &g, const std::string &node) {
    if (auto it = devices.find(node); it != devices.end()) return it->second;
    OwnedFd fd(kernel().open(node.c_str(), O_RDWR | O_CLOEXEC));
    if (!fd) return {};
    GbmDevice d;
    d.dev = g.create_device(fd.get());
    if (!d.dev) return {};
    d.fd = fd.release();  // the device's for the process (`devices`)
    devices[node] = d;
    return d;
}

// The buffer's dma-buf, read-write: gbm_bo_get_fd exports without DRM_RDWR
// on some drivers (measured: kms_swrast dumb buffers on vgem), and the
// import maps the buffer for writing.
int export_rdwr(const Gbm &g, const GbmDevice &d, void *bo) {
    if (g.bo_get_handle) {
        drm_prime_handle prime{};
        prime.handle = static_cast<uint32_t>(g.bo_get_handle(bo));
        prime.flags = DRM_CLOEXEC | DRM_RDWR;
        prime.fd = -1;
        if (kernel_ioctl_retry(d.fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime) == 0 && prime.fd >= 0) return prime.fd;
    }
    return g.bo_get_fd(bo);
}

// A format GBM surely knows with the same bytes per pixel: the buffer is
// only memory to GBM; EGL imports it with the real fourcc.
uint32_t carrier_format(int fourcc) {
    switch (static_cast<uint32_t>(fourcc)) {
    case DRM_FORMAT_R8: return DRM_FORMAT_R8;
    case DRM_FORMAT_GR88: case DRM_FORMAT_R16: return DRM_FORMAT_GR88;
    default: return DRM_FORMAT_ABGR8888;
    }
}

}  // namespace

bool create_linear_copy(const EglApi &egl, EGLDisplay dpy, const DisplayDevice &device, int fourcc, int width,
                        int height, LinearCopy *out, std::string *why) {
    if (!egl.CreateImageKHR || !egl.DestroyImageKHR || !egl_display_has(egl, dpy, "EGL_EXT_image_dma_buf_import")) {
        *why = "the EGL display cannot import dma-bufs (EGL_EXT_image_dma_buf_import) for the linear copy";
        return false;
    }
    std::lock_guard lock(gbm_mutex);
    const Gbm *g = load_gbm(why);
    if (!g) return false;
    std::string tried;
    // A software renderer's node is a dumb-buffer device (vgem): dumb buffers
    // come from the card node only; a GPU allocates on its render node.
    const std::string first = device.software ? device.primary_node : device.drm_node;
    const std::string second = device.software ? device.drm_node : device.primary_node;
    for (const std::string &node : {first, second}) {
        if (node.empty()) continue;
        const GbmDevice gd = gbm_device(*g, node);
        void *dev = gd.dev;
        void *bo = nullptr;
        if (dev) {
            for (uint32_t format : {static_cast<uint32_t>(fourcc), carrier_format(fourcc)}) {
                bo = g->bo_create(dev, width, height, format, kGbmUseLinear | kGbmUseRendering);
                if (!bo) bo = g->bo_create(dev, width, height, format, kGbmUseLinear);
                if (bo) break;
            }
        }
        if (!bo) {
            tried += (tried.empty() ? "" : ", ") + node;
            continue;
        }
        OwnedFd fd(export_rdwr(*g, gd, bo));
        const uint32_t stride = g->bo_get_stride(bo);
        if (!fd) {
            g->bo_destroy(bo);
            tried += (tried.empty() ? "" : ", ") + node + " (no dma-buf fd)";
            continue;
        }
        std::vector<EGLint> attribs = {EGL_WIDTH, width, EGL_HEIGHT, height, EGL_LINUX_DRM_FOURCC_EXT, fourcc,
                                       EGL_DMA_BUF_PLANE0_FD_EXT, fd.get(), EGL_DMA_BUF_PLANE0_OFFSET_EXT, 0,
                                       EGL_DMA_BUF_PLANE0_PITCH_EXT, static_cast<EGLint>(stride)};
        if (egl_display_has(egl, dpy, "EGL_EXT_image_dma_buf_import_modifiers"))
            attribs.insert(attribs.end(), {EGL_DMA_BUF_PLANE0_MODIFIER_LO_EXT, 0, EGL_DMA_BUF_PLANE0_MODIFIER_HI_EXT, 0});
        attribs.push_back(EGL_NONE);
        EGLImageKHR image = egl.CreateImageKHR(dpy, EGL_NO_CONTEXT, EGL_LINUX_DMA_BUF_EXT, nullptr, attribs.data());
        if (image == EGL_NO_IMAGE_KHR) {
            *why = std::string("eglCreateImageKHR(EGL_LINUX_DMA_BUF_EXT) of the linear GBM buffer failed (") +
                   egl_error_name(egl.GetError()) + ")";
            fd.reset();  // before its buffer
            g->bo_destroy(bo);
            return false;
        }
        out->bo = bo;
        out->linear = image;
        out->fd = std::move(fd);
        out->stride = stride;
        out->width = width;
        out->height = height;
        out->node = node;
        return true;
    }
    *why = tried.empty() ? "the EGL display names no DRM node to allocate the linear copy on (GBM)"
                         : "GBM could not allocate a linear " + std::to_string(width) + "x" + std::to_string(height) +
                               " buffer on " + tried;
    return false;
}

void destroy_linear_copy(const EglApi &egl, EGLDisplay dpy, LinearCopy *copy) {
    if (copy->linear != EGL_NO_IMAGE_KHR && egl.DestroyImageKHR) egl.DestroyImageKHR(dpy, copy->linear);
    copy->linear = EGL_NO_IMAGE_KHR;
    copy->fd.reset();
    if (copy->bo) {
        std::lock_guard lock(gbm_mutex);
        gbm.bo_destroy(copy->bo);
    }
    copy->bo = nullptr;
}

namespace {

// The state glBlitFramebuffer depends on or the copy changes.
struct BlitState {
    GLint draw_fbo = 0, read_fbo = 0, renderbuffer = 0, texture = 0;
    GLint viewport[4] = {0, 0, 0, 0};
    GLboolean mask[4] = {GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE};
    GLboolean scissor = GL_FALSE, discard = GL_FALSE;
    void save(const EglApi &gl) {
        gl.GetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &draw_fbo);
        gl.GetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &read_fbo);
        gl.GetIntegerv(GL_RENDERBUFFER_BINDING, &renderbuffer);
        gl.GetIntegerv(GL_TEXTURE_BINDING_2D, &texture);
        gl.GetIntegerv(GL_VIEWPORT, viewport);
        gl.GetBooleanv(GL_COLOR_WRITEMASK, mask);
        scissor = gl.IsEnabled(GL_SCISSOR_TEST);
        discard = gl.IsEnabled(GL_RASTERIZER_DISCARD);
    }
    void restore(const EglApi &gl) const {
        gl.BindFramebuffer(GL_DRAW_FRAMEBUFFER, static_cast<GLuint>(draw_fbo));
        gl.BindFramebuffer(GL_READ_FRAMEBUFFER, static_cast<GLuint>(read_fbo));
        gl.BindRenderbuffer(GL_RENDERBUFFER, static_cast<GLuint>(renderbuffer));
        gl.BindTexture(GL_TEXTURE_2D, static_cast<GLuint>(texture));
        gl.Viewport(viewport[0], viewport[1], viewport[2], viewport[3]);
        gl.ColorMask(mask[0], mask[1], mask[2], mask[3]);
        (scissor ? gl.Enable : gl.Disable)(GL_SCISSOR_TEST);
        (discard ? gl.Enable : gl.Disable)(GL_RASTERIZER_DISCARD);
    }
};

bool have_blit_functions(const EglApi &g) {
    return g.Finish && g.GetIntegerv && g.GetBooleanv && g.IsEnabled && g.Enable && g.Disable && g.ColorMask &&
           g.Viewport && g.GenFramebuffers && g.DeleteFramebuffers && g.BindFramebuffer && g.FramebufferTexture2D &&
           g.FramebufferRenderbuffer && g.CheckFramebufferStatus && g.GenRenderbuffers && g.DeleteRenderbuffers &&
           g.BindRenderbuffer && g.EGLImageTargetRenderbufferStorageOES && g.BlitFramebuffer && g.GenTextures &&
           g.DeleteTextures && g.BindTexture && g.EGLImageTargetTexture2DOES && g.GetGLError;
}

}  // namespace

bool blit_linear(const EglApi &gl, EGLImageKHR source, const LinearCopy &copy, bool to_linear, std::string *why) {
    if (!have_blit_functions(gl)) {
        *why = "the GLES 3 entry points for the copy (glBlitFramebuffer, GL_OES_EGL_image) are missing";
        return false;
    }
    while (gl.GetGLError() != GL_NO_ERROR) {
    }
    BlitState saved;
    saved.save(gl);
    GLuint tex = 0, rb = 0, fbo[2] = {0, 0};
    gl.GenTextures(1, &tex);
    gl.BindTexture(GL_TEXTURE_2D, tex);
    gl.EGLImageTargetTexture2DOES(GL_TEXTURE_2D, source);
    gl.GenRenderbuffers(1, &rb);
    gl.BindRenderbuffer(GL_RENDERBUFFER, rb);
    gl.EGLImageTargetRenderbufferStorageOES(GL_RENDERBUFFER, copy.linear);
    gl.GenFramebuffers(2, fbo);
    const GLenum from = GL_READ_FRAMEBUFFER, to = GL_DRAW_FRAMEBUFFER;
    gl.BindFramebuffer(from, fbo[0]);
    gl.BindFramebuffer(to, fbo[1]);
    if (to_linear) {
        gl.FramebufferTexture2D(from, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
        gl.FramebufferRenderbuffer(to, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, rb);
    } else {
        gl.FramebufferRenderbuffer(from, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, rb);
        gl.FramebufferTexture2D(to, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
    }
    const GLenum read_status = gl.CheckFramebufferStatus(from), draw_status = gl.CheckFramebufferStatus(to);
    bool ok = read_status == GL_FRAMEBUFFER_COMPLETE && draw_status == GL_FRAMEBUFFER_COMPLETE;
    if (ok) {
        gl.Disable(GL_SCISSOR_TEST);
        gl.Disable(GL_RASTERIZER_DISCARD);
        gl.ColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
        gl.Viewport(0, 0, copy.width, copy.height);
        gl.BlitFramebuffer(0, 0, copy.width, copy.height, 0, 0, copy.width, copy.height, GL_COLOR_BUFFER_BIT,
                           GL_NEAREST);
    }
    const GLenum err = gl.GetGLError();
    saved.restore(gl);
    gl.DeleteFramebuffers(2, fbo);
    gl.DeleteRenderbuffers(1, &rb);
    gl.DeleteTextures(1, &tex);
    if (ok && err == GL_NO_ERROR) gl.Finish();
    if (!ok || err != GL_NO_ERROR) {
        char buf[160];
        std::snprintf(buf, sizeof buf,
                      "glBlitFramebuffer %s the linear copy failed (read FBO 0x%x, draw FBO 0x%x, GL error 0x%x)",
                      to_linear ? "into" : "from", read_status, draw_status, err);
        *why = buf;
        return false;
    }
    return true;
}

}  // namespace cldmabuf
