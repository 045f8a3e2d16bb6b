// libcldmabuf-egl-fault.so: a test-only libEGL for the layer
// (CLDMABUF_EGL_LIB=.../libcldmabuf-egl-fault.so) that forwards to the real
// libEGL.so.1 and fails the Nth call of one EGL/GL function the layer uses on
// the export path (tests/egl/test_egl_fault_sweep.cpp, docs/reliability.md).
//
// Why a wrapper library and not an LD_PRELOAD: the layer dlopens libEGL
// itself and takes its GL functions from eglGetProcAddress, so a library
// named by CLDMABUF_EGL_LIB sees exactly the layer's calls and nothing of the
// test's or Mesa's (the test links the real libEGL.so.1; the same instance
// serves both, so handles are shared).  eglGetProcAddress hands out the
// wrapped functions below for the names listed in kWrapped, the real ones for
// everything else.
//
// An injected failure is what EGL/GL itself reports: the function's failure
// value (EGL_FALSE, EGL_NO_IMAGE_KHR, NULL, GL_FRAMEBUFFER_UNSUPPORTED) and
// the error the next eglGetError of that thread returns; an injected GL error
// is glGetError's answer.  "perform" faults run the real call first and then
// report failure: eglExportDMABUFImageMESA with its fds already filled (the
// layer must close them), eglDestroyImageKHR (the image is gone either way).
//
// The wrapper counts the EGLImages and EGL contexts created through it and
// not yet destroyed (the layer's own), for the sweep's leak check.
#define EGL_NO_X11 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl3.h>

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

void *real_lib() {
    static void *lib = [] {
        const char *path = std::getenv("CLDMABUF_EGL_FAULT_REAL");
        void *h = dlopen(path && *path ? path : "libEGL.so.1", RTLD_NOW | RTLD_GLOBAL);
        if (!h) std::fprintf(stderr, "egl-fault: cannot load the real libEGL: %s\n", dlerror());
        return h;
    }();
    return lib;
}

template <typename F>
F real(const char *name) {
    void *lib = real_lib();
    return lib ? reinterpret_cast<F>(dlsym(lib, name)) : nullptr;
}

// GL and extension functions come from the real eglGetProcAddress.
template <typename F>
F real_proc(const char *name) {
    static auto gpa = real<__eglMustCastToProperFunctionPointerType (*)(const char *)>("eglGetProcAddress");
    return gpa ? reinterpret_cast<F>(gpa(name)) : nullptr;
}

// ---- the fault state ---------------------------------------------------------

std::mutex g_mutex;
bool g_counting = false;
std::map<std::string, long> g_calls;  // per function, since the last record/arm
std::string g_fn;                      // the function to fail ("" none)
long g_nth = -1;                       // its call to fail (0-based)
int g_code = 0;                        // the EGL error (EGL functions) or GL error (glGetError)
bool g_perform = false;                // run the real call, then report failure
int g_fired = 0;
std::atomic<long> g_live_images{0}, g_live_contexts{0};
thread_local EGLint t_pending = EGL_SUCCESS;  // what eglGetError reports next

// Counts a call of `fn`; true when this one is to fail.
bool inject(const char *fn) {
    std::lock_guard lock(g_mutex);
    if (!g_counting) return false;
    const long index = g_calls[fn]++;
    if (g_fn != fn || index != g_nth) return false;
    ++g_fired;
    return true;
}

int code() {
    std::lock_guard lock(g_mutex);
    return g_code;
}
bool perform() {
    std::lock_guard lock(g_mutex);
    return g_perform;
}
void fail_with_egl_error() { t_pending = code(); }

// ---- wrapped EGL core functions (dlsym'd by the layer) ----------------------

#define REAL(name) static auto real_##name = real<decltype(&::name)>(#name)

__eglMustCastToProperFunctionPointerType wrapped_proc(const char *name);

}  // namespace

EXPORT __eglMustCastToProperFunctionPointerType eglGetProcAddress(const char *name) {
    if (auto f = wrapped_proc(name)) return f;
    REAL(eglGetProcAddress);
    return real_eglGetProcAddress ? real_eglGetProcAddress(name) : nullptr;
}

EXPORT EGLint eglGetError(void) {
    REAL(eglGetError);
    const EGLint real_err = real_eglGetError();  // cleared either way, as EGL does
    if (t_pending != EGL_SUCCESS) {
        const EGLint e = t_pending;
        t_pending = EGL_SUCCESS;
        return e;
    }
    return real_err;
}

EXPORT const char *eglQueryString(EGLDisplay dpy, EGLint name) {
    REAL(eglQueryString);
    if (inject("eglQueryString")) {
        fail_with_egl_error();
        return nullptr;
    }
    return real_eglQueryString(dpy, name);
}

EXPORT EGLBoolean eglQueryContext(EGLDisplay dpy, EGLContext ctx, EGLint attribute, EGLint *value) {
    REAL(eglQueryContext);
    if (inject("eglQueryContext")) {
        fail_with_egl_error();
        return EGL_FALSE;
    }
    return real_eglQueryContext(dpy, ctx, attribute, value);
}

