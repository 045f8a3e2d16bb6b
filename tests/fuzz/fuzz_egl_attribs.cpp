// Fuzz target 4: the EGL/GL attribute handling of layer/egl that needs no
// EGL (layer/egl/attrib_lists.cpp): GL-sharing context property lists
// (parse_context_properties), clCreateFromEGLImageKHR's properties, the GL
// texture targets the layer shares, and the DRM fourcc -> OpenCL format
// table an EGLImage's export is imported with (cl_ext_cldmabuf.h).
//
// Asserted:
//  * context lists: `original` is the caller's list; `stripped` (what the
//    ICD sees) is 0-terminated pairs without a GL/EGL/GLX/WGL/CGL key or the
//    layer's CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF, with every other pair kept in
//    order; the flags say exactly which keys were given; a GL key given
//    twice or a CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF value other than
//    CL_TRUE/CL_FALSE is the spec's CL_INVALID_PROPERTY (req.error), since
//    the ICD never sees those entries to judge them;
//  * EGLImage properties: accepted only when every key is
//    CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF with CL_TRUE/CL_FALSE (the last one
//    wins), else CL_INVALID_PROPERTY with a reason;
//  * texture targets: GL_TEXTURE_2D only; other GL texture targets are
//    CL_INVALID_OPERATION, anything else CL_INVALID_VALUE, always a reason;
//  * fourccs: a known fourcc has 1..3 planes, divisors of 1 or 2 and each
//    plane's bytes_per_pixel equal to the element size the image import
//    computes for its OpenCL format (image_element_size).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "fuzz_input.hpp"
#include "layer/egl/attrib_lists.hpp"
#include "layer/import/image_checks.hpp"

using namespace cldmabuf;

