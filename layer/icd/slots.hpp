// What the dispatch table below the layer may be called for.  An OpenCL
// 1.2 / 2.x ICD has no 2.x / 3.0 entry points, yet the table the loader
// hands the layer has every slot: under ocl-icd 2.3.1 each slot is the
// loader's own trampoline, which jumps through the ICD's table without a
// NULL check (tests/icd/README.md has the measurement).  So the layer asks
// the platform's version before it calls a slot newer than 1.2, and maps or
// refuses the call when the ICD is older.
#pragma once

#include "layer/base/cl_compat.h"

namespace cldmabuf {

// The platform's CL_PLATFORM_VERSION as CL_MAKE_VERSION(major, minor, 0),
// kept in the platform's profile (layer/icd/profile.hpp); 0 when it cannot
// be read.
cl_version icd_platform_version(cl_platform_id platform);
cl_version icd_context_version(cl_context context);

// Replaces the 2.x/3.0 slots of `table` (a copy of the loader's `raw`, of
// which `num_entries` slots are valid) with guards that call the raw slot
// only where the ICD behind the object has it.  Called by init_dispatch.
void guard_icd_slots(cl_icd_dispatch &table, const cl_icd_dispatch *raw, cl_uint num_entries);

}  // namespace cldmabuf
