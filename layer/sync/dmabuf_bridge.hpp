// Acquire/release on explicit fences: the hook layer/handoff/acquire_release
// can call (not wired there yet: that file is being rewritten; see
// docs/semaphores.md "Bridges to dma-bufs").
//
//   acquire: wait_dmabuf_fences() instead of poll(dmabuf): the same fences,
//            as one sync_file (bounded by the fence timeout).
//   release: DmabufSignal at enqueue time puts a layer fence into the
//            dma-buf as its writer, so an implicit-sync consumer (compositor,
//            V4L2, GL) waits for the release even if it never sees the
//            OpenCL event; the release's host step signals it.
#pragma once

#include "layer/cl_compat.h"
#include "layer/sync/fence_source.hpp"

namespace cldmabuf::sync {

// CL_SUCCESS, CL_OUT_OF_RESOURCES (timeout, fence error, or the export
// failed: -ENOTTY before Linux 6.0, the caller then polls as today).  One log
// line on failure.  *exported is false when the kernel cannot export (so the
// caller knows to fall back rather than fail).
cl_int wait_dmabuf_fences(int dmabuf_fd, bool write, int timeout_ms, bool *exported);

class DmabufSignal {
public:
    DmabufSignal() = default;
    ~DmabufSignal();
    DmabufSignal(const DmabufSignal &) = delete;
    DmabufSignal &operator=(const DmabufSignal &) = delete;
    // A layer fence (sw_sync) imported into `dmabuf_fd` as a write fence.
    // 0, or -errno (no fence source, or IMPORT_SYNC_FILE refused) with
    // nothing left behind.
    int attach(int dmabuf_fd);
    // Signals it (the release's host work).  Idempotent.
    void signal();

private:
    LayerFence fence_;
};

}  // namespace cldmabuf::sync
