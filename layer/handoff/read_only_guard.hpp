// Host-enqueued writes into a CL_MEM_READ_ONLY import that the ICD uses in
// place (layer/handoff/read_only_guard.cpp).  Plain checks: the entry functions
// of the slots they guard (layer/entry/entry_chains.cpp) call them first, in the
// order written there.
#pragma once

#include "layer/base/cl_compat.h"

namespace cldmabuf {

// A CL_MEM_READ_ONLY import (or a sub-buffer of one) that the ICD uses in
// place over the layer's read-only mapping: host-enqueued writes into it
// (write, fill, a copy into it, a CL_MAP_WRITE map) would make the ICD write
// read-only memory, so they must be refused with CL_INVALID_OPERATION.
bool import_refuses_host_writes(cl_mem mem);

// CL_SUCCESS, or CL_INVALID_OPERATION with one log line naming `what` when
// `mem` is such an import.
cl_int refuse_read_only_write(cl_mem mem, const char *what);
// The same for a map: only CL_MAP_WRITE / CL_MAP_WRITE_INVALIDATE_REGION
// maps are writes.
cl_int refuse_read_only_map(cl_mem mem, cl_map_flags flags, const char *what);

}  // namespace cldmabuf
