// cl_khr_gl_sharing's queries: clGetGLObjectInfo and clGetGLTextureInfo on
// memory objects the layer made, clGetGLContextInfoKHR for an EGL display.
// Objects the ICD made (it has the extension) go to the ICD.
#include <string>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/egl/context_request.hpp"
#include "layer/egl/device_check.hpp"
#include "layer/egl/egl_objects.hpp"
#include "layer/egl/entry_points.hpp"
#include "layer/egl/forwarding.hpp"
#include "layer/base/log.hpp"
#include "layer/base/param_answer.hpp"

namespace cldmabuf::egl {

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

cl_int CL_API_CALL get_gl_context_info(const cl_context_properties *properties, cl_gl_context_info name,
                                       size_t size, void *value, size_t *size_ret) {
    ContextRequest req;
    parse_context_properties(properties, &req);
    if (icd_gl_sharing(req.platform) && next().clGetGLContextInfoKHR)
        return next().clGetGLContextInfoKHR(properties, name, size, value, size_ret);
    if (name != CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR && name != CL_DEVICES_FOR_GL_CONTEXT_KHR) return CL_INVALID_VALUE;
    if (!req.platform) {
        LOG_ERROR("clGetGLContextInfoKHR: give CL_CONTEXT_PLATFORM (the layer serves one platform at a time)");
        return CL_INVALID_PLATFORM;
    }
    if (!req.has_gl_context) {
        LOG_ERROR("clGetGLContextInfoKHR: properties name no GL context (CL_GL_CONTEXT_KHR)");
        return CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR;
    }
    const EglApi *egl = nullptr;
    if (cl_int err = check_gl_request(req, &egl, "clGetGLContextInfoKHR"); err != CL_SUCCESS) return err;
    cl_uint n = 0;
    if (cl_int err = next().clGetDeviceIDs(req.platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n); err != CL_SUCCESS)
        return err == CL_DEVICE_NOT_FOUND ? answer(nullptr, 0, size, value, size_ret) : err;
    std::vector<cl_device_id> all(n);
    if (cl_int err = next().clGetDeviceIDs(req.platform, CL_DEVICE_TYPE_ALL, n, all.data(), nullptr); err != CL_SUCCESS)
        return err;
    const std::vector<cl_device_id> matching = devices_for_display(*egl, req.display, all);
    if (name == CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR)
        return answer(matching.data(), matching.empty() ? 0 : sizeof(cl_device_id), size, value, size_ret);
    return answer(matching.data(), matching.size() * sizeof(cl_device_id), size, value, size_ret);
}

}  // namespace cldmabuf::egl
