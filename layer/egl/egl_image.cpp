// cl_khr_egl_image: clCreateFromEGLImageKHR, for ICDs without it.
#include <string>

#include "CL/cl_ext_cldmabuf.h"
#include "layer/core/dispatch.hpp"
#include "layer/egl/attrib_lists.hpp"
#include "layer/egl/egl_api.hpp"
#include "layer/egl/egl_export.hpp"
#include "layer/egl/egl_image_import.hpp"
#include "layer/egl/entry_points.hpp"
#include "layer/egl/forwarding.hpp"
#include "layer/import/fresh_handles.hpp"
#include "layer/egl/refusal.hpp"

namespace cldmabuf::egl {

cl_mem CL_API_CALL create_from_egl_image(cl_context context, CLeglDisplayKHR display, CLeglImageKHR image,
                                         cl_mem_flags flags, const cl_egl_image_properties_khr *properties,
                                         cl_int *errcode_ret) {
    constexpr const char *what = "clCreateFromEGLImageKHR";
    cl_platform_id platform = context_platform(context);
    if (!platform) return refuse(errcode_ret, CL_INVALID_CONTEXT, what, "the context is not valid");
    if (icd_egl_image(platform) && next().clCreateFromEGLImageKHR)
        return fresh_mem(next().clCreateFromEGLImageKHR(context, display, image, flags, properties, errcode_ret));

    ImportRequest req{what, CL_INVALID_EGL_OBJECT_KHR, CL_IMAGE_FORMAT_NOT_SUPPORTED, CL_IMAGE_FORMAT_NOT_SUPPORTED,
                      false};
    if (std::string why; parse_egl_image_properties(properties, &req.allow_tiled, &why) != CL_SUCCESS)
        return refuse(errcode_ret, CL_INVALID_PROPERTY, what, why);
    if (!valid_access_flags(flags)) return refuse(errcode_ret, CL_INVALID_VALUE, what, access_flags_rule);
    std::string why;
    const EglApi *egl = egl_api(&why);
    if (!egl) return refuse(errcode_ret, CL_INVALID_EGL_OBJECT_KHR, what, "EGL is not available: " + why);
    auto dpy = static_cast<EGLDisplay>(display);
    if (!display_valid(*egl, dpy))
        return refuse(errcode_ret, CL_INVALID_EGL_OBJECT_KHR, what, "display is not an initialised EGLDisplay");
    if (image == nullptr) return refuse(errcode_ret, CL_INVALID_EGL_OBJECT_KHR, what, "image is EGL_NO_IMAGE");
    EglObject object;
    object.display = dpy;
    object.image = static_cast<EGLImageKHR>(image);
    return import_image(context, flags, *egl, object, req, errcode_ret);
}

}  // namespace cldmabuf::egl
