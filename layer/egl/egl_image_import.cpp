// EGLImage import: clCreateFromEGLImageKHR for ICDs without cl_khr_egl_image,
// and import_image, the path every EGLImage takes (GL textures and
// renderbuffers too, gl_objects.cpp).
#include "layer/egl/egl_image_import.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <drm_fourcc.h>

#include "CL/cl_ext_cldmabuf.h"
#include "layer/core/dispatch.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/egl/attrib_lists.hpp"
#include "layer/egl/display_devices.hpp"
#include "layer/egl/dmabuf_export.hpp"
#include "layer/egl/entry_points.hpp"
#include "layer/egl/forwarding.hpp"
#include "layer/egl/linear_copy.hpp"
#include "layer/import/buffer.hpp"
#include "layer/import/image.hpp"
#include "layer/import/fresh_handles.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/core/registry.hpp"
#include "layer/base/settings.hpp"
#include "layer/import/record.hpp"

namespace cldmabuf::egl {
namespace {

// CLDMABUF_DEBUG=egl-force-copy: treat every export as tiled, so that the
// copy path runs on drivers that export LINEAR (tests on llvmpipe).  Read on
// each import: tests switch it within one process.
bool force_copy() { return debug_on(DebugWord::egl_force_copy); }

std::string fourcc_text(int fourcc) {
    std::string s;
    for (int i = 0; i < 4; ++i) s += static_cast<char>((fourcc >> (8 * i)) & 0xff);
    return s;
}

// The layer's own import failed: its code in the vocabulary of the entry
// point that made it.  The fd is one the layer exported itself, so what the
// dma-buf import says about its handle (CL_INVALID_PROPERTY: not open, not a
// dma-buf, not mappable) or its size is no error of the caller's GL or EGL
// object: the implementation could not use what EGL gave it.
cl_int interop_code(cl_int err, const ImportRequest &req) {
    switch (err) {
    case CL_IMAGE_FORMAT_NOT_SUPPORTED:
    case CL_INVALID_IMAGE_FORMAT_DESCRIPTOR: return req.bad_format;
    case CL_OUT_OF_HOST_MEMORY: return CL_OUT_OF_HOST_MEMORY;
    default: return CL_OUT_OF_RESOURCES;
    }
}

}  // namespace

cl_mem refuse(cl_int *errcode_ret, cl_int err, const char *what, const std::string &why) {
    return refuse_import(errcode_ret, err, what, why);
}

cl_mem import_failed(cl_int *errcode_ret, cl_int err, const char *what, const std::string &why) {
    LOG_ERROR("%s: %s", what, why.c_str());
    if (errcode_ret) *errcode_ret = err;
    return nullptr;
}

bool valid_access_flags(cl_mem_flags flags) {
    return flags == CL_MEM_READ_ONLY || flags == CL_MEM_WRITE_ONLY || flags == CL_MEM_READ_WRITE;
}

cl_mem import_image(cl_context context, cl_mem_flags flags, const EglApi &egl, EglObject object,
                    const ImportRequest &req, cl_int *errcode_ret) {
    std::string why;
    if (cl_int err = check_devices(egl, object.display, context_device_list(context), &why); err != CL_SUCCESS)
        return refuse(errcode_ret, err, req.what, why);

    ExportedImage ex;
    if (!export_dmabuf(egl, object.display, object.image, &ex, &why))
        return refuse(errcode_ret, req.invalid_object, req.what, why);
    // Every refusal below closes ex.fd (ExportedImage owns it).
    auto give_up = [&](cl_int err, const std::string &reason) { return refuse(errcode_ret, err, req.what, reason); };

    cl_dma_buf_layout_cldmabuf layout;
    if (cl_dma_buf_fourcc_layout_cldmabuf(static_cast<cl_uint>(ex.fourcc), &layout) != 1)
        return give_up(req.bad_format,
                       "the EGLImage's dma-buf format " + fourcc_text(ex.fourcc) + " has no OpenCL image format");
    // INVALID ("implicit") from EGL means the driver's default layout, which
    // is tiled on every GPU driver: only a linear export is used in place.
    const bool forced = force_copy();
    if (ex.modifier != DRM_FORMAT_MOD_LINEAR || forced) {
        char hex[32];
        std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(ex.modifier));
        if (!req.allow_tiled)
            return give_up(req.refused_tiling,
                           std::string("the EGLImage's layout (modifier ") + hex +
                               (forced ? ", copy forced by CLDMABUF_DEBUG=egl-force-copy" : "") +
                               ") is not linear: it needs a GPU copy; set CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF "
                               "to CL_TRUE to consent to it");
    }
    if (!query_image_size(egl, object.display, object.image, &ex.width, &ex.height, &why))
        return give_up(req.invalid_object, why);
    if (ex.modifier != DRM_FORMAT_MOD_LINEAR || forced) {
        auto copy = std::make_shared<LinearCopy>();
        if (!create_linear_copy(egl, object.display, display_device(egl, object.display), ex.fourcc, ex.width,
                                ex.height, copy.get(), &why))
            return give_up(CL_OUT_OF_RESOURCES, "tiled export, no linear copy: " + why);
        ex.fd = std::move(copy->fd);  // the tiled export itself is not imported: it closes

        ex.stride = static_cast<EGLint>(copy->stride);
        ex.offset = 0;
        ex.modifier = DRM_FORMAT_MOD_LINEAR;
        object.copy = copy;
        LOG_INFO("%s: tiled export (or forced copy): GPU copy through a linear %dx%d buffer from GBM on %s", req.what,
                 ex.width, ex.height, copy->node.c_str());
    }

    ImageLayerProperties plane;
    plane.plane_offset = static_cast<uint64_t>(ex.offset);
    plane.has_modifier = true;
    plane.modifier = ex.modifier;
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = static_cast<size_t>(ex.width);
    desc.image_height = static_cast<size_t>(ex.height);
    desc.image_row_pitch = static_cast<size_t>(ex.stride);
    cl_int err = CL_SUCCESS;
    // The layer's own image import (the plane's offset and modifier keep it
    // from an ICD's), as an application's clCreateImageWithProperties would get.
    IcdMem mem(import_dmabuf_image(context, dmabuf_image_request(ex.fd.get(), plane), flags,
                                   &layout.planes[0].format, &desc, nullptr, &err));
    if (!mem) {
        if (object.copy) destroy_linear_copy(egl, object.display, object.copy.get());
        return import_failed(errcode_ret, interop_code(err, req), req.what,
                             "the dma-buf import of the EGLImage failed (error " + std::to_string(err) + ")");
    }
    close_handed_fd(mem.get(), ex.fd.release());
    object.context = context;
    object.flags = flags;
    if (!track_object(mem, object)) {
        if (object.copy) destroy_linear_copy(egl, object.display, object.copy.get());  // no destructor will
        return refuse(errcode_ret, CL_OUT_OF_RESOURCES, req.what, "cannot register the destructor callback");
    }
    LOG_INFO("%s: %dx%d %s (modifier linear%s), pitch %d, offset %d -> %p", req.what, ex.width, ex.height,
             fourcc_text(ex.fourcc).c_str(), object.copy ? ", GPU copy" : "", ex.stride, ex.offset,
             static_cast<void *>(mem.get()));
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return mem.hand_off();  // the application's
}

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
