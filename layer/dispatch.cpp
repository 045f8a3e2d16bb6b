#include "layer/dispatch.hpp"
#include "layer/egl/egl.hpp"
#include "layer/ext/import.hpp"

#include <algorithm>
#include <cstring>

namespace cldmabuf {
namespace {
const cl_icd_dispatch *target_dispatch = nullptr;
cl_icd_dispatch layer_dispatch;
}  // namespace

const cl_icd_dispatch &next() { return *target_dispatch; }
const cl_icd_dispatch &ours() { return layer_dispatch; }

const cl_icd_dispatch *init_dispatch(const cl_icd_dispatch *target, cl_uint num_entries) {
    target_dispatch = target;
    std::memset(&layer_dispatch, 0, sizeof layer_dispatch);
    // A loader built against older headers may have fewer slots than we do;
    // copy what it has and leave the rest NULL (it never calls them).
    size_t slots = std::min<size_t>(num_entries, sizeof layer_dispatch / sizeof(void *));
    std::memcpy(&layer_dispatch, target, slots * sizeof(void *));
    install_extension_overrides(layer_dispatch);
    install_import_overrides(layer_dispatch);
    install_image_overrides(layer_dispatch);
    install_event_overrides(layer_dispatch);
    install_map_overrides(layer_dispatch);
    install_copy_overrides(layer_dispatch);
    install_egl_overrides(layer_dispatch);  // wraps the layer's own image import
    install_read_only_guard(layer_dispatch);  // last: wraps the copy and map overrides (layer/ext/import.hpp)
    return &layer_dispatch;
}

}  // namespace cldmabuf
