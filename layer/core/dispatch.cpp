#include "layer/core/dispatch.hpp"

#include <algorithm>
#include <cstring>

#include "layer/core/icd_slots.hpp"

namespace cldmabuf {
namespace dispatch_tables {
// The loader's table with its 2.x/3.0 slots guarded (layer/core/icd_slots.hpp):
// what the layer calls.  The layer's own table copies the loader's unguarded,
// so calls the layer passes through reach the ICD exactly as without it.
cl_icd_dispatch guarded_next;
cl_icd_dispatch layer_dispatch;
}  // namespace dispatch_tables

using dispatch_tables::guarded_next;
using dispatch_tables::layer_dispatch;

const cl_icd_dispatch *init_dispatch(const cl_icd_dispatch *target, cl_uint num_entries) {
    std::memset(&layer_dispatch, 0, sizeof layer_dispatch);
    std::memset(&guarded_next, 0, sizeof guarded_next);
    // A loader built against older headers may have fewer slots than we do;
    // copy what it has and leave the rest NULL (it never calls them).
    size_t slots = std::min<size_t>(num_entries, sizeof layer_dispatch / sizeof(void *));
    std::memcpy(&layer_dispatch, target, slots * sizeof(void *));
    std::memcpy(&guarded_next, target, slots * sizeof(void *));
    guard_icd_slots(guarded_next, target, static_cast<cl_uint>(slots));
    fill_layer_table(layer_dispatch);
    return &layer_dispatch;
}

}  // namespace cldmabuf
