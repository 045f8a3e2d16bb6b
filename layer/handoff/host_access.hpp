// The application's host-access flags (CL_MEM_HOST_*) on copy-route buffer
// imports (layer/handoff/host_access.cpp).  Plain checks: the read, write and map
// entry functions (layer/entry/entry_chains.cpp) call them before the ICD.
#pragma once

#include "layer/base/cl_compat.h"

namespace cldmabuf {

// CL_SUCCESS, or CL_INVALID_OPERATION with one log line naming `what` when
// `mem` is a copy-route buffer import whose flags forbid the host to read
// (`read`) or write (`write`) it.
cl_int refuse_host_access(cl_mem mem, bool read, bool write, const char *what);
// The same for a map: CL_MAP_READ reads, CL_MAP_WRITE(_INVALIDATE_REGION) writes.
cl_int refuse_host_map(cl_mem mem, cl_map_flags flags, const char *what);

}  // namespace cldmabuf
