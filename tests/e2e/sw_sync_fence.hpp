// A write fence the test holds: a point of a sw_sync timeline imported into a
// dma-buf as its writer (DMA_BUF_IOCTL_IMPORT_SYNC_FILE with WRITE).  It stays
// unsignalled until signal(), and nothing in the layer can end it early — unlike
// a blitter batch that never completes, which the layer cancels at its own
// fence bound, a deadline that races the acquire's.  On the host the virtual
// Gen9 models sw_sync and IMPORT_SYNC_FILE.
#pragma once

#include <fcntl.h>
#include <linux/dma-buf.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

#include "tests/sim/vgen9_sw_sync_uapi.h"

class SwSyncWriteFence {
public:
    // false when the dma-buf took no fence (no sw_sync, or the import refused).
    bool attach(int dmabuf_fd) {
        timeline_ = open("/sys/kernel/debug/sync/sw_sync", O_RDWR | O_CLOEXEC);
        if (timeline_ < 0) return false;
        vgen9_sw_sync_create_fence_data point{};
        point.value = 1;
        std::snprintf(point.name, sizeof point.name, "stuck writer");
        if (ioctl(timeline_, VGEN9_SW_SYNC_IOC_CREATE_FENCE, &point) != 0) return false;
        dma_buf_import_sync_file in{DMA_BUF_SYNC_WRITE, point.fence};
        const bool ok = ioctl(dmabuf_fd, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &in) == 0;
        close(point.fence);
        return ok;
    }
    void signal() {
        if (timeline_ < 0) return;
        __u32 one = 1;
        ioctl(timeline_, VGEN9_SW_SYNC_IOC_INC, &one);
        close(timeline_);
        timeline_ = -1;
    }
    ~SwSyncWriteFence() { signal(); }
    SwSyncWriteFence() = default;
    SwSyncWriteFence(const SwSyncWriteFence &) = delete;
    SwSyncWriteFence &operator=(const SwSyncWriteFence &) = delete;

private:
    int timeline_ = -1;
};
