// cl_khr_egl_image and cl_khr_gl_sharing (EGL only) for any ICD: what
// layer/egl adds to the platform and hands the loader.
//
//   clCreateFromGLTexture(ctx, tex) ─► eglCreateImageKHR(EGL_GL_TEXTURE_2D_KHR)       gl_objects.cpp
//   clCreateFromEGLImageKHR(image) ─┬─► eglExportDMABUFImageMESA: fd, stride, offset,  egl_image.cpp,
//                                    │   fourcc, modifier                               egl_image_import.cpp
//                                    └─► the layer's clCreateImageWithProperties(DMA_BUF_KHR fd, plane offset,
//                                        modifier) ─► an import like any other (layer/ext/image_import.cpp)
//   clEnqueueAcquire{GL,EGL}Objects ─► the import's acquire (bounded implicit-fence wait, SYNC START)
//   clEnqueueRelease{GL,EGL}Objects ─► the import's release (SYNC END)       gl_acquire_release.cpp
//   clCreateContext(CL_GL_CONTEXT_KHR, CL_EGL_DISPLAY_KHR) ─► the ICD without them   gl_contexts.cpp
//
// Where the ICD has the extension itself the calls go to it unchanged
// (CLDMABUF_EGL=force takes them over anyway; forwarding.cpp).  See docs/egl.md.
#include <cstdlib>
#include <cstring>

#include "layer/egl/egl.hpp"
#include "layer/egl/egl_api.hpp"
#include "layer/egl/entry_points.hpp"
#include "layer/log.hpp"
#include "layer/settings.hpp"

namespace cldmabuf {

EglMode egl_mode() {
    static const EglMode mode = [] {
        const char *v = setting("CLDMABUF_EGL");
        if (!v || !*v || !std::strcmp(v, "auto")) return EglMode::automatic;
        if (!std::strcmp(v, "force")) return EglMode::force;
        if (!std::strcmp(v, "off")) return EglMode::off;
        LOG_WARN("CLDMABUF_EGL=%s is not auto, force or off; using auto", v);
        return EglMode::automatic;
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

void *egl_function(const char *name) {
    if (egl_mode() == EglMode::off || !name) return nullptr;
    if (!std::strcmp(name, "clCreateFromEGLImageKHR")) return reinterpret_cast<void *>(&egl::create_from_egl_image);
    if (!std::strcmp(name, "clEnqueueAcquireEGLObjectsKHR"))
        return reinterpret_cast<void *>(&egl::enqueue_acquire_egl_objects);
    if (!std::strcmp(name, "clEnqueueReleaseEGLObjectsKHR"))
        return reinterpret_cast<void *>(&egl::enqueue_release_egl_objects);
    if (!std::strcmp(name, "clGetGLContextInfoKHR")) return reinterpret_cast<void *>(&egl::get_gl_context_info);
    if (!std::strcmp(name, "clCreateEventFromGLsyncKHR"))
        return reinterpret_cast<void *>(&egl::create_event_from_gl_sync);
    return nullptr;
}

// The one place egl's slots are set.  EGL images and GL buffers are imported
// through the layer's own table (ours()) at call time, so the order of the
// install_* calls does not matter to egl.
void install_egl_overrides(cl_icd_dispatch &table) {
    if (egl_mode() == EglMode::off) return;
    table.clCreateEventFromGLsyncKHR = egl::create_event_from_gl_sync;
    table.clCreateFromEGLImageKHR = egl::create_from_egl_image;
    table.clEnqueueAcquireEGLObjectsKHR = egl::enqueue_acquire_egl_objects;
    table.clEnqueueReleaseEGLObjectsKHR = egl::enqueue_release_egl_objects;
    table.clCreateFromGLTexture = egl::create_from_gl_texture;
    table.clCreateFromGLTexture2D = egl::create_from_gl_texture_2d;
    table.clCreateFromGLTexture3D = egl::create_from_gl_texture_3d;
    table.clCreateFromGLRenderbuffer = egl::create_from_gl_renderbuffer;
    table.clCreateFromGLBuffer = egl::create_from_gl_buffer;
    table.clGetGLObjectInfo = egl::get_gl_object_info;
    table.clGetGLTextureInfo = egl::get_gl_texture_info;
    table.clEnqueueAcquireGLObjects = egl::enqueue_acquire_gl_objects;
    table.clEnqueueReleaseGLObjects = egl::enqueue_release_gl_objects;
    table.clGetGLContextInfoKHR = egl::get_gl_context_info;
    table.clCreateContext = egl::create_context;
    table.clCreateContextFromType = egl::create_context_from_type;
    table.clGetContextInfo = egl::get_context_info;
}

}  // namespace cldmabuf
