// The dispatch tables: the one below us (`next()`) and the one we hand the
// loader (`ours()`).  Calls the layer does not intercept are never wrapped:
// our table starts as a copy of the target's, so the loader jumps straight
// to the next layer or the ICD and those calls cost nothing extra.  What the
// layer does intercept is listed in one place, layer/dispatch_table.cpp.
#pragma once

#include "layer/cl_compat.h"

namespace cldmabuf {

// The dispatch table below the layer, its 2.x/3.0 slots guarded for older
// ICDs (layer/icd_slots.hpp).  Valid after init.
const cl_icd_dispatch &next();

// The layer's own table (what the loader calls).  The one way a feature
// re-enters the layer's entry points (e.g. egl importing an EGLImage through
// the layer's clCreateImageWithProperties): read at call time, it runs
// every check the application's call would.
const cl_icd_dispatch &ours();

// Builds both tables from `target` (copying `num_entries` slots): guards the
// one below, fills ours (fill_layer_table).  Returns ours for the loader.
const cl_icd_dispatch *init_dispatch(const cl_icd_dispatch *target, cl_uint num_entries);

// Writes the layer's overrides into `table`, a copy of the target's
// (layer/dispatch_table.cpp; called by init_dispatch).
void fill_layer_table(cl_icd_dispatch &table);

// The layer's function for an extension function name (the list in
// layer/dispatch_table.cpp), or nullptr: what clGetExtensionFunctionAddress*
// answers before asking the next table.
void *layer_extension_function(const char *name);

}  // namespace cldmabuf
