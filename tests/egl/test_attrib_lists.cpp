// layer/egl's attribute lists without EGL (layer/egl/attrib_lists.cpp): the
// GL-sharing context properties the ICD never sees, clCreateFromEGLImageKHR's
// properties, the GL texture targets.  The fuzz target fuzz-egl-attribs
// (tests/fuzz) checks the same rules on generated lists.
#include <catch2/catch_test_macros.hpp>

#include <string>

#include "CL/cl_ext_cldmabuf.h"
#include "layer/egl/attrib_lists.hpp"
#include "layer/egl/gl_sharing_contexts.hpp"

using namespace cldmabuf;
using namespace cldmabuf::egl;

namespace {
const cl_context_properties kDisplay = 0x100, kContext = 0x200;
}  // namespace

TEST_CASE("context properties: the GL keys are taken out for the ICD") {
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, 0x42, CL_GL_CONTEXT_KHR, kContext,
                                           CL_EGL_DISPLAY_KHR, kDisplay, 0};
    ContextRequest req;
    parse_context_properties(props, &req);
    CHECK(req.error == CL_SUCCESS);
    CHECK(req.any_gl);
    CHECK(req.has_gl_context);
    CHECK(req.has_display);
    CHECK(req.stripped == std::vector<cl_context_properties>{CL_CONTEXT_PLATFORM, 0x42, 0});
    CHECK(req.original == std::vector<cl_context_properties>(props, props + 7));
}

// Found by fuzz-egl-attribs: these entries never reach the ICD, so nothing
// refused them and the last value won silently.
TEST_CASE("context properties: a GL key given twice is CL_INVALID_PROPERTY") {
    const cl_context_properties props[] = {CL_EGL_DISPLAY_KHR, kDisplay, CL_GL_CONTEXT_KHR, kContext,
                                           CL_GL_CONTEXT_KHR, kContext + 1, 0};
    ContextRequest req;
    parse_context_properties(props, &req);
    CHECK(req.error == CL_INVALID_PROPERTY);
    CHECK(req.why.find("CL_GL_CONTEXT_KHR is given twice") != std::string::npos);
    // check_gl_request refuses it before it looks for EGL.
    const EglApi *egl = nullptr;
    CHECK(check_gl_request(req, &egl, "clCreateContext") == CL_INVALID_PROPERTY);
    CHECK(egl == nullptr);
}

TEST_CASE("context properties: the tiled consent takes only CL_TRUE or CL_FALSE") {
    const cl_context_properties bad[] = {CL_EGL_DISPLAY_KHR, kDisplay, CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF, 2, 0};
    ContextRequest req;
    parse_context_properties(bad, &req);
    CHECK(req.error == CL_INVALID_PROPERTY);
    CHECK(req.why.find("CL_TRUE or CL_FALSE") != std::string::npos);
    const cl_context_properties good[] = {CL_EGL_DISPLAY_KHR, kDisplay, CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF, CL_TRUE, 0};
    ContextRequest ok;
    parse_context_properties(good, &ok);
    CHECK(ok.error == CL_SUCCESS);
    CHECK(ok.allow_tiled);
}

TEST_CASE("EGLImage properties and GL texture targets") {
    bool tiled = false;
    std::string why;
    const cl_egl_image_properties_khr consent[] = {CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF, CL_TRUE, 0};
    CHECK(parse_egl_image_properties(consent, &tiled, &why) == CL_SUCCESS);
    CHECK(tiled);
    const cl_egl_image_properties_khr other[] = {0x3092, 1, 0};
    CHECK(parse_egl_image_properties(other, &tiled, &why) == CL_INVALID_PROPERTY);
    CHECK_FALSE(why.empty());
    CHECK(gl_texture_target_rule(GL_TEXTURE_2D, &why) == CL_SUCCESS);
    CHECK(gl_texture_target_rule(GL_TEXTURE_3D, &why) == CL_INVALID_OPERATION);
    CHECK(gl_texture_target_rule(GL_RENDERBUFFER, &why) == CL_INVALID_VALUE);
}
