// The dispatch tables: the one below us (`next()`) and the one we hand the
// loader (`ours()`).  Calls the layer does not intercept are never wrapped:
// our table starts as a copy of the target's, so the loader jumps straight
// to the next layer or the ICD and those calls cost nothing extra.  What the
// layer does intercept is listed in one place, layer/entry/dispatch_table.cpp.
#pragma once

#include "layer/base/cl_compat.h"

namespace cldmabuf {

namespace dispatch_tables {
// Filled by init_dispatch (layer/core/dispatch.cpp); read through next() / ours().
// Hidden: the layer's own calls down address them relative to the code.
extern cl_icd_dispatch guarded_next __attribute__((visibility("hidden")));
extern cl_icd_dispatch layer_dispatch __attribute__((visibility("hidden")));
}  // namespace dispatch_tables

// The dispatch table below the layer, its 2.x/3.0 slots guarded for older
// ICDs (layer/core/icd_slots.hpp).  Valid after init.  Inline: a pass-through
// wrapper's call down is then one load and a jump (issue #18).
inline const cl_icd_dispatch &next() { return dispatch_tables::guarded_next; }

// The layer's own table (what the loader calls).  The one way a feature
// re-enters the layer's entry points (e.g. egl importing an EGLImage through
// the layer's clCreateImageWithProperties): read at call time, it runs
// every check the application's call would.
inline const cl_icd_dispatch &ours() { return dispatch_tables::layer_dispatch; }

// Builds both tables from `target` (copying `num_entries` slots): guards the
// one below, fills ours (fill_layer_table).  Returns ours for the loader.
const cl_icd_dispatch *init_dispatch(const cl_icd_dispatch *target, cl_uint num_entries);

// Writes the layer's overrides into `table`, a copy of the target's
// (layer/entry/dispatch_table.cpp; called by init_dispatch).
void fill_layer_table(cl_icd_dispatch &table);

// The layer's function for an extension function name (the list in
// layer/entry/dispatch_table.cpp), or nullptr: what clGetExtensionFunctionAddress*
// answers before asking the next table.
void *layer_extension_function(const char *name);

}  // namespace cldmabuf
