// The one dispatch table (layer/entry/dispatch_table.cpp): how the layer's
// table and the guarded one below it are built when the loader initialises
// the layer, and the layer's extension functions by name.
#pragma once

#include "layer/base/cl_compat.h"

namespace cldmabuf {

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
