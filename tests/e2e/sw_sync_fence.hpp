// A write fence the test holds: an unsignalled fence imported into a dma-buf
// as its writer (DMA_BUF_IOCTL_IMPORT_SYNC_FILE with WRITE), at any moment
// the test picks (after the imports too).  It stays unsignalled until
// signal(), and nothing in the layer can end it early — unlike a blitter
// batch that never completes, which the layer cancels at its own fence
// bound, a deadline that races the acquire's.
//
// Where it comes from:
//   - a point of a sw_sync timeline (/sys/kernel/debug/sync/sw_sync): on the
//     host the virtual Gen9 models sw_sync and IMPORT_SYNC_FILE;
//   - else vgem (the VM lanes: Debian's kernel has no sw_sync): a fence
//     attached to a small vgem buffer of the test's own, taken out of it as a
//     sync_file (EXPORT_SYNC_FILE with READ: what a reader waits for, its
//     writer) and put into the dma-buf of any exporter.  vgem ends it itself
//     after about 10 s, so a test's bound must be shorter.
#pragma once

#include <fcntl.h>
#include <linux/dma-buf.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <system_error>

#include "tests/sim/vgen9_sw_sync_uapi.h"
#include "dmabuf_source.hpp"

class SwSyncWriteFence {
public:
    // Whether a fence can be made here either way above (the virtual Gen9's
    // sw_sync is seen only through open(): ask vgen9_control for it).
    static bool possible() {
        if (access("/sys/kernel/debug/sync/sw_sync", F_OK) == 0) return true;
        return cldmabuf::test::available(cldmabuf::test::DmabufKind::vgem);
    }
    // false when the dma-buf took no fence (neither source, or the import refused).
    bool attach(int dmabuf_fd) {
        const int sync_file = make_sync_file();
        if (sync_file < 0) return false;
        dma_buf_import_sync_file in{DMA_BUF_SYNC_WRITE, sync_file};
        const bool ok = ioctl(dmabuf_fd, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &in) == 0;
        close(sync_file);
        return ok;
    }
    void signal() {
        if (timeline_ >= 0) {
            __u32 one = 1;
            ioctl(timeline_, VGEN9_SW_SYNC_IOC_INC, &one);
            close(timeline_);
            timeline_ = -1;
        }
        if (vgem_fence_pending_) {
            vgem_fence_pending_ = false;
            // vgem may have ended it already (its own 10 s bound): the id is gone then.
            try {
                cldmabuf::test::signal_fence(carrier_, vgem_fence_);
            } catch (const std::system_error &) {
            }
        }
    }
    ~SwSyncWriteFence() { signal(); }
    SwSyncWriteFence() = default;
    SwSyncWriteFence(const SwSyncWriteFence &) = delete;
    SwSyncWriteFence &operator=(const SwSyncWriteFence &) = delete;

private:
    // An unsignalled sync_file the caller closes, or -1.
    int make_sync_file() {
        timeline_ = open("/sys/kernel/debug/sync/sw_sync", O_RDWR | O_CLOEXEC);
        if (timeline_ >= 0) {
            vgen9_sw_sync_create_fence_data point{};
            point.value = 1;
            std::snprintf(point.name, sizeof point.name, "stuck writer");
            if (ioctl(timeline_, VGEN9_SW_SYNC_IOC_CREATE_FENCE, &point) == 0) return point.fence;
            close(timeline_);
            timeline_ = -1;
            return -1;
        }
        using namespace cldmabuf::test;
        if (!available(DmabufKind::vgem)) return -1;
        try {
            carrier_ = allocate(DmabufKind::vgem, 4096);
            vgem_fence_ = attach_fence(carrier_, /*write=*/true);
            vgem_fence_pending_ = true;
        } catch (const std::system_error &) {
            return -1;
        }
        dma_buf_export_sync_file out{DMA_BUF_SYNC_READ, -1};
        if (ioctl(carrier_.fd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &out) != 0) return -1;
        return out.fd;
    }

    int timeline_ = -1;
    cldmabuf::test::Dmabuf carrier_;
    uint32_t vgem_fence_ = 0;
    bool vgem_fence_pending_ = false;
};
