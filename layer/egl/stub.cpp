// layer/egl without EGL/GLES headers at build time: the layer offers no
// EGL/GL interop (docs/egl.md).
#include "layer/egl/egl.hpp"

namespace cldmabuf {

EglMode egl_mode() { return EglMode::off; }
void egl_added_extensions(std::vector<std::pair<const char *, cl_version>> *) {}

}  // namespace cldmabuf
