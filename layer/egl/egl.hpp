// GL textures and EGLImages as OpenCL images (cl_khr_egl_image, and
// cl_khr_gl_sharing on EGL): what the rest of the layer sees of layer/egl.
// See docs/egl.md.
#pragma once

#include <utility>
#include <vector>

#include "layer/cl_compat.h"

namespace cldmabuf {

// CLDMABUF_EGL=auto|force|off (read once).  auto: the layer provides the
// EGL/GL functions where the ICD does not; force: also where it does; off:
// layer/egl stays out of the way entirely.
enum class EglMode { automatic, force, off };
EglMode egl_mode();

// Extensions layer/egl adds to the platform/device lists (none when EGL
// cannot be loaded or CLDMABUF_EGL=off).  Names are static strings.
void egl_added_extensions(std::vector<std::pair<const char *, cl_version>> *out);

// The layer's entry point for an extension function name, or nullptr.
void *egl_function(const char *name);

// Fills the GL/EGL slots of the dispatch table (layer/egl/overrides.cpp).
// EGL images and GL buffers are imported through the layer's own table
// (ours(), read at call time), so this may run in any order with the other
// install_* functions.
void install_egl_overrides(cl_icd_dispatch &table);

}  // namespace cldmabuf
