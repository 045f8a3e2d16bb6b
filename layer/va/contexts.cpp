// Contexts created with CL_CONTEXT_VA_API_DISPLAY_INTEL: the ICD gets the
// list without the VA display and without CL_CONTEXT_INTEROP_USER_SYNC (the
// layer does the synchronisation that property speaks of: vaSyncSurface on
// acquire unless it is CL_TRUE); the layer remembers the display and answers
// CL_CONTEXT_PROPERTIES with the application's list.  The layer's
// CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF = CL_TRUE in the same list is the
// consent of docs/images.md for every plane imported in the context (an X/Y
// tiled surface then goes through the blitter's de-tiled copy); it is taken
// off too, and refused without a VA display.
#include <string>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "layer/core/dispatch.hpp"
#include "layer/base/log.hpp"
#include "layer/base/param_answer.hpp"
#include "layer/va/entry_points.hpp"
#include "layer/va/forwarding.hpp"
#include "layer/va/libva.hpp"
#include "layer/va/shared_objects.hpp"
#include "layer/icd/devices.hpp"

namespace cldmabuf::va {
namespace {

struct Request {
    bool has_display = false;
    VADisplay display = nullptr;
    bool user_sync = false;
    bool tiled_given = false;
    cl_context_properties tiled_value = 0;  // CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF's, when given
    cl_platform_id platform = nullptr;
    std::vector<cl_context_properties> original, stripped;
};

void parse(const cl_context_properties *props, Request *req) {
    if (!props) return;
    size_t i = 0;
    for (; props[i]; i += 2) {
        const cl_context_properties key = props[i], value = props[i + 1];
        req->original.push_back(key);
        req->original.push_back(value);
        if (key == CL_CONTEXT_VA_API_DISPLAY_INTEL) {
            req->has_display = true;
            req->display = reinterpret_cast<VADisplay>(value);
            continue;
        }
        if (key == CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF) {
            req->tiled_given = true;
            req->tiled_value = value;
            continue;
        }
        if (key == CL_CONTEXT_INTEROP_USER_SYNC) req->user_sync = value == CL_TRUE;
        if (key == CL_CONTEXT_PLATFORM) req->platform = reinterpret_cast<cl_platform_id>(value);
        req->stripped.push_back(key);
        req->stripped.push_back(value);
    }
    req->original.push_back(0);
}

// `pairs` (key, value, ... with or without the 0 at its end) without `key`, 0-terminated.
std::vector<cl_context_properties> without(const std::vector<cl_context_properties> &pairs,
                                           cl_context_properties key) {
    std::vector<cl_context_properties> out;
    for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
        if (pairs[i] == key) continue;
        out.push_back(pairs[i]);
        out.push_back(pairs[i + 1]);
    }
    out.push_back(0);
    return out;
}

// The list the ICD is given: no VA display, and no USER_SYNC (the layer's to honour).
std::vector<cl_context_properties> for_icd(const Request &req) {
    return without(req.stripped, CL_CONTEXT_INTEROP_USER_SYNC);
}

// The application's list without the consent property (for an ICD that
// shares VA surfaces itself: the consent is the layer's word).
std::vector<cl_context_properties> without_consent(const Request &req) {
    return without(req.original, CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF);
}

// The consent property: CL_TRUE or CL_FALSE, and only beside a VA display.
cl_int check_consent(const Request &req, const char *what) {
    if (!req.tiled_given) return CL_SUCCESS;
    if (!req.has_display) {
        LOG_ERROR("%s: CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF is a context property only beside "
                  "CL_CONTEXT_VA_API_DISPLAY_INTEL",
                  what);
        return CL_INVALID_PROPERTY;
    }
    if (req.tiled_value != CL_TRUE && req.tiled_value != CL_FALSE) {
        LOG_ERROR("%s: CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF must be CL_TRUE or CL_FALSE, not %lld", what,
                  static_cast<long long>(req.tiled_value));
        return CL_INVALID_PROPERTY;
    }
    return CL_SUCCESS;
}

// The display must be one libva knows.  CL_SUCCESS or the spec's error.
cl_int check_display(const Request &req, const char *what) {
    const Libva *api = libva();
    if (!api) {
        LOG_ERROR("%s: CL_CONTEXT_VA_API_DISPLAY_INTEL given but libva cannot be loaded", what);
        return CL_INVALID_OPERATION;
    }
    if (!req.display || !api->display_is_valid(req.display)) {
        LOG_ERROR("%s: CL_CONTEXT_VA_API_DISPLAY_INTEL %p is not a valid VADisplay", what, req.display);
        return CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL;
    }
    return CL_SUCCESS;
}

void keep(cl_context context, const Request &req) {
    VaContext info;
    info.display = req.display;
    info.user_sync = req.user_sync;
    info.allow_tiled = req.tiled_value == CL_TRUE;
    info.original = req.original;
    remember_context(context, info);
    LOG_INFO("va: context %p shares VADisplay %p (%s synchronisation%s)", static_cast<void *>(context), req.display,
             req.user_sync ? "the application's" : "the layer's",
             info.allow_tiled ? "; tiled surfaces through the blitter's copy" : "");
}

cl_context fail_context(cl_int *errcode_ret, cl_int err) {
    if (errcode_ret) *errcode_ret = err;
    return nullptr;
}

}  // namespace

