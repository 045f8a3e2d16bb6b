// GL textures and EGLImages as OpenCL images (cl_khr_egl_image, and
// cl_khr_gl_sharing on EGL): what the rest of the layer sees of layer/egl.
// See docs/egl.md.
#pragma once

#include <utility>
#include <vector>

#include "layer/base/cl_compat.h"

namespace cldmabuf {

// CLDMABUF_EGL=auto|off (read once).  auto: the layer provides the EGL/GL
// functions where the ICD does not; off: layer/egl stays out of the way
// entirely.  force (CLDMABUF_DEBUG=egl-force, a test's): also where the ICD
// has them.
enum class EglMode { automatic, force, off };
EglMode egl_mode();

// Extensions layer/egl adds to the platform/device lists (none when EGL
// cannot be loaded or CLDMABUF_EGL=off).  Names are static strings.
void egl_added_extensions(std::vector<std::pair<const char *, cl_version>> *out);

// egl's entry points (layer/egl/entry_points.hpp) are put in the table and
// handed out by name in layer/entry/dispatch_table.cpp, unless egl_mode() is off
// or the layer was built without EGL headers (CLDMABUF_EGL_INTEROP unset).
// They import through layer/import with a request they build themselves
// (dmabuf_buffer_request / dmabuf_image_request, layer/import/request.hpp).

}  // namespace cldmabuf
