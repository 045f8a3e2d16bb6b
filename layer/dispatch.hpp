// The dispatch tables: the one below us (`next()`) and the one we hand the
// loader.  Calls the layer does not intercept are never wrapped: our table
// starts as a copy of the target's, so the loader jumps straight to the next
// layer or the ICD and those calls cost nothing extra.
#pragma once

#include "layer/cl_compat.h"

namespace cldmabuf {

// The dispatch table below the layer.  Valid after init.
const cl_icd_dispatch &next();

// The layer's own table (what the loader calls): for entry points the layer
// hands out itself that must enter the layer's overrides, not skip them.
const cl_icd_dispatch &ours();

// Builds the layer's table from `target` (copying `num_entries` slots) and
// installs every override.  Returns the table to hand to the loader.
const cl_icd_dispatch *init_dispatch(const cl_icd_dispatch *target, cl_uint num_entries);

// Each part of the layer installs its overrides here (called by init_dispatch).
void install_extension_overrides(cl_icd_dispatch &table);
void install_import_overrides(cl_icd_dispatch &table);
void install_event_overrides(cl_icd_dispatch &table);
void install_map_overrides(cl_icd_dispatch &table);
void install_copy_overrides(cl_icd_dispatch &table);
void install_image_overrides(cl_icd_dispatch &table);  // after install_import_overrides (chains its queries)

}  // namespace cldmabuf