bool offered() { return libva() != nullptr; }

cl_context create_context(const cl_context_properties *properties, cl_uint num_devices, const cl_device_id *devices,
                          void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *), void *user_data,
                          cl_int *errcode_ret, CreateContextFn downstream) {
    Request req;
    parse(properties, &req);
    if (cl_int err = check_consent(req, "clCreateContext"); err != CL_SUCCESS) return fail_context(errcode_ret, err);
    if (!req.has_display) return downstream(properties, num_devices, devices, notify, user_data, errcode_ret);
    cl_platform_id platform = req.platform ? req.platform : (devices && num_devices ? device_platform(devices[0]) : nullptr);
    if (icd_has_va(platform)) {
        const std::vector<cl_context_properties> list = without_consent(req);
        return downstream(list.data(), num_devices, devices, notify, user_data, errcode_ret);
    }
    if (cl_int err = check_display(req, "clCreateContext"); err != CL_SUCCESS) return fail_context(errcode_ret, err);
    const std::vector<cl_context_properties> list = for_icd(req);
    cl_context context = downstream(list.size() > 1 ? list.data() : nullptr, num_devices, devices, notify, user_data,
                                    errcode_ret);
    if (context) keep(context, req);
    return context;
}

cl_context create_context_from_type(const cl_context_properties *properties, cl_device_type type,
                                    void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                    void *user_data, cl_int *errcode_ret, CreateContextFromTypeFn downstream) {
    Request req;
    parse(properties, &req);
    if (cl_int err = check_consent(req, "clCreateContextFromType"); err != CL_SUCCESS) return fail_context(errcode_ret, err);
    if (!req.has_display) return downstream(properties, type, notify, user_data, errcode_ret);
    if (icd_has_va(req.platform)) {
        const std::vector<cl_context_properties> list = without_consent(req);
        return downstream(list.data(), type, notify, user_data, errcode_ret);
    }
    if (cl_int err = check_display(req, "clCreateContextFromType"); err != CL_SUCCESS) return fail_context(errcode_ret, err);
    const std::vector<cl_context_properties> list = for_icd(req);
    cl_context context = downstream(list.size() > 1 ? list.data() : nullptr, type, notify, user_data, errcode_ret);
    if (context) keep(context, req);
    return context;
}

bool context_info(cl_context context, cl_context_info name, size_t size, void *value, size_t *size_ret, cl_int *err) {
    if (name != CL_CONTEXT_PROPERTIES) return false;
    VaContext info;
    if (!find_context(context, &info)) return false;
    // Validate the handle through the ICD first (a dead context's entry may linger).
    if (cl_int e = next().clGetContextInfo(context, CL_CONTEXT_NUM_DEVICES, 0, nullptr, nullptr); e != CL_SUCCESS) {
        *err = e;
        return true;
    }
    *err = answer(info.original.data(), info.original.size() * sizeof(cl_context_properties), size, value, size_ret);
    return true;
}

}  // namespace cldmabuf::va
