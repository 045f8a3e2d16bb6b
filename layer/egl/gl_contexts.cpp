// cl_khr_gl_sharing's contexts on EGL: clCreateContext and
// clCreateContextFromType with CL_GL_CONTEXT_KHR / CL_EGL_DISPLAY_KHR.  The
// ICD gets the list without the GL properties; the layer remembers the
// sharing (shared_contexts.hpp) and answers CL_CONTEXT_PROPERTIES with the
// application's list.
#include <string>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/egl/context_request.hpp"
#include "layer/egl/device_check.hpp"
#include "layer/egl/entry_points.hpp"
#include "layer/egl/forwarding.hpp"
#include "layer/egl/shared_contexts.hpp"
#include "layer/base/log.hpp"
#include "layer/base/param_answer.hpp"

namespace cldmabuf::egl {
namespace {

void remember(cl_context context, const ContextRequest &req) {
    if (!req.has_gl_context && !req.allow_tiled) return;
    GlShare share;
    share.display = req.display;
    share.context = req.gl_context;
    share.allow_tiled = req.allow_tiled;
    share.properties = req.original;
    remember_share(context, share);
}

}  // namespace

cl_context CL_API_CALL create_context(const cl_context_properties *properties, cl_uint num_devices,
                                      const cl_device_id *devices,
                                      void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                      void *user_data, cl_int *errcode_ret) {
    ContextRequest req;
    parse_context_properties(properties, &req);
    if (!req.any_gl) return next().clCreateContext(properties, num_devices, devices, notify, user_data, errcode_ret);
    cl_platform_id platform = req.platform ? req.platform : (devices && num_devices ? device_platform(devices[0]) : nullptr);
    if (icd_gl_sharing(platform) && !req.allow_tiled)
        return next().clCreateContext(properties, num_devices, devices, notify, user_data, errcode_ret);
    const EglApi *egl = nullptr;
    if (cl_int err = check_gl_request(req, &egl, "clCreateContext"); err != CL_SUCCESS) {
        if (errcode_ret) *errcode_ret = err;
        return nullptr;
    }
    if (devices && num_devices) {
        std::string why;
        if (check_devices(*egl, req.display, std::vector<cl_device_id>(devices, devices + num_devices), &why) !=
            CL_SUCCESS) {
            LOG_ERROR("clCreateContext: %s", why.c_str());
            if (errcode_ret) *errcode_ret = CL_INVALID_OPERATION;
            return nullptr;
        }
    }
    cl_context context =
        next().clCreateContext(req.stripped.data(), num_devices, devices, notify, user_data, errcode_ret);
    if (context) remember(context, req);
    return context;
}

cl_context CL_API_CALL create_context_from_type(const cl_context_properties *properties, cl_device_type type,
                                                void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                                void *user_data, cl_int *errcode_ret) {
    ContextRequest req;
    parse_context_properties(properties, &req);
    if (!req.any_gl || (icd_gl_sharing(req.platform) && !req.allow_tiled))
        return next().clCreateContextFromType(properties, type, notify, user_data, errcode_ret);
    const EglApi *egl = nullptr;
    if (cl_int err = check_gl_request(req, &egl, "clCreateContextFromType"); err != CL_SUCCESS) {
        if (errcode_ret) *errcode_ret = err;
        return nullptr;
    }
    cl_int err = CL_SUCCESS;
    cl_context context = next().clCreateContextFromType(req.stripped.data(), type, notify, user_data, &err);
    if (!context) {
        if (errcode_ret) *errcode_ret = err;
        return nullptr;
    }
    std::string why;
    if (check_devices(*egl, req.display, context_device_list(context), &why) != CL_SUCCESS) {
        LOG_ERROR("clCreateContextFromType: %s", why.c_str());
        next().clReleaseContext(context);
        if (errcode_ret) *errcode_ret = CL_INVALID_OPERATION;
        return nullptr;
    }
    remember(context, req);
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return context;
}

cl_int CL_API_CALL get_context_info(cl_context context, cl_context_info name, size_t size, void *value,
                                    size_t *size_ret) {
    if (name == CL_CONTEXT_PROPERTIES) {
        GlShare share;
        if (find_share(context, &share)) {
            cl_int err = next().clGetContextInfo(context, CL_CONTEXT_REFERENCE_COUNT, 0, nullptr, nullptr);
            if (err != CL_SUCCESS) return err;
            return answer(share.properties.data(), share.properties.size() * sizeof(cl_context_properties), size,
                          value, size_ret);
        }
    }
    return next().clGetContextInfo(context, name, size, value, size_ret);
}

}  // namespace cldmabuf::egl
