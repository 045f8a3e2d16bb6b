#include "layer/egl/egl_api.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "layer/base/log.hpp"
#include "layer/base/settings.hpp"

namespace cldmabuf {
namespace {

std::once_flag load_once;
EglApi api;
bool loaded = false;
std::string load_error;

template <typename T>
bool sym(void *lib, const char *name, T *out) {
    *out = reinterpret_cast<T>(dlsym(lib, name));
    if (!*out) load_error = std::string("libEGL has no ") + name;
    return *out != nullptr;
}

template <typename T>
void proc(const char *name, T *out) {
    *out = reinterpret_cast<T>(api.GetProcAddress(name));
}

void load() {
    const char *path = setting("CLDMABUF_EGL_LIB");
    if (!path || !*path) path = "libEGL.so.1";
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        load_error = std::string("cannot load ") + path + ": " + (e ? e : "unknown error");
        LOG_INFO("EGL interop unavailable: %s", load_error.c_str());
        return;
    }
    // The handle is never closed: EGL objects handed to the application
    // (through cl_mem destructors) may outlive any point we could pick.
    bool ok = sym(lib, "eglGetProcAddress", &api.GetProcAddress) && sym(lib, "eglGetError", &api.GetError) &&
              sym(lib, "eglQueryString", &api.QueryString) && sym(lib, "eglQueryContext", &api.QueryContext) &&
              sym(lib, "eglCreateContext", &api.CreateContext) &&
              sym(lib, "eglDestroyContext", &api.DestroyContext) && sym(lib, "eglMakeCurrent", &api.MakeCurrent) &&
              sym(lib, "eglGetCurrentContext", &api.GetCurrentContext) &&
              sym(lib, "eglGetCurrentDisplay", &api.GetCurrentDisplay) &&
              sym(lib, "eglGetCurrentSurface", &api.GetCurrentSurface) && sym(lib, "eglQueryAPI", &api.QueryAPI) &&
              sym(lib, "eglBindAPI", &api.BindAPI);
    if (!ok) {
        LOG_WARN("EGL interop unavailable: %s", load_error.c_str());
        return;
    }
    proc("eglCreateImageKHR", &api.CreateImageKHR);
    proc("eglDestroyImageKHR", &api.DestroyImageKHR);
    proc("eglExportDMABUFImageQueryMESA", &api.ExportDMABUFImageQueryMESA);
    proc("eglExportDMABUFImageMESA", &api.ExportDMABUFImageMESA);
    proc("eglQueryDisplayAttribEXT", &api.QueryDisplayAttribEXT);
    proc("eglQueryDeviceStringEXT", &api.QueryDeviceStringEXT);
    proc("eglGetDisplayDriverName", &api.GetDisplayDriverName);
    proc("glGenTextures", &api.GenTextures);
    proc("glDeleteTextures", &api.DeleteTextures);
    proc("glBindTexture", &api.BindTexture);
    proc("glGetTexLevelParameteriv", &api.GetTexLevelParameteriv);
    proc("glEGLImageTargetTexture2DOES", &api.EGLImageTargetTexture2DOES);
    proc("glGetError", &api.GetGLError);
    proc("glFlush", &api.Flush);
    proc("glFinish", &api.Finish);
    proc("glGetIntegerv", &api.GetIntegerv);
    proc("glGetBooleanv", &api.GetBooleanv);
    proc("glIsEnabled", &api.IsEnabled);
    proc("glEnable", &api.Enable);
    proc("glDisable", &api.Disable);
    proc("glColorMask", &api.ColorMask);
    proc("glViewport", &api.Viewport);
    proc("glGenFramebuffers", &api.GenFramebuffers);
    proc("glDeleteFramebuffers", &api.DeleteFramebuffers);
    proc("glBindFramebuffer", &api.BindFramebuffer);
    proc("glFramebufferTexture2D", &api.FramebufferTexture2D);
    proc("glFramebufferRenderbuffer", &api.FramebufferRenderbuffer);
    proc("glCheckFramebufferStatus", &api.CheckFramebufferStatus);
    proc("glGenRenderbuffers", &api.GenRenderbuffers);
    proc("glDeleteRenderbuffers", &api.DeleteRenderbuffers);
    proc("glBindRenderbuffer", &api.BindRenderbuffer);
    proc("glEGLImageTargetRenderbufferStorageOES", &api.EGLImageTargetRenderbufferStorageOES);
    proc("glBlitFramebuffer", &api.BlitFramebuffer);
    proc("glClientWaitSync", &api.ClientWaitSync);
    proc("glIsSync", &api.IsSync);
    proc("eglGLInteropExportObjectMESA", &api.GLInteropExportObjectMESA);
    proc("eglGLInteropFlushObjectsMESA", &api.GLInteropFlushObjectsMESA);
    loaded = true;
    LOG_INFO("EGL interop: loaded %s", path);
}

}  // namespace

const EglApi *egl_api(std::string *why) {
    std::call_once(load_once, load);
    if (!loaded) {
        if (why) *why = load_error;
        return nullptr;
    }
    return &api;
}

bool egl_display_has(const EglApi &egl, EGLDisplay dpy, const char *name) {
    const char *list = egl.QueryString(dpy, EGL_EXTENSIONS);
    if (!list) return false;
    const size_t len = std::strlen(name);
    for (const char *p = std::strstr(list, name); p; p = std::strstr(p + 1, name)) {
        bool start = p == list || p[-1] == ' ';
        bool end = p[len] == '\0' || p[len] == ' ';
        if (start && end) return true;
    }
    return false;
}

bool display_valid(const EglApi &egl, EGLDisplay dpy) {
    if (dpy == EGL_NO_DISPLAY) return false;
    if (egl.QueryString(dpy, EGL_VERSION)) return true;
    egl.GetError();  // clear
    return false;
}

const char *egl_error_name(EGLint err) {
    switch (err) {
    case EGL_SUCCESS: return "EGL_SUCCESS";
    case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
    case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
    case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
    case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
    case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
    case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
    case EGL_BAD_CURRENT_SURFACE: return "EGL_BAD_CURRENT_SURFACE";
    case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
    case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
    case EGL_BAD_NATIVE_PIXMAP: return "EGL_BAD_NATIVE_PIXMAP";
    case EGL_BAD_NATIVE_WINDOW: return "EGL_BAD_NATIVE_WINDOW";
    case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
    case EGL_BAD_SURFACE: return "EGL_BAD_SURFACE";
    case EGL_CONTEXT_LOST: return "EGL_CONTEXT_LOST";
    default: return "unknown EGL error";
    }
}

}  // namespace cldmabuf
