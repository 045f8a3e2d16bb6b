#include "layer/egl/forwarding.hpp"

#include "layer/core/dispatch.hpp"
#include "layer/egl/egl.hpp"
#include "layer/icd/devices.hpp"
#include "layer/icd/profile.hpp"

namespace cldmabuf::egl {

bool icd_egl_image(cl_platform_id platform) {
    return egl_mode() != EglMode::force && platform && profile_native_egl_image(platform);
}

bool icd_gl_sharing(cl_platform_id platform) {
    return egl_mode() != EglMode::force && platform && profile_native_gl_sharing(platform);
}

bool forward_gl(cl_context context) { return icd_gl_sharing(context_platform(context)); }

}  // namespace cldmabuf::egl
