// Fences the layer can signal itself, for semaphores whose signal must be
// exportable as a sync_file (CL_SEMAPHORE_HANDLE_SYNC_FD_KHR).  The one
// source today is sw_sync (CONFIG_SW_SYNC, /sys/kernel/debug/sync/sw_sync):
// each signal gets its own timeline with one fence at point 1, so signals of
// one semaphore that complete out of enqueue order (different queues) can
// never signal each other's fence.  Where no source exists the layer
// advertises no export handle type (docs/semaphores.md).  Everything goes
// through the kernel seam, so the virtual Gen9 can model it (tests/sim).
#pragma once

namespace cldmabuf::sync {

inline constexpr const char *sw_sync_path = "/sys/kernel/debug/sync/sw_sync";

// Whether a sw_sync timeline can be opened here (probed once per process).
bool can_export_sync_fd();

struct LayerFence {
    int timeline = -1;  // closed after the signal (sw_sync signals what is left with -ENOENT on close)
    int fence = -1;     // the sync_file; the payload owns it
};
// 0, or -errno with both fds -1.
int create_layer_fence(LayerFence *out);
// Signals the fence (SW_SYNC_IOC_INC 1) and closes the timeline.  0 or -errno.
int signal_layer_fence(LayerFence *f);

}  // namespace cldmabuf::sync
