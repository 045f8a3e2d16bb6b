// Which GL/EGL calls the ICD serves itself.  Where the platform lists
// cl_khr_egl_image or cl_khr_gl_sharing, the layer forwards the call unchanged
// (CLDMABUF_EGL=force takes it over anyway); otherwise the layer serves it.
#pragma once

#include "layer/base/cl_compat.h"

namespace cldmabuf::egl {

// The platform an object belongs to (nullptr when the object is not valid).
cl_platform_id context_platform(cl_context context);
cl_platform_id device_platform(cl_device_id device);
cl_context queue_context(cl_command_queue queue);
cl_context mem_context(cl_mem mem);

// Whether the ICD handles these calls itself on `platform` (the platform's
// profile, layer/icd/profile.hpp).
bool icd_egl_image(cl_platform_id platform);
bool icd_gl_sharing(cl_platform_id platform);
// icd_gl_sharing for the context's platform.
bool forward_gl(cl_context context);

}  // namespace cldmabuf::egl
