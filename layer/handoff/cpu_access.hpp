// The CPU-access bracket on an import, shared by acquire/release and map/unmap:
// the bounded wait for the dma-buf's fences, DMA_BUF_IOCTL_SYNC START and END.
//
// Acquire's wait for a dma-buf's implicit fences (wait_acquire_fences).
//
// Where the kernel has DMA_BUF_IOCTL_EXPORT_SYNC_FILE (Linux >= 6.0) the
// fences are taken out as one sync_file and that is waited on; where it
// answers ENOTTY or EINVAL (older kernels, an exporter that refuses) the
// dma-buf itself is polled, as before.  Both wait for the same fences (the
// access direction's: writers for a read, every fence for a write) and are
// bounded by CLDMABUF_FENCE_TIMEOUT_MS.  The choice is made once per import
// (at its first queued acquire) and logged once at debug level;
// CLDMABUF_EXPLICIT_FENCES=off keeps the poll.
#pragma once

#include <cstdint>

#include "layer/base/cl_compat.h"
#include "layer/core/registry.hpp"
#include "layer/handoff/dmabuf_transitions.hpp"

namespace cldmabuf {

// Waits (bounded by CLDMABUF_FENCE_TIMEOUT_MS) for the dma-buf's fences in
// the access direction, then DMA_BUF_IOCTL_SYNC START.  CL_SUCCESS, or an
// error status (CL_OUT_OF_RESOURCES on timeout) after one log line.
cl_int begin_cpu_access(const Import &import, uint64_t access, const char *what);
// How a fence wait ended (0, -ETIME, -errno) as the command's status, with
// the one log line of a failure; shared by the poll and the sync_file wait
// (wait_acquire_fences) so both fail alike.
cl_int fence_wait_status(int wait, const Import &import, const char *what);
// The two halves of begin_cpu_access for the handoff's fast path
// (layer/handoff/acquire_release.cpp): whether no fence is pending in the
// access direction now (poll with a zero timeout, nothing logged), and the
// SYNC START alone (one log line on failure).
bool fences_signalled_now(const Import &import, uint64_t access);
cl_int sync_start(const Import &import, uint64_t access, const char *what);
// DMA_BUF_IOCTL_SYNC END.
cl_int end_cpu_access(const Import &import, uint64_t access, const char *what);

// CL_SUCCESS, or the same status and one log line a poll's failure gives
// (CL_OUT_OF_RESOURCES on timeout, fence_wait_status).
cl_int wait_acquire_fences(const Import &import, uint64_t access, const char *what);

// How the import's dma-buf's fences are waited for; `unknown` until its
// first wait that decides it (the dma-buf's state keeps it).
using FenceWaitRoute = FenceWait;
FenceWaitRoute fence_wait_route(const Import &import);

}  // namespace cldmabuf
