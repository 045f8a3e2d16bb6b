// The EGL-level fault injector's control API (tests/egl/egl_fault.cpp): the
// library the layer loads through CLDMABUF_EGL_LIB, opened here by the same
// path (one instance) and its functions looked up with dlsym.
#pragma once

#include <dlfcn.h>

#include <cstdlib>

namespace egltest {

struct EglFaultControl {
    void (*record)(void) = nullptr;                                    // count calls, fail none
    void (*arm)(const char *fn, long nth, int code, int perform) = nullptr;
    void (*off)(void) = nullptr;
    int (*fired)(void) = nullptr;
    const char *(*called)(void) = nullptr;                             // "fn=count fn=count ..."
    long (*live_images)(void) = nullptr;                               // EGLImages the layer holds
    long (*live_contexts)(void) = nullptr;                             // EGL contexts the layer holds
    bool loaded = false;

    EglFaultControl() {
        const char *path = std::getenv("CLDMABUF_EGL_LIB");
        void *lib = path && *path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
        if (!lib) return;
        if (!dlsym(lib, "cldmabuf_egl_fault_arm")) return;  // CLDMABUF_EGL_LIB is not the injector
        record = reinterpret_cast<decltype(record)>(dlsym(lib, "cldmabuf_egl_fault_record"));
        arm = reinterpret_cast<decltype(arm)>(dlsym(lib, "cldmabuf_egl_fault_arm"));
        off = reinterpret_cast<decltype(off)>(dlsym(lib, "cldmabuf_egl_fault_off"));
        fired = reinterpret_cast<decltype(fired)>(dlsym(lib, "cldmabuf_egl_fault_fired"));
        called = reinterpret_cast<decltype(called)>(dlsym(lib, "cldmabuf_egl_fault_called"));
        live_images = reinterpret_cast<decltype(live_images)>(dlsym(lib, "cldmabuf_egl_fault_live_images"));
        live_contexts = reinterpret_cast<decltype(live_contexts)>(dlsym(lib, "cldmabuf_egl_fault_live_contexts"));
        loaded = record && arm && off && fired && called && live_images && live_contexts;
    }
};

inline const EglFaultControl &egl_fault() {
    static const EglFaultControl control;
    return control;
}

}  // namespace egltest
