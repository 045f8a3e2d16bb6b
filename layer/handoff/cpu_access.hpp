// The CPU-access bracket on an import, shared by acquire/release and map/unmap.
#pragma once

#include <cstdint>

#include "layer/base/cl_compat.h"
#include "layer/core/registry.hpp"

namespace cldmabuf {

// Waits (bounded by CLDMABUF_FENCE_TIMEOUT_MS) for the dma-buf's fences in
// the access direction, then DMA_BUF_IOCTL_SYNC START.  CL_SUCCESS, or an
// error status (CL_OUT_OF_RESOURCES on timeout) after one log line.
cl_int begin_cpu_access(const Import &import, uint64_t access, const char *what);
// How a fence wait ended (0, -ETIME, -errno) as the command's status, with
// the one log line of a failure; shared by the poll and the sync_file wait
// (layer/handoff/acquire_fences.hpp) so both fail alike.
cl_int fence_wait_status(int wait, const Import &import, const char *what);
// The two halves of begin_cpu_access for the handoff's fast path
// (layer/handoff/acquire_release.cpp): whether no fence is pending in the
// access direction now (poll with a zero timeout, nothing logged), and the
// SYNC START alone (one log line on failure).
bool fences_signalled_now(const Import &import, uint64_t access);
cl_int sync_start(const Import &import, uint64_t access, const char *what);
// DMA_BUF_IOCTL_SYNC END.
cl_int end_cpu_access(const Import &import, uint64_t access, const char *what);

}  // namespace cldmabuf