EXPORT EGLContext eglCreateContext(EGLDisplay dpy, EGLConfig config, EGLContext share, const EGLint *attribs) {
    REAL(eglCreateContext);
    if (inject("eglCreateContext")) {
        fail_with_egl_error();
        return EGL_NO_CONTEXT;
    }
    EGLContext ctx = real_eglCreateContext(dpy, config, share, attribs);
    if (ctx != EGL_NO_CONTEXT) ++g_live_contexts;
    return ctx;
}

EXPORT EGLBoolean eglDestroyContext(EGLDisplay dpy, EGLContext ctx) {
    REAL(eglDestroyContext);
    const bool fail = inject("eglDestroyContext");
    // Counted as gone whatever EGL answers: a stale context (its display
    // terminated) is gone already.
    const EGLBoolean ok = real_eglDestroyContext(dpy, ctx);
    --g_live_contexts;
    if (fail) {
        fail_with_egl_error();
        return EGL_FALSE;
    }
    return ok;
}

EXPORT EGLBoolean eglMakeCurrent(EGLDisplay dpy, EGLSurface draw, EGLSurface read, EGLContext ctx) {
    REAL(eglMakeCurrent);
    if (inject("eglMakeCurrent")) {
        fail_with_egl_error();
        return EGL_FALSE;
    }
    return real_eglMakeCurrent(dpy, draw, read, ctx);
}

// No failure value: they report the binding, whatever it is.
EXPORT EGLContext eglGetCurrentContext(void) {
    REAL(eglGetCurrentContext);
    return real_eglGetCurrentContext();
}
EXPORT EGLDisplay eglGetCurrentDisplay(void) {
    REAL(eglGetCurrentDisplay);
    return real_eglGetCurrentDisplay();
}
EXPORT EGLSurface eglGetCurrentSurface(EGLint which) {
    REAL(eglGetCurrentSurface);
    return real_eglGetCurrentSurface(which);
}
EXPORT EGLenum eglQueryAPI(void) {
    REAL(eglQueryAPI);
    return real_eglQueryAPI();
}
EXPORT EGLBoolean eglBindAPI(EGLenum api) {
    REAL(eglBindAPI);
    return real_eglBindAPI(api);
}

