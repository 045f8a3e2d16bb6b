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

Gl::Gl() {
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
