// Which GL/EGL calls the ICD serves itself.  Where the platform lists
// cl_khr_egl_image or cl_khr_gl_sharing, the layer forwards the call unchanged
// (CLDMABUF_DEBUG=egl-force takes it over anyway); otherwise the layer serves it.
#pragma once

#include "layer/base/cl_compat.h"
#include "layer/icd/devices.hpp"

namespace cldmabuf::egl {

// The platform or context an object belongs to (nullptr when the object is
// not valid): the shared queries of layer/icd/devices.hpp.
using cldmabuf::context_platform;
using cldmabuf::device_platform;
using cldmabuf::mem_context;
using cldmabuf::queue_context;

// Whether the ICD handles these calls itself on `platform` (the platform's
// profile, layer/icd/profile.hpp).
bool icd_egl_image(cl_platform_id platform);
bool icd_gl_sharing(cl_platform_id platform);
// icd_gl_sharing for the context's platform.
bool forward_gl(cl_context context);

}  // namespace cldmabuf::egl
