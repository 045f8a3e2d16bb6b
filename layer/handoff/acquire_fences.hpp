// Acquire's wait for a dma-buf's implicit fences (issue #20 item 2).
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

namespace cldmabuf {

// CL_SUCCESS, or the same status and one log line a poll's failure gives
// (CL_OUT_OF_RESOURCES on timeout, layer/handoff/cpu_access.hpp).
cl_int wait_acquire_fences(const Import &import, uint64_t access, const char *what);

// How this import's fences are waited for; `unknown` until its first wait.
enum class FenceWaitRoute { unknown, sync_file, poll };
FenceWaitRoute fence_wait_route(const Import &import);

}  // namespace cldmabuf
