// OpenCL + surfaceless EGL/GLES 3 set-up for the EGL interop tests.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#include <CL/cl.h>
#include <CL/cl_egl.h>
#include <CL/cl_ext.h>
#include <CL/cl_gl.h>

#define EGL_NO_X11 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl3.h>
#include <GLES2/gl2ext.h>

#include <string>
#include <vector>

namespace egltest {

std::string platform_string(cl_platform_id p, cl_platform_info what);
bool has_word(const std::string &list, const char *word);

// The OpenCL platform/device picked by CLDMABUF_TEST_PLATFORM (substring of
// the platform name; default: the first with a device).
struct ClPick {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    std::string name;
    ClPick();
};

// Which EGL display a test gets.
enum class GlDisplay {
    surfaceless,      // Mesa's surfaceless platform, whatever driver it picks
    foreign_dmabufs,  // one whose driver can render into a dma-buf another exporter made
};

// An EGL display (EGL_MESA_platform_surfaceless, or Mesa's software EGL
// device, see GlDisplay) with a current GLES 3 context, or `why` saying what
// is missing.
struct Gl {
    EGLDisplay dpy = EGL_NO_DISPLAY;
    EGLContext ctx = EGL_NO_CONTEXT;
    std::string driver;  // EGL_MESA_query_driver's name, or empty
    std::string why;
    bool ok() const { return ctx != EGL_NO_CONTEXT; }
    bool has_gl_extension(const char *name) const;
    explicit Gl(GlDisplay which = GlDisplay::surfaceless);
    ~Gl();
};

}  // namespace egltest
