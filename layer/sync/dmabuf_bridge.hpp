// The dma-buf side of explicit fences, for release (docs/semaphores.md,
// "Bridges to dma-bufs").
//
// A release that still has work ahead of it puts a layer fence into each
// written dma-buf as its writer (DMA_BUF_IOCTL_IMPORT_SYNC_FILE), so an
// implicit-sync consumer (compositor, V4L2, GL, poll() on the dma-buf) waits
// for the release even if it never sees the OpenCL event; the release's host
// step signals it.  (Acquire's side, the dma-buf's fences as one exported
// sync_file, is layer/dmabuf/explicit_fences.hpp, used by
// wait_acquire_fences in layer/handoff/cpu_access.)
//
// No fence of the layer outlives its bound: every attached fence is
// signalled by the first of signal(), the DmabufSignal's destruction (a step
// dropped without running), the deadline watchdog at
// CLDMABUF_FENCE_TIMEOUT_MS after attach (one warning: a consumer then no
// longer waits for a release that has not run), and
// signal_all_dmabuf_signals() at the layer's unload.  One watchdog thread
// for the process, started at the first attach.
#pragma once

#include <chrono>

#include "layer/sync/fence_source.hpp"

namespace cldmabuf::sync {

class DmabufSignal {
public:
    DmabufSignal() = default;
    ~DmabufSignal();
    DmabufSignal(const DmabufSignal &) = delete;
    DmabufSignal &operator=(const DmabufSignal &) = delete;
    // A layer fence (sw_sync or vgem, fence_source.hpp) imported into
    // `dmabuf_fd` as a write fence, armed with the deadline.  0, or -errno
    // (-ENODEV: no fence source; the import's errno: IMPORT_SYNC_FILE
    // refused, -ENOTTY before Linux 6.0; -ECANCELED: signal() came first)
    // with nothing left behind.  Once only.
    int attach(int dmabuf_fd);
    // Signals it (the release's host work).  Idempotent, thread-safe; before
    // attach() it retires the fence, so a later attach() does nothing.
    void signal();
    // Attached and not signalled yet.
    bool pending() const;
    // When the watchdog signals it (read under the bridge's lock).
    std::chrono::steady_clock::time_point deadline() const { return deadline_; }

private:
    friend void signal_expired_dmabuf_signals(std::chrono::steady_clock::time_point now);
    friend void signal_all_dmabuf_signals();
    void signal_locked(const char *why);

    LayerFence fence_;
    int dmabuf_fd_ = -1;  // for the log line only (the layer's dup, alive while the import is)
    std::chrono::steady_clock::time_point deadline_{};
    bool retired_ = false;  // signal() ran (under the bridge's lock)
};

// The watchdog's work: signals (one warning each) the fences whose deadline
// is at or before `now`.
void signal_expired_dmabuf_signals(std::chrono::steady_clock::time_point now);

// Layer unload (clDeinitLayer, the legacy atexit): signals every pending
// release fence and stops the watchdog thread.
void signal_all_dmabuf_signals();

// The number of attached, unsignalled fences (tests).
size_t pending_dmabuf_signals();

}  // namespace cldmabuf::sync
