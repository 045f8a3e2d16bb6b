// cl_khr_egl_image and cl_khr_gl_sharing (EGL only) for any ICD: what
// layer/egl adds to the platform and hands the loader (egl.hpp).  Built
// without EGL/GLES headers too: then the layer offers no EGL/GL interop
// (CLDMABUF_EGL_INTEROP unset; docs/egl.md).
//
//   clCreateFromGLTexture(ctx, tex) ─► eglCreateImageKHR(EGL_GL_TEXTURE_2D_KHR)       gl_objects.cpp
//   clCreateFromEGLImageKHR(image) ─┬─► eglExportDMABUFImageMESA: fd, stride, offset,  egl_image_import.cpp,
//                                    │   fourcc, modifier                               dmabuf_export.cpp
//                                    └─► the layer's clCreateImageWithProperties(DMA_BUF_KHR fd, plane offset,
//                                        modifier) ─► an import like any other (layer/import/image.cpp)
//   clEnqueueAcquire{GL,EGL}Objects ─► the import's acquire (bounded implicit-fence wait, SYNC START)
//   clEnqueueRelease{GL,EGL}Objects ─► the import's release (SYNC END)       gl_acquire_release.cpp
//   clCreateContext(CL_GL_CONTEXT_KHR, CL_EGL_DISPLAY_KHR) ─► the ICD without them   gl_sharing_contexts.cpp
//
// Where the ICD has the extension itself the calls go to it unchanged
// (CLDMABUF_DEBUG=egl-force takes them over anyway; forwarding.cpp).  See docs/egl.md.
// Which slots and names egl's entry points (entry_points.hpp) take is
// written in layer/entry/dispatch_table.cpp with every other override.
#include "layer/egl/egl.hpp"

#if CLDMABUF_EGL_INTEROP
#include <cstdlib>
#include <cstring>

#include "layer/egl/egl_api.hpp"
#include "layer/base/settings.hpp"

namespace cldmabuf {

EglMode egl_mode() {
    static const EglMode mode = [] {
        // force: CLDMABUF_DEBUG=egl-force, a test's instrument, over the user's auto or off.
        if (debug_on(DebugWord::egl_force)) return EglMode::force;
        const char *v = setting("CLDMABUF_EGL");
        if (v && !std::strcmp(v, "off")) return EglMode::off;
        return EglMode::automatic;  // unset, auto, or refused by the settings loader with its one line
    }();
    return mode;
}

void egl_added_extensions(std::vector<std::pair<const char *, cl_version>> *out) {
    if (egl_mode() == EglMode::off || !egl_api()) return;
    // cl_khr_egl_image 1.0.0, cl_khr_gl_sharing 1.0.0 (OpenCL-Docs xml/cl.xml).
    out->emplace_back("cl_khr_egl_image", CL_MAKE_VERSION(1, 0, 0));
    out->emplace_back("cl_khr_gl_sharing", CL_MAKE_VERSION(1, 0, 0));
    out->emplace_back("cl_khr_gl_event", CL_MAKE_VERSION(1, 0, 0));
}

}  // namespace cldmabuf

#else  // built without EGL/GLES headers: no interop

namespace cldmabuf {

EglMode egl_mode() { return EglMode::off; }
void egl_added_extensions(std::vector<std::pair<const char *, cl_version>> *) {}

}  // namespace cldmabuf

#endif
