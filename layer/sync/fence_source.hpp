// Fences the layer can signal itself, for semaphores whose signal must be
// exportable as a sync_file (CL_SEMAPHORE_HANDLE_SYNC_FD_KHR).  Two sources,
// probed once per process in this order:
//   sw_sync (CONFIG_SW_SYNC, /sys/kernel/debug/sync/sw_sync): a timeline per
//     signal with one fence at point 1;
//   vgem (/dev/dri/card* whose driver is "vgem"; distribution kernels build
//     it, few build sw_sync): a file per signal, a one-page dumb buffer with a
//     vgem write fence attached (VGEM_FENCE_ATTACH), the fence taken out as a
//     sync_file through the buffer's dma-buf (DMA_BUF_IOCTL_EXPORT_SYNC_FILE,
//     Linux >= 6.0), signalled with VGEM_FENCE_SIGNAL.
// Either way each signal has a file of its own (`timeline`), so signals of one
// semaphore that complete out of enqueue order (different queues) never
// signal each other's fence, and closing that file unsignalled signals the
// fence (sw_sync with -ENOENT; vgem signals every fence of a closing file):
// no exported copy waits forever.  vgem also signals a fence by itself 10 s
// after it was attached (its hang guard): a layer signal that has not run by
// then completes early (docs/semaphores.md).  Where neither exists the layer
// advertises no export handle type.  Everything goes through the kernel
// seam, so the virtual Gen9 can model it (tests/sim).
#pragma once

#include <cstdint>

#include "layer/base/owned_fd.hpp"

namespace cldmabuf::sync {

inline constexpr const char *sw_sync_path = "/sys/kernel/debug/sync/sw_sync";

enum class FenceSource { none, sw_sync, vgem };
// The process's source (probed once; logged).
FenceSource fence_source();
// Whether a layer fence can be made here.
inline bool can_export_sync_fd() { return fence_source() != FenceSource::none; }

// Move-only: whoever holds it owns both files.  One dropped unsignalled
// closes its timeline, which signals the fence (see above).
struct LayerFence {
    OwnedFd timeline;         // the sw_sync timeline or the vgem file; closed after the signal
    OwnedFd fence;            // the sync_file (a payload takes it, layer/sync/semaphore.hpp)
    uint32_t vgem_fence = 0;  // vgem's fence id on `timeline` (vgem only)
};
// 0, or -errno with both fds empty.
int create_layer_fence(LayerFence *out);
// Signals the fence (SW_SYNC_IOC_INC 1 or VGEM_FENCE_SIGNAL) and closes the
// timeline.  0 or -errno (the timeline is closed either way).
int signal_layer_fence(LayerFence *f);

}  // namespace cldmabuf::sync
