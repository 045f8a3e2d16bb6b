// EGL and GLES entry points, resolved at run time.  The layer never links
// libEGL: an OpenCL program without EGL loads the layer as before, and the
// EGL functions then fail with a clear error.  libEGL.so.1 (glvnd's, or the
// one named by CLDMABUF_EGL_LIB) is dlopen'ed on first use; a program that
// already uses EGL gets the same library instance, so its EGLDisplay and
// EGLContext handles are valid here.  GL functions come from
// eglGetProcAddress (EGL 1.5 / EGL_KHR_get_all_proc_addresses), which
// dispatches to the current context's vendor.
#pragma once

#ifndef EGL_NO_X11
#define EGL_NO_X11 1
#endif
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl31.h>

#include <string>

namespace cldmabuf {

// Not in every eglext.h.
#ifndef EGL_MESA_device_software
#define EGL_MESA_device_software 1
#endif
#ifndef EGL_DRM_RENDER_NODE_FILE_EXT
#define EGL_DRM_RENDER_NODE_FILE_EXT 0x3377
#endif

struct EglApi {
    // Core EGL (dlsym)
    PFNEGLGETPROCADDRESSPROC GetProcAddress = nullptr;
    PFNEGLGETERRORPROC GetError = nullptr;
    PFNEGLQUERYSTRINGPROC QueryString = nullptr;
    PFNEGLQUERYCONTEXTPROC QueryContext = nullptr;
    PFNEGLCREATECONTEXTPROC CreateContext = nullptr;
    PFNEGLDESTROYCONTEXTPROC DestroyContext = nullptr;
    PFNEGLMAKECURRENTPROC MakeCurrent = nullptr;
    PFNEGLGETCURRENTCONTEXTPROC GetCurrentContext = nullptr;
    PFNEGLGETCURRENTDISPLAYPROC GetCurrentDisplay = nullptr;
    PFNEGLGETCURRENTSURFACEPROC GetCurrentSurface = nullptr;
    PFNEGLQUERYAPIPROC QueryAPI = nullptr;
    PFNEGLBINDAPIPROC BindAPI = nullptr;
    // Extensions (eglGetProcAddress; NULL when the implementation lacks them)
    PFNEGLCREATEIMAGEKHRPROC CreateImageKHR = nullptr;
    PFNEGLDESTROYIMAGEKHRPROC DestroyImageKHR = nullptr;
    PFNEGLEXPORTDMABUFIMAGEQUERYMESAPROC ExportDMABUFImageQueryMESA = nullptr;
    PFNEGLEXPORTDMABUFIMAGEMESAPROC ExportDMABUFImageMESA = nullptr;
    PFNEGLQUERYDISPLAYATTRIBEXTPROC QueryDisplayAttribEXT = nullptr;
    PFNEGLQUERYDEVICESTRINGEXTPROC QueryDeviceStringEXT = nullptr;
    const char *(EGLAPIENTRYP GetDisplayDriverName)(EGLDisplay) = nullptr;  // EGL_MESA_query_driver
    // GLES (eglGetProcAddress; valid while a GLES context is current)
    void(GL_APIENTRYP GenTextures)(GLsizei, GLuint *) = nullptr;
    void(GL_APIENTRYP DeleteTextures)(GLsizei, const GLuint *) = nullptr;
    void(GL_APIENTRYP BindTexture)(GLenum, GLuint) = nullptr;
    void(GL_APIENTRYP GetTexLevelParameteriv)(GLenum, GLint, GLenum, GLint *) = nullptr;
    void(GL_APIENTRYP EGLImageTargetTexture2DOES)(GLenum, void *) = nullptr;
    GLenum(GL_APIENTRYP GetGLError)(void) = nullptr;
    void(GL_APIENTRYP Flush)(void) = nullptr;
    // The tiled-export copy (layer/egl/linear_copy.cpp)
    void(GL_APIENTRYP Finish)(void) = nullptr;
    void(GL_APIENTRYP GetIntegerv)(GLenum, GLint *) = nullptr;
    void(GL_APIENTRYP GetBooleanv)(GLenum, GLboolean *) = nullptr;
    GLboolean(GL_APIENTRYP IsEnabled)(GLenum) = nullptr;
    void(GL_APIENTRYP Enable)(GLenum) = nullptr;
    void(GL_APIENTRYP Disable)(GLenum) = nullptr;
    void(GL_APIENTRYP ColorMask)(GLboolean, GLboolean, GLboolean, GLboolean) = nullptr;
    void(GL_APIENTRYP Viewport)(GLint, GLint, GLsizei, GLsizei) = nullptr;
    void(GL_APIENTRYP GenFramebuffers)(GLsizei, GLuint *) = nullptr;
    void(GL_APIENTRYP DeleteFramebuffers)(GLsizei, const GLuint *) = nullptr;
    void(GL_APIENTRYP BindFramebuffer)(GLenum, GLuint) = nullptr;
    void(GL_APIENTRYP FramebufferTexture2D)(GLenum, GLenum, GLenum, GLuint, GLint) = nullptr;
    void(GL_APIENTRYP FramebufferRenderbuffer)(GLenum, GLenum, GLenum, GLuint) = nullptr;
    GLenum(GL_APIENTRYP CheckFramebufferStatus)(GLenum) = nullptr;
    void(GL_APIENTRYP GenRenderbuffers)(GLsizei, GLuint *) = nullptr;
    void(GL_APIENTRYP DeleteRenderbuffers)(GLsizei, const GLuint *) = nullptr;
    void(GL_APIENTRYP BindRenderbuffer)(GLenum, GLuint) = nullptr;
    void(GL_APIENTRYP EGLImageTargetRenderbufferStorageOES)(GLenum, void *) = nullptr;
    void(GL_APIENTRYP BlitFramebuffer)(GLint, GLint, GLint, GLint, GLint, GLint, GLint, GLint, GLbitfield,
                                       GLenum) = nullptr;
    // cl_khr_gl_event (layer/egl/gl_event.cpp)
    GLenum(GL_APIENTRYP ClientWaitSync)(GLsync, GLbitfield, GLuint64) = nullptr;
    GLboolean(GL_APIENTRYP IsSync)(GLsync) = nullptr;
    // EGL_MESA_gl_interop (GL buffers; struct layouts in layer/egl/dmabuf_export.cpp)
    int(EGLAPIENTRYP GLInteropExportObjectMESA)(EGLDisplay, EGLContext, void *in, void *out) = nullptr;
    int(EGLAPIENTRYP GLInteropFlushObjectsMESA)(EGLDisplay, EGLContext, unsigned, void *in, GLsync *) = nullptr;
};

// The loaded API, or nullptr with *why set (first call loads; thread-safe).
const EglApi *egl_api(std::string *why = nullptr);

// Whether the display's extension string has `name` (whole word).
bool egl_display_has(const EglApi &egl, EGLDisplay dpy, const char *name);

// Whether `dpy` is an initialised EGLDisplay (eglQueryString answers).
bool display_valid(const EglApi &egl, EGLDisplay dpy);

// Readable name of an EGL error code.
const char *egl_error_name(EGLint err);

}  // namespace cldmabuf
