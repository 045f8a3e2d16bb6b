#include "layer/dispatch.hpp"
#include "layer/egl/egl.hpp"
#include "layer/icd_slots.hpp"
#include "layer/ext/import.hpp"

#include <algorithm>
#include <cstring>

namespace cldmabuf {
namespace {
// The loader's table with its 2.x/3.0 slots guarded (layer/icd_slots.hpp):
// what the layer calls.  The layer's own table copies the loader's unguarded,
// so calls the layer passes through reach the ICD exactly as without it.
cl_icd_dispatch guarded_next;
cl_icd_dispatch layer_dispatch;
}  // namespace

const cl_icd_dispatch &next() { return guarded_next; }
const cl_icd_dispatch &ours() { return layer_dispatch; }

const cl_icd_dispatch *init_dispatch(const cl_icd_dispatch *target, cl_uint num_entries) {
    std::memset(&layer_dispatch, 0, sizeof layer_dispatch);
    std::memset(&guarded_next, 0, sizeof guarded_next);
    // A loader built against older headers may have fewer slots than we do;
    // copy what it has and leave the rest NULL (it never calls them).
    size_t slots = std::min<size_t>(num_entries, sizeof layer_dispatch / sizeof(void *));
    std::memcpy(&layer_dispatch, target, slots * sizeof(void *));
    std::memcpy(&guarded_next, target, slots * sizeof(void *));
    install_slot_guards(guarded_next, target, static_cast<cl_uint>(slots));
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
