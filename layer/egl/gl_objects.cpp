// GL object import: cl_khr_gl_sharing's memory objects for contexts the
// layer serves (clCreateFromGLTexture(2D/3D), clCreateFromGLRenderbuffer,
// clCreateFromGLBuffer) and the queries on them (clGetGLObjectInfo,
// clGetGLTextureInfo).  A 2D texture or renderbuffer becomes an EGLImage
// (eglCreateImageKHR) imported like any EGLImage (egl_image_import.hpp); a
// buffer object is exported as a dma-buf (EGL_MESA_gl_interop,
// dmabuf_export.hpp) and imported as a buffer.
#include <cstdint>
#include <string>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/egl/attrib_lists.hpp"
#include "layer/egl/display_devices.hpp"
#include "layer/egl/dmabuf_export.hpp"
#include "layer/egl/egl_api.hpp"
#include "layer/egl/egl_image_import.hpp"
#include "layer/egl/entry_points.hpp"
#include "layer/egl/forwarding.hpp"
#include "layer/egl/gl_sharing_contexts.hpp"
#include "layer/egl/object_records.hpp"
#include "layer/import/buffer.hpp"
#include "layer/import/fresh_handles.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/base/param_answer.hpp"
#include "layer/import/record.hpp"

namespace cldmabuf::egl {
namespace {

constexpr const char *not_shared = "the context was not created with CL_GL_CONTEXT_KHR and CL_EGL_DISPLAY_KHR";

// The ICD serves the call: the context is not one the layer made and the ICD has cl_khr_gl_sharing.
bool icd_serves(cl_context context) { return !find_share(context, nullptr) && forward_gl(context); }

cl_mem create_from_gl(cl_context context, cl_mem_flags flags, EGLenum egl_target, cl_gl_object_type gl_type,
                      GLenum target, GLint level, GLuint name, const char *what, cl_int *errcode_ret) {
    GlShare share;
    if (!find_share(context, &share)) return refuse(errcode_ret, CL_INVALID_CONTEXT, what, not_shared);
    if (!valid_access_flags(flags)) return refuse(errcode_ret, CL_INVALID_VALUE, what, access_flags_rule);
    if (level < 0) return refuse(errcode_ret, CL_INVALID_MIP_LEVEL, what, "miplevel is negative");
    if (name == 0) return refuse(errcode_ret, CL_INVALID_GL_OBJECT, what, "the GL object name is 0");
    std::string why;
    const EglApi *egl = egl_api(&why);
    if (!egl || !egl->CreateImageKHR || !egl->DestroyImageKHR)
        return refuse(errcode_ret, CL_INVALID_CONTEXT, what, "EGL (with eglCreateImageKHR) is not available: " + why);

    std::vector<EGLint> attribs;
    if (egl_target == EGL_GL_TEXTURE_2D_KHR) attribs = {EGL_GL_TEXTURE_LEVEL_KHR, level};
    // The texture keeps its contents (EGL_KHR_image_base: otherwise undefined).
    attribs.insert(attribs.end(), {EGL_IMAGE_PRESERVED_KHR, EGL_TRUE, EGL_NONE});
    EGLImageKHR image = egl->CreateImageKHR(share.display, share.context, egl_target,
                                            reinterpret_cast<EGLClientBuffer>(static_cast<uintptr_t>(name)),
                                            attribs.data());
    if (image == EGL_NO_IMAGE_KHR) {
        const EGLint e = egl->GetError();
        const cl_int code = e == EGL_BAD_MATCH && level > 0 ? CL_INVALID_MIP_LEVEL : CL_INVALID_GL_OBJECT;
        return refuse(errcode_ret, code, what,
                      std::string("eglCreateImageKHR from GL object ") + std::to_string(name) + " failed (" +
                          egl_error_name(e) + "): not a complete " +
                          (egl_target == EGL_GL_TEXTURE_2D_KHR ? "2D texture" : "renderbuffer") +
                          " of the context, or the level does not exist");
    }
    EglObject object;
    object.display = share.display;
    object.image = image;
    object.own_image = true;
    object.from_gl = true;
    object.producer = share.context;
    object.gl_type = gl_type;
    object.target = target;
    object.level = level;
    object.name = name;
    ImportRequest req{what, CL_INVALID_GL_OBJECT, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, CL_INVALID_OPERATION,
                      share.allow_tiled};
    cl_mem mem = import_image(context, flags, *egl, object, req, errcode_ret);
    if (!mem) egl->DestroyImageKHR(share.display, image);
    return mem;
}

}  // namespace

cl_mem CL_API_CALL create_from_gl_texture(cl_context context, cl_mem_flags flags, cl_GLenum target,
                                          cl_GLint miplevel, cl_GLuint texture, cl_int *errcode_ret) {
    if (icd_serves(context) && next().clCreateFromGLTexture)
        return fresh_mem(next().clCreateFromGLTexture(context, flags, target, miplevel, texture, errcode_ret));
    constexpr const char *what = "clCreateFromGLTexture";
    if (std::string why; cl_int err = gl_texture_target_rule(target, &why)) return refuse(errcode_ret, err, what, why);
    return create_from_gl(context, flags, EGL_GL_TEXTURE_2D_KHR, CL_GL_OBJECT_TEXTURE2D, target, miplevel, texture,
                          what, errcode_ret);
}

cl_mem CL_API_CALL create_from_gl_texture_2d(cl_context context, cl_mem_flags flags, cl_GLenum target,
                                             cl_GLint miplevel, cl_GLuint texture, cl_int *errcode_ret) {
    if (icd_serves(context) && next().clCreateFromGLTexture2D)
        return fresh_mem(next().clCreateFromGLTexture2D(context, flags, target, miplevel, texture, errcode_ret));
    return create_from_gl_texture(context, flags, target, miplevel, texture, errcode_ret);
}

cl_mem CL_API_CALL create_from_gl_texture_3d(cl_context context, cl_mem_flags flags, cl_GLenum target,
                                             cl_GLint miplevel, cl_GLuint texture, cl_int *errcode_ret) {
    if (icd_serves(context) && next().clCreateFromGLTexture3D)
        return fresh_mem(next().clCreateFromGLTexture3D(context, flags, target, miplevel, texture, errcode_ret));
    constexpr const char *what = "clCreateFromGLTexture3D";
    if (!find_share(context, nullptr)) return refuse(errcode_ret, CL_INVALID_CONTEXT, what, not_shared);
    return refuse(errcode_ret, CL_INVALID_OPERATION, what, "only GL_TEXTURE_2D textures are shared by the layer");
}

cl_mem CL_API_CALL create_from_gl_renderbuffer(cl_context context, cl_mem_flags flags, cl_GLuint renderbuffer,
                                               cl_int *errcode_ret) {
    if (icd_serves(context) && next().clCreateFromGLRenderbuffer)
        return fresh_mem(next().clCreateFromGLRenderbuffer(context, flags, renderbuffer, errcode_ret));
    return create_from_gl(context, flags, EGL_GL_RENDERBUFFER_KHR, CL_GL_OBJECT_RENDERBUFFER, GL_RENDERBUFFER, 0,
                          renderbuffer, "clCreateFromGLRenderbuffer", errcode_ret);
}

cl_mem CL_API_CALL create_from_gl_buffer(cl_context context, cl_mem_flags flags, cl_GLuint buffer,
                                         cl_int *errcode_ret) {
    if (icd_serves(context) && next().clCreateFromGLBuffer)
        return fresh_mem(next().clCreateFromGLBuffer(context, flags, buffer, errcode_ret));
    constexpr const char *what = "clCreateFromGLBuffer";
    GlShare share;
    if (!find_share(context, &share)) return refuse(errcode_ret, CL_INVALID_CONTEXT, what, not_shared);
    if (!valid_access_flags(flags)) return refuse(errcode_ret, CL_INVALID_VALUE, what, access_flags_rule);
    if (buffer == 0) return refuse(errcode_ret, CL_INVALID_GL_OBJECT, what, "the GL buffer name is 0");
    std::string why;
    const EglApi *egl = egl_api(&why);
    if (!egl) return refuse(errcode_ret, CL_INVALID_CONTEXT, what, "EGL is not available: " + why);
    if (cl_int err = check_devices(*egl, share.display, context_device_list(context), &why); err != CL_SUCCESS)
        return refuse(errcode_ret, err, what, why);
    GlBufferExport ex;
    cl_int code = CL_SUCCESS;
    if (!export_gl_buffer(*egl, share.display, share.context, buffer, flags, &ex, &code, &why))
        return refuse(errcode_ret, code, what, why);
    if (ex.offset != 0 || ex.size == 0) {  // ex closes its fd
        return refuse(errcode_ret, CL_INVALID_GL_OBJECT, what,
                      "GL buffer " + std::to_string(buffer) + " is a sub-allocation (offset " +
                          std::to_string(ex.offset) + ", size " + std::to_string(ex.size) +
                          " of its dma-buf): only whole dma-bufs are imported");
    }
    cl_int err = CL_SUCCESS;
    // The dma-buf import an application's clCreateBufferWithProperties gets
    // (the ICD's own where it imports dma-bufs).
    IcdMem mem(import_dmabuf_buffer(context, dmabuf_buffer_request(ex.fd.get()), flags, ex.size, nullptr, &err));
    if (!mem) {  // the refused import left ex.fd alone: it closes with ex
        return import_failed(errcode_ret, err, what,
                             "the dma-buf import of the GL buffer failed (error " + std::to_string(err) + ")");
    }
    close_handed_fd(mem.get(), ex.fd.release());
    EglObject object;
    object.context = context;
    object.display = share.display;
    object.from_gl = true;
    object.gl_type = CL_GL_OBJECT_BUFFER;
    object.name = buffer;
    object.producer = share.context;
    object.flags = flags;
    if (!track_object(mem, object))
        return refuse(errcode_ret, CL_OUT_OF_RESOURCES, what, "cannot register the destructor callback");
    LOG_INFO("%s: GL buffer %u, %zu bytes -> %p", what, buffer, ex.size, static_cast<void *>(mem.get()));
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return mem.hand_off();  // the application's
}

// cl_khr_gl_sharing's queries on memory objects the layer made; objects the
// ICD made (it has the extension) go to the ICD.
cl_int CL_API_CALL get_gl_object_info(cl_mem mem, cl_gl_object_type *type, cl_GLuint *name) {
    EglObject object;
    if (!find_object(mem, &object) || !object.from_gl) {
        cl_context context = mem_context(mem);
        if (!context) return CL_INVALID_MEM_OBJECT;
        if (forward_gl(context) && next().clGetGLObjectInfo) return next().clGetGLObjectInfo(mem, type, name);
        return CL_INVALID_GL_OBJECT;
    }
    if (type) *type = object.gl_type;
    if (name) *name = object.name;
    return CL_SUCCESS;
}

cl_int CL_API_CALL get_gl_texture_info(cl_mem mem, cl_gl_texture_info param, size_t size, void *value,
                                       size_t *size_ret) {
    EglObject object;
    if (!find_object(mem, &object) || !object.from_gl) {
        cl_context context = mem_context(mem);
        if (!context) return CL_INVALID_MEM_OBJECT;
        if (forward_gl(context) && next().clGetGLTextureInfo)
            return next().clGetGLTextureInfo(mem, param, size, value, size_ret);
        return CL_INVALID_GL_OBJECT;
    }
    if (object.gl_type != CL_GL_OBJECT_TEXTURE2D) return CL_INVALID_GL_OBJECT;  // renderbuffers, buffers
    switch (param) {
    case CL_GL_TEXTURE_TARGET: {
        const cl_GLenum target = object.target;
        return answer(&target, sizeof target, size, value, size_ret);
    }
    case CL_GL_MIPMAP_LEVEL: {
        const cl_GLint level = object.level;
        return answer(&level, sizeof level, size, value, size_ret);
    }
    case CL_GL_NUM_SAMPLES: {
        const GLsizei samples = 1;  // GLsizei, as cl_gl.h documents CL_GL_NUM_SAMPLES
        return answer(&samples, sizeof samples, size, value, size_ret);
    }
    default: return CL_INVALID_VALUE;
    }
}

}  // namespace cldmabuf::egl