namespace {

// ---- wrapped extension and GL functions (eglGetProcAddress) -----------------

EGLImageKHR EGLAPIENTRY w_eglCreateImageKHR(EGLDisplay dpy, EGLContext ctx, EGLenum target, EGLClientBuffer buf,
                                            const EGLint *attribs) {
    static auto f = real_proc<PFNEGLCREATEIMAGEKHRPROC>("eglCreateImageKHR");
    if (inject("eglCreateImageKHR")) {
        fail_with_egl_error();
        return EGL_NO_IMAGE_KHR;
    }
    EGLImageKHR image = f(dpy, ctx, target, buf, attribs);
    if (image != EGL_NO_IMAGE_KHR) ++g_live_images;
    return image;
}

EGLBoolean EGLAPIENTRY w_eglDestroyImageKHR(EGLDisplay dpy, EGLImageKHR image) {
    static auto f = real_proc<PFNEGLDESTROYIMAGEKHRPROC>("eglDestroyImageKHR");
    const bool fail = inject("eglDestroyImageKHR");
    const EGLBoolean ok = f(dpy, image);
    if (ok) --g_live_images;
    if (fail) {
        fail_with_egl_error();
        return EGL_FALSE;
    }
    return ok;
}

EGLBoolean EGLAPIENTRY w_eglExportDMABUFImageQueryMESA(EGLDisplay dpy, EGLImageKHR image, int *fourcc, int *planes,
                                                      EGLuint64KHR *modifiers) {
    static auto f = real_proc<PFNEGLEXPORTDMABUFIMAGEQUERYMESAPROC>("eglExportDMABUFImageQueryMESA");
    if (inject("eglExportDMABUFImageQueryMESA")) {
        fail_with_egl_error();
        return EGL_FALSE;
    }
    return f(dpy, image, fourcc, planes, modifiers);
}

EGLBoolean EGLAPIENTRY w_eglExportDMABUFImageMESA(EGLDisplay dpy, EGLImageKHR image, int *fds, EGLint *strides,
                                                 EGLint *offsets) {
    static auto f = real_proc<PFNEGLEXPORTDMABUFIMAGEMESAPROC>("eglExportDMABUFImageMESA");
    if (inject("eglExportDMABUFImageMESA")) {
        if (perform()) f(dpy, image, fds, strides, offsets);  // a driver failing after the fds were made
        fail_with_egl_error();
        return EGL_FALSE;
    }
    return f(dpy, image, fds, strides, offsets);
}

EGLBoolean EGLAPIENTRY w_eglQueryDisplayAttribEXT(EGLDisplay dpy, EGLint attribute, EGLAttrib *value) {
    static auto f = real_proc<PFNEGLQUERYDISPLAYATTRIBEXTPROC>("eglQueryDisplayAttribEXT");
    if (inject("eglQueryDisplayAttribEXT")) {
        fail_with_egl_error();
        return EGL_FALSE;
    }
    return f(dpy, attribute, value);
}

const char *EGLAPIENTRY w_eglQueryDeviceStringEXT(EGLDeviceEXT dev, EGLint name) {
    static auto f = real_proc<PFNEGLQUERYDEVICESTRINGEXTPROC>("eglQueryDeviceStringEXT");
    if (inject("eglQueryDeviceStringEXT")) {
        fail_with_egl_error();
        return nullptr;
    }
    return f(dev, name);
}

using DriverNameFn = const char *(EGLAPIENTRY *)(EGLDisplay);
const char *EGLAPIENTRY w_eglGetDisplayDriverName(EGLDisplay dpy) {
    static auto f = real_proc<DriverNameFn>("eglGetDisplayDriverName");
    if (inject("eglGetDisplayDriverName")) {
        fail_with_egl_error();
        return nullptr;
    }
    return f(dpy);
}

// glGetError: the injected GL error instead of the real state (which stays
// as it is; the layer clears errors before its GL work and reads them after).
GLenum GL_APIENTRY w_glGetError(void) {
    static auto f = real_proc<GLenum(GL_APIENTRYP)(void)>("glGetError");
    if (inject("glGetError")) return static_cast<GLenum>(code());
    return f();
}

GLenum GL_APIENTRY w_glCheckFramebufferStatus(GLenum target) {
    static auto f = real_proc<GLenum(GL_APIENTRYP)(GLenum)>("glCheckFramebufferStatus");
    if (inject("glCheckFramebufferStatus")) return GL_FRAMEBUFFER_UNSUPPORTED;
    return f(target);
}

struct Wrapped {
    const char *name;
    __eglMustCastToProperFunctionPointerType fn;
};
#define WRAP(n) {#n, reinterpret_cast<__eglMustCastToProperFunctionPointerType>(w_##n)}
const Wrapped kWrapped[] = {
    WRAP(eglCreateImageKHR),        WRAP(eglDestroyImageKHR),      WRAP(eglExportDMABUFImageQueryMESA),
    WRAP(eglExportDMABUFImageMESA), WRAP(eglQueryDisplayAttribEXT), WRAP(eglQueryDeviceStringEXT),
    WRAP(eglGetDisplayDriverName),  WRAP(glGetError),              WRAP(glCheckFramebufferStatus),
};

__eglMustCastToProperFunctionPointerType wrapped_proc(const char *name) {
    for (const Wrapped &w : kWrapped)
        if (std::strcmp(w.name, name) == 0) return real_proc<void *>(name) ? w.fn : nullptr;
    return nullptr;
}

}  // namespace

// ---- control (the test dlopens this library with RTLD_NOLOAD) ---------------

// Count the calls per function, fail none.
EXPORT void cldmabuf_egl_fault_record(void) {
    std::lock_guard lock(g_mutex);
    g_calls.clear();
    g_fn.clear();
    g_nth = -1;
    g_fired = 0;
    g_counting = true;
}

// Fail call `nth` (0-based, from now) of `fn` with `code` (an EGL error, or a
// GL error for glGetError); `perform`: run the real call first.
EXPORT void cldmabuf_egl_fault_arm(const char *fn, long nth, int code, int perform) {
    std::lock_guard lock(g_mutex);
    g_calls.clear();
    g_fn = fn;
    g_nth = nth;
    g_code = code;
    g_perform = perform != 0;
    g_fired = 0;
    g_counting = true;
}

EXPORT void cldmabuf_egl_fault_off(void) {
    std::lock_guard lock(g_mutex);
    g_counting = false;
    g_fn.clear();
    g_nth = -1;
}

EXPORT int cldmabuf_egl_fault_fired(void) {
    std::lock_guard lock(g_mutex);
    return g_fired;
}

// The calls of `fn` counted since the last record/arm.
EXPORT long cldmabuf_egl_fault_calls(const char *fn) {
    std::lock_guard lock(g_mutex);
    auto it = g_calls.find(fn);
    return it == g_calls.end() ? 0 : it->second;
}

// The functions called since the last record/arm, "name=count" separated by spaces.
EXPORT const char *cldmabuf_egl_fault_called(void) {
    static thread_local std::string out;
    std::lock_guard lock(g_mutex);
    out.clear();
    for (const auto &[fn, n] : g_calls) out += (out.empty() ? "" : " ") + fn + "=" + std::to_string(n);
    return out.c_str();
}

EXPORT long cldmabuf_egl_fault_live_images(void) { return g_live_images.load(); }
EXPORT long cldmabuf_egl_fault_live_contexts(void) { return g_live_contexts.load(); }
