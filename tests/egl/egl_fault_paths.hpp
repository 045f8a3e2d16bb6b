// The EGL export paths the fault sweep runs (tests/egl/test_egl_fault_sweep.cpp):
// each a set-up and a tear-down that are not counted and an operation that
// is, returning CL_SUCCESS only when the bytes OpenCL sees are the texture's.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gl_share.hpp"

namespace egltest {

constexpr cl_int kWrongData = 1;  // "succeeded" with the wrong bytes: always a failure

// What every run shares: the GL producer, a GL-sharing context that consents
// to the GPU copy (consent changes nothing for a linear export), one RGBA8
// texture with a known pattern, and an EGLImage of it the test made.
struct SweepEnv {
    Gl gl;
    std::unique_ptr<Shared> shared;
    GLuint tex = 0;
    std::vector<uint8_t> pixels;
    EGLImageKHR image = EGL_NO_IMAGE_KHR;  // the application's (clCreateFromEGLImageKHR's input)
    clCreateFromEGLImageKHR_fn create_from_egl = nullptr;
    clEnqueueAcquireEGLObjectsKHR_fn acquire_egl = nullptr;
    clEnqueueReleaseEGLObjectsKHR_fn release_egl = nullptr;
    SweepEnv();  // REQUIREs what it needs; check gl.ok() first (NEED_GL)
    void make();
    ~SweepEnv();
};

struct SweepRun {
    cl_mem mem = nullptr;
    bool acquired = false;
};

struct SweepPath {
    const char *name;
    bool force_copy;          // CLDMABUF_DEBUG=egl-force-copy: the linear-copy path (layer/egl/linear_copy.cpp)
    std::set<cl_int> allowed;  // the spec's errors of the entry points the operation calls
    std::function<void(SweepEnv &, SweepRun &)> setup;
    std::function<cl_int(SweepEnv &, SweepRun &)> op;
    std::function<void(SweepEnv &, SweepRun &)> teardown;
};

const std::vector<SweepPath> &sweep_paths();

}  // namespace egltest
