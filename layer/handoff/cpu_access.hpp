// The CPU-access bracket on an import, shared by acquire/release and map/unmap.
#pragma once

#include <cstdint>

#include "layer/cl_compat.h"
#include "layer/registry.hpp"

namespace cldmabuf {

// Waits (bounded by CLDMABUF_FENCE_TIMEOUT_MS) for the dma-buf's fences in
// the access direction, then DMA_BUF_IOCTL_SYNC START.  CL_SUCCESS, or an
// error status (CL_OUT_OF_RESOURCES on timeout) after one log line.
cl_int begin_cpu_access(const Import &import, uint64_t access, const char *what);
// DMA_BUF_IOCTL_SYNC END.
cl_int end_cpu_access(const Import &import, uint64_t access, const char *what);

}  // namespace cldmabuf
