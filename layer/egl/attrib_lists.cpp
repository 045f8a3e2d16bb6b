#include "layer/egl/attrib_lists.hpp"

#include <algorithm>
#include <cstdio>

#include "CL/cl_ext_cldmabuf.h"

namespace cldmabuf::egl {

std::string hex_text(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

void parse_context_properties(const cl_context_properties *props, ContextRequest *req) {
    if (!props) return;
    // clCreateContext: "CL_INVALID_PROPERTY if ... the value specified for a
    // supported property name is not valid, or if the same property name is
    // specified more than once".  The keys below never reach the ICD.
    std::vector<cl_context_properties> seen;
    auto invalid = [req](std::string why) {
        if (req->error != CL_SUCCESS) return;  // the first one is reported
        req->error = CL_INVALID_PROPERTY;
        req->why = std::move(why);
    };
    auto once = [&](cl_context_properties key, const char *name) {
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) invalid(std::string(name) + " is given twice");
        seen.push_back(key);
    };
    const cl_context_properties *p = props;
    for (; *p; p += 2) {
        switch (p[0]) {
        case CL_GL_CONTEXT_KHR:
            once(p[0], "CL_GL_CONTEXT_KHR");
            req->any_gl = req->has_gl_context = true;
            req->gl_context = reinterpret_cast<EGLContext>(p[1]);
            continue;
        case CL_EGL_DISPLAY_KHR:
            once(p[0], "CL_EGL_DISPLAY_KHR");
            req->any_gl = req->has_display = true;
            req->display = reinterpret_cast<EGLDisplay>(p[1]);
            continue;
        case CL_GLX_DISPLAY_KHR: case CL_WGL_HDC_KHR: case CL_CGL_SHAREGROUP_KHR:
            once(p[0], "a GLX/WGL/CGL property");
            req->any_gl = req->other_window_system = true;
            continue;
        case CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF:
            once(p[0], "CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF");
            if (p[1] != CL_TRUE && p[1] != CL_FALSE)
                invalid("CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF must be CL_TRUE or CL_FALSE, not " + hex_text(p[1]));
            req->any_gl = true;
            req->allow_tiled = p[1] == CL_TRUE;
            continue;
        case CL_CONTEXT_PLATFORM:
            req->platform = reinterpret_cast<cl_platform_id>(p[1]);
            break;
        default: break;
        }
        req->stripped.push_back(p[0]);
        req->stripped.push_back(p[1]);
    }
    req->stripped.push_back(0);
    req->original.assign(props, p + 1);
}

cl_int parse_egl_image_properties(const cl_egl_image_properties_khr *props, bool *allow_tiled, std::string *why) {
    *allow_tiled = false;
    for (const cl_egl_image_properties_khr *p = props; p && *p; p += 2) {
        if (p[0] == CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF && (p[1] == CL_TRUE || p[1] == CL_FALSE)) {
            *allow_tiled = p[1] == CL_TRUE;
            continue;
        }
        *why = "property " + hex_text(static_cast<uint64_t>(p[0])) + " is not supported (cl_khr_egl_image defines none)";
        return CL_INVALID_PROPERTY;
    }
    return CL_SUCCESS;
}

cl_int gl_texture_target_rule(cl_GLenum target, std::string *why) {
    switch (target) {
    case GL_TEXTURE_2D: return CL_SUCCESS;
    case 0x0DE0 /* GL_TEXTURE_1D */: case 0x8C18 /* GL_TEXTURE_1D_ARRAY */: case 0x8C2A /* GL_TEXTURE_BUFFER */:
    case GL_TEXTURE_2D_ARRAY: case GL_TEXTURE_3D: case 0x84F5 /* GL_TEXTURE_RECTANGLE */:
    case GL_TEXTURE_CUBE_MAP_POSITIVE_X: case GL_TEXTURE_CUBE_MAP_NEGATIVE_X:
    case GL_TEXTURE_CUBE_MAP_POSITIVE_Y: case GL_TEXTURE_CUBE_MAP_NEGATIVE_Y:
    case GL_TEXTURE_CUBE_MAP_POSITIVE_Z: case GL_TEXTURE_CUBE_MAP_NEGATIVE_Z:
        *why = "only GL_TEXTURE_2D textures are shared by the layer (target " + hex_text(target) + ")";
        return CL_INVALID_OPERATION;
    default:
        *why = "texture_target is not a GL texture target";
        return CL_INVALID_VALUE;
    }
}

}  // namespace cldmabuf::egl
