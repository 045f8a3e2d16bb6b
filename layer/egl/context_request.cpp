#include "layer/egl/context_request.hpp"

#include <string>

#include "layer/egl/egl_export.hpp"
#include "layer/base/log.hpp"

#include <CL/cl_egl.h>
#include <CL/cl_gl.h>

namespace cldmabuf::egl {

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

}  // namespace cldmabuf::egl
