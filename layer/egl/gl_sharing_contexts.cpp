// cl_khr_gl_sharing's contexts on EGL: clCreateContext and
// clCreateContextFromType with CL_GL_CONTEXT_KHR / CL_EGL_DISPLAY_KHR.  The
// ICD gets the list without the GL properties; the layer remembers the
// sharing (remember_share) and answers CL_CONTEXT_PROPERTIES with the
// application's list.  clGetGLContextInfoKHR answers, for such a list, which
// devices may share with the display.
#include "layer/egl/gl_sharing_contexts.hpp"

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/egl/display_devices.hpp"
#include "layer/egl/entry_points.hpp"
#include "layer/egl/forwarding.hpp"
#include "layer/base/log.hpp"
#include "layer/base/param_answer.hpp"

#include <CL/cl_egl.h>
#include <CL/cl_gl.h>

namespace cldmabuf::egl {
namespace {

std::mutex shares_mutex;
std::unordered_map<cl_context, GlShare> shares;

void CL_CALLBACK on_context_destroyed(cl_context context, void *) {
    std::lock_guard lock(shares_mutex);
    shares.erase(context);
}

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

void remember_share(cl_context context, const GlShare &share) {
    {
        std::lock_guard lock(shares_mutex);
        shares[context] = share;
    }
    if (next().clSetContextDestructorCallback)
        next().clSetContextDestructorCallback(context, on_context_destroyed, nullptr);
}

bool find_share(cl_context context, GlShare *out) {
    std::lock_guard lock(shares_mutex);
    auto it = shares.find(context);
    if (it == shares.end()) return false;
    if (out) *out = it->second;
    return true;
}

cl_int check_gl_request(const ContextRequest &req, const EglApi **egl_out, const char *what) {
    if (req.error != CL_SUCCESS) {
        LOG_ERROR("%s: %s", what, req.why.c_str());
        return req.error;
    }
    if (req.other_window_system) {
        LOG_ERROR("%s: the layer shares with GL only through EGL (CL_EGL_DISPLAY_KHR), not GLX/WGL/CGL", what);
        return CL_INVALID_OPERATION;
    }
    if (req.has_gl_context && !req.has_display) {
        LOG_ERROR("%s: CL_GL_CONTEXT_KHR needs CL_EGL_DISPLAY_KHR", what);
        return CL_INVALID_OPERATION;
    }
    std::string why;
    const EglApi *egl = egl_api(&why);
    if (!egl) {
        LOG_ERROR("%s: EGL is not available: %s", what, why.c_str());
        return CL_INVALID_OPERATION;
    }
    if (!display_valid(*egl, req.display)) {
        LOG_ERROR("%s: CL_EGL_DISPLAY_KHR is not an initialised EGLDisplay", what);
        return CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR;
    }
    if (req.has_gl_context) {
        EGLint type = 0;
        if (!egl->QueryContext(req.display, req.gl_context, EGL_CONTEXT_CLIENT_TYPE, &type)) {
            LOG_ERROR("%s: CL_GL_CONTEXT_KHR is not an EGLContext of the display (%s)", what,
                      egl_error_name(egl->GetError()));
            return CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR;
        }
    }
    *egl_out = egl;
    return CL_SUCCESS;
}

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
    IcdContext context(next().clCreateContextFromType(req.stripped.data(), type, notify, user_data, &err));
    if (!context) {
        if (errcode_ret) *errcode_ret = err;
        return nullptr;
    }
    std::string why;
    if (check_devices(*egl, req.display, context_device_list(context.get()), &why) != CL_SUCCESS) {
        LOG_ERROR("clCreateContextFromType: %s", why.c_str());
        if (errcode_ret) *errcode_ret = CL_INVALID_OPERATION;
        return nullptr;
    }
    remember(context.get(), req);
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return context.hand_off();  // the application's
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
