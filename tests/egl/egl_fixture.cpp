#include "egl_fixture.hpp"

#include <cstdlib>
#include <cstring>

namespace egltest {

std::string platform_string(cl_platform_id p, cl_platform_info what) {
    size_t n = 0;
    clGetPlatformInfo(p, what, 0, nullptr, &n);
    std::string s(n, '\0');
    clGetPlatformInfo(p, what, n, s.data(), nullptr);
    return s.c_str();
}

bool has_word(const std::string &list, const char *word) {
    return (" " + list + " ").find(std::string(" ") + word + " ") != std::string::npos;
}

ClPick::ClPick() {
    cl_uint n = 0;
    if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || !n) return;
    std::vector<cl_platform_id> platforms(n);
    clGetPlatformIDs(n, platforms.data(), nullptr);
    const char *want = std::getenv("CLDMABUF_TEST_PLATFORM");
    for (cl_platform_id p : platforms) {
        std::string pname = platform_string(p, CL_PLATFORM_NAME);
        if (want && *want && pname.find(want) == std::string::npos) continue;
        cl_device_id d = nullptr;
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, nullptr) != CL_SUCCESS) continue;
        platform = p;
        device = d;
        name = pname;
        return;
    }
}

bool Gl::has_gl_extension(const char *name) const {
    const char *list = reinterpret_cast<const char *>(glGetString(GL_EXTENSIONS));
    return list && has_word(list, name);
}

namespace {

std::string driver_name(EGLDisplay dpy) {
    auto query = reinterpret_cast<const char *(*)(EGLDisplay)>(eglGetProcAddress("eglGetDisplayDriverName"));
    const char *ext = eglQueryString(dpy, EGL_EXTENSIONS);
    const char *name = query && ext && has_word(ext, "EGL_MESA_query_driver") ? query(dpy) : nullptr;
    return name ? name : "";
}

// Mesa's software EGL device (EGL_MESA_device_software): llvmpipe on the
// plain software winsys, which maps an imported dma-buf itself.
EGLDeviceEXT software_device() {
    auto query_devices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    auto query_string = reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(eglGetProcAddress("eglQueryDeviceStringEXT"));
    EGLDeviceEXT devices[16];
    EGLint n = 0;
    if (!query_devices || !query_string || !query_devices(16, devices, &n)) return EGL_NO_DEVICE_EXT;
    for (EGLint i = 0; i < n; ++i) {
        const char *ext = query_string(devices[i], EGL_EXTENSIONS);
        if (ext && has_word(ext, "EGL_MESA_device_software")) return devices[i];
    }
    return EGL_NO_DEVICE_EXT;
}

}  // namespace

Gl::Gl(GlDisplay which) {
    auto get_platform_display =
        reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    const char *client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (!get_platform_display || !client || !has_word(client, "EGL_MESA_platform_surfaceless")) {
        why = "no EGL_MESA_platform_surfaceless";
        return;
    }
    dpy = get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, nullptr, nullptr)) {
        why = "eglInitialize failed on the surfaceless platform";
        dpy = EGL_NO_DISPLAY;
        return;
    }
    driver = driver_name(dpy);
    // Where no GPU driver claims a node, Mesa's surfaceless platform runs
    // llvmpipe on kms_swrast over a KMS-capable node (vgem in the VM lane).
    // kms_swrast maps an imported dma-buf with DRM_IOCTL_MODE_MAP_DUMB, which
    // the kernel refuses for an imported GEM object (EINVAL): the EGLImage is
    // created and the framebuffer is complete, but glReadPixels fails and
    // the first draw or clear writes to address 0 (SIGSEGV, measured in the
    // VM; docs/allocator.md).  The software device maps the dma-buf itself.
    if (which == GlDisplay::foreign_dmabufs && driver == "kms_swrast") {
        eglTerminate(dpy);
        dpy = EGL_NO_DISPLAY;
        const EGLDeviceEXT device = software_device();
        if (device == EGL_NO_DEVICE_EXT) {
            why = "kms_swrast cannot map imported dma-bufs and there is no EGL_MESA_device_software device";
            return;
        }
        dpy = get_platform_display(EGL_PLATFORM_DEVICE_EXT, device, nullptr);
        if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, nullptr, nullptr)) {
            why = "eglInitialize failed on the software EGL device";
            dpy = EGL_NO_DISPLAY;
            return;
        }
        driver = driver_name(dpy);
    }
    const char *ext = eglQueryString(dpy, EGL_EXTENSIONS);
    if (!ext || !has_word(ext, "EGL_MESA_image_dma_buf_export")) {
        why = "the display has no EGL_MESA_image_dma_buf_export";
        return;
    }
    eglBindAPI(EGL_OPENGL_ES_API);
    const EGLint attribs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_NONE};
    ctx = eglCreateContext(dpy, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attribs);
    if (ctx == EGL_NO_CONTEXT || !eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
        why = "no surfaceless GLES 3 context";
        ctx = EGL_NO_CONTEXT;
    }
}

Gl::~Gl() {
    if (dpy == EGL_NO_DISPLAY) return;
    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (ctx != EGL_NO_CONTEXT) eglDestroyContext(dpy, ctx);
    eglTerminate(dpy);
}

}  // namespace egltest