namespace {

bool gl_key(cl_context_properties k) {
    return k == CL_GL_CONTEXT_KHR || k == CL_EGL_DISPLAY_KHR || k == CL_GLX_DISPLAY_KHR || k == CL_WGL_HDC_KHR ||
           k == CL_CGL_SHAREGROUP_KHR || k == CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF;
}

void context_list(FuzzedDataProvider &in) {
    std::vector<cl_context_properties> list;
    const int entries = in.ConsumeIntegralInRange<int>(0, 8);
    for (int e = 0; e < entries; ++e) {
        const auto key = static_cast<cl_context_properties>(
            fuzz::pick(in, {CL_GL_CONTEXT_KHR, CL_EGL_DISPLAY_KHR, CL_GLX_DISPLAY_KHR, CL_WGL_HDC_KHR,
                            CL_CGL_SHAREGROUP_KHR, CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF, CL_CONTEXT_PLATFORM,
                            CL_CONTEXT_INTEROP_USER_SYNC, 0x10C00}));
        if (key == 0) continue;
        list.push_back(key);
        list.push_back(static_cast<cl_context_properties>(fuzz::pick(in, {0, 1, CL_TRUE, CL_FALSE, 0x1000, 2})));
    }
    list.push_back(0);
    egl::ContextRequest req;
    egl::parse_context_properties(list.data(), &req);
    FUZZ_ASSERT(req.original == list);
    FUZZ_ASSERT(!req.stripped.empty() && req.stripped.back() == 0 && req.stripped.size() % 2 == 1);
    std::vector<cl_context_properties> kept;
    bool any_gl = false, gl_ctx = false, display = false, other = false, tiled = false, broken = false;
    cl_context_properties platform = 0;
    std::vector<cl_context_properties> gl_seen;
    for (size_t i = 0; i + 1 < list.size(); i += 2) {
        const cl_context_properties k = list[i], v = list[i + 1];
        // The spec's CL_INVALID_PROPERTY for the keys the ICD never sees:
        // given twice, or a value that is not valid.
        if (gl_key(k)) {
            broken = broken || std::find(gl_seen.begin(), gl_seen.end(), k) != gl_seen.end();
            gl_seen.push_back(k);
        }
        if (k == CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF && v != CL_TRUE && v != CL_FALSE) broken = true;
        any_gl = any_gl || gl_key(k);
        gl_ctx = gl_ctx || k == CL_GL_CONTEXT_KHR;
        display = display || k == CL_EGL_DISPLAY_KHR;
        other = other || k == CL_GLX_DISPLAY_KHR || k == CL_WGL_HDC_KHR || k == CL_CGL_SHAREGROUP_KHR;
        if (k == CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF) tiled = v == CL_TRUE;
        if (k == CL_CONTEXT_PLATFORM) platform = v;
        if (!gl_key(k)) kept.insert(kept.end(), {k, v});
    }
    kept.push_back(0);
    FUZZ_ASSERT(req.stripped == kept);
    FUZZ_ASSERT(req.any_gl == any_gl && req.has_gl_context == gl_ctx && req.has_display == display &&
                req.other_window_system == other && req.allow_tiled == tiled);
    FUZZ_ASSERT(reinterpret_cast<cl_context_properties>(req.platform) == platform);
    FUZZ_ASSERT((req.error == CL_INVALID_PROPERTY) == broken);
    FUZZ_ASSERT(req.error == CL_SUCCESS || req.error == CL_INVALID_PROPERTY);
    FUZZ_ASSERT(req.error == CL_SUCCESS || !req.why.empty());
}

void egl_image_list(FuzzedDataProvider &in) {
    std::vector<cl_egl_image_properties_khr> list;
    const int entries = in.ConsumeIntegralInRange<int>(0, 4);
    for (int e = 0; e < entries; ++e) {
        const auto key = static_cast<cl_egl_image_properties_khr>(
            fuzz::pick(in, {CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF, 0x10C0E, 0x3092 /* EGL_IMAGE_PRESERVED_KHR */}));
        if (key == 0) continue;
        list.push_back(key);
        list.push_back(static_cast<cl_egl_image_properties_khr>(fuzz::pick(in, {CL_TRUE, CL_FALSE, 2, 0})));
    }
    list.push_back(0);
    const bool pass_null = in.ConsumeBool();
    bool tiled = true;
    std::string why;
    const cl_int err = egl::parse_egl_image_properties(pass_null ? nullptr : list.data(), &tiled, &why);
    bool ok = true, want_tiled = false;
    if (!pass_null)
        for (size_t i = 0; i + 1 < list.size(); i += 2) {
            if (list[i] != CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF || (list[i + 1] != CL_TRUE && list[i + 1] != CL_FALSE)) {
                ok = false;
                break;
            }
            want_tiled = list[i + 1] == CL_TRUE;
        }
    FUZZ_ASSERT((err == CL_SUCCESS) == ok);
    if (ok) FUZZ_ASSERT(tiled == want_tiled);
    else FUZZ_ASSERT(err == CL_INVALID_PROPERTY && !why.empty());
}

void texture_target(FuzzedDataProvider &in) {
    const auto target = static_cast<cl_GLenum>(fuzz::pick(
        in, {GL_TEXTURE_2D, 0x0DE0, 0x8C18, 0x8C2A, GL_TEXTURE_2D_ARRAY, GL_TEXTURE_3D, 0x84F5,
             GL_TEXTURE_CUBE_MAP_POSITIVE_X, GL_TEXTURE_CUBE_MAP_NEGATIVE_Z, GL_TEXTURE_CUBE_MAP, GL_RENDERBUFFER, 0}));
    std::string why;
    const cl_int err = egl::gl_texture_target_rule(target, &why);
    FUZZ_ASSERT((err == CL_SUCCESS) == (target == GL_TEXTURE_2D));
    FUZZ_ASSERT(err == CL_SUCCESS || ((err == CL_INVALID_OPERATION || err == CL_INVALID_VALUE) && !why.empty()));
    if (target == GL_TEXTURE_CUBE_MAP || target == GL_RENDERBUFFER || target == 0) FUZZ_ASSERT(err == CL_INVALID_VALUE);
}

void fourcc(FuzzedDataProvider &in) {
    const auto code = static_cast<cl_uint>(
        fuzz::pick(in, {CL_DRM_FOURCC_CLDMABUF('N', 'V', '1', '2'), CL_DRM_FOURCC_CLDMABUF('P', '0', '1', '0'),
                        CL_DRM_FOURCC_CLDMABUF('A', 'R', '2', '4'), CL_DRM_FOURCC_CLDMABUF('X', 'R', '2', '4'),
                        CL_DRM_FOURCC_CLDMABUF('A', 'B', '2', '4'), CL_DRM_FOURCC_CLDMABUF('X', 'B', '2', '4'),
                        CL_DRM_FOURCC_CLDMABUF('R', '8', ' ', ' '), CL_DRM_FOURCC_CLDMABUF('G', 'R', '8', '8'),
                        CL_DRM_FOURCC_CLDMABUF('R', '1', '6', ' '), CL_DRM_FOURCC_CLDMABUF('G', 'R', '3', '2'),
                        CL_DRM_FOURCC_CLDMABUF('Y', 'U', 'Y', 'V')}));
    cl_dma_buf_layout_cldmabuf layout;
    const cl_uint planes = cl_dma_buf_fourcc_layout_cldmabuf(code, &layout);
    FUZZ_ASSERT(planes == layout.num_planes && planes <= 3);
    FUZZ_ASSERT(cl_dma_buf_fourcc_layout_cldmabuf(code, nullptr) == planes);
    for (cl_uint p = 0; p < planes; ++p) {
        const cl_dma_buf_plane_cldmabuf &pl = layout.planes[p];
        FUZZ_ASSERT(pl.width_divisor >= 1 && pl.width_divisor <= 2 && pl.height_divisor >= 1 && pl.height_divisor <= 2);
        FUZZ_ASSERT(image_element_size(pl.format) == pl.bytes_per_pixel);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzedDataProvider in(data, size);
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: context_list(in); break;
    case 1: egl_image_list(in); break;
    case 2: texture_target(in); break;
    default: fourcc(in); break;
    }
    return 0;
}
