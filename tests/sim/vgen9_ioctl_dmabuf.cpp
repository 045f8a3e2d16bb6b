// ioctls on the virtual Gen9's dma-buf and sync_file fds: cache-coherency
// brackets (DMA_BUF_IOCTL_SYNC waits for the implicit fences), sync_file
// export/import, names; sync_file info and merge.  On a real dma-buf the sim
// imported, a handler sets c.passthrough so the real kernel answers too.
//
// Kernel citations use the tags of /work/shared/reference/gen9-blt-i915.md:
// [KB] intel-gpu-i915-backports (drivers/dma-buf).
#include <errno.h>
#include <linux/ioctl.h>  // _IOWR behind the DMA_BUF_IOCTL_* numbers (issue #29)
#include <linux/dma-buf.h>
#include <linux/sync_file.h>
#include <stdio.h>
#include <string.h>

#include "vgen9_ioctl_table.hpp"

namespace vgen9sim {

int ioctl_dmabuf_sync(IoctlCall &c) {
    // [KB] dma-buf.c dma_buf_ioctl: unknown bits or neither READ nor WRITE -> -EINVAL
    auto *sy = static_cast<dma_buf_sync *>(c.arg);
    const ObjectP &o = c.obj;
    if (sy->flags & ~DMA_BUF_SYNC_VALID_FLAGS_MASK) return -EINVAL;
    if (!(sy->flags & DMA_BUF_SYNC_RW)) return -EINVAL;
    if (!o->foreign) ++((sy->flags & DMA_BUF_SYNC_END) ? g_stats.sync_ends : g_stats.sync_starts);
    if (!(sy->flags & DMA_BUF_SYNC_END)) {
        auto fs = o->fences(sy->flags & DMA_BUF_SYNC_WRITE);
        c.l.unlock();
        do_wait_fences(fs, nullptr);
        c.l.lock();
    }
    if (o->foreign) c.passthrough = true;
    return 0;
}

int ioctl_dmabuf_export_sync_file(IoctlCall &c) {
    if (c.obj->foreign) {
        c.passthrough = true;  // real kernel fences; sim fences are waited by SYNC/poll only
        return 0;
    }
    auto *e = static_cast<dma_buf_export_sync_file *>(c.arg);
    if (e->flags & ~DMA_BUF_SYNC_RW) return -EINVAL;
    if (!(e->flags & DMA_BUF_SYNC_RW)) return -EINVAL;
    FenceP f = merge_fences(c.obj->fences(e->flags & DMA_BUF_SYNC_WRITE));
    int fd = -1;
    new_fence_fd(c.s, f, &fd);
    if (fd < 0) return -EMFILE;
    e->fd = fd;
    return 0;
}

int ioctl_dmabuf_import_sync_file(IoctlCall &c) {
    if (c.obj->foreign) {
        c.passthrough = true;
        return 0;
    }
    auto *im = static_cast<dma_buf_import_sync_file *>(c.arg);
    if (im->flags & ~DMA_BUF_SYNC_RW) return -EINVAL;
    if (!(im->flags & DMA_BUF_SYNC_RW)) return -EINVAL;
    auto it = c.s.sync_fds.find(im->fd);
    if (it == c.s.sync_fds.end()) {
        log_event("IMPORT_SYNC_FILE of a foreign sync_file not modelled");
        return -EINVAL;
    }
    if (im->flags & DMA_BUF_SYNC_WRITE)
        c.obj->write_fences.push_back(it->second);
    else
        c.obj->read_fences.push_back(it->second);
    return 0;
}

// Accepted and ignored on our dma-bufs (the name is not shown in fdinfo).
int ioctl_dmabuf_set_name(IoctlCall &c) {
    if (c.obj->foreign) c.passthrough = true;
    return 0;
}

int ioctl_sync_file_info(IoctlCall &c) {
    auto *info = static_cast<sync_file_info *>(c.arg);
    const FenceP &f = c.fence;
    if (info->flags || info->pad) return -EINVAL;
    snprintf(info->name, sizeof info->name, "vgen9-bcs-%llu", (unsigned long long)f->seqno);
    info->status = f->get();
    if (info->num_fences == 0) {
        info->num_fences = 1;
        return 0;
    }
    auto *fi = reinterpret_cast<sync_fence_info *>(info->sync_fence_info);
    memset(fi, 0, sizeof *fi);
    snprintf(fi->obj_name, sizeof fi->obj_name, "bcs0");
    snprintf(fi->driver_name, sizeof fi->driver_name, "i915");
    fi->status = f->get();
    fi->timestamp_ns = fi->status ? f->timestamp_ns : 0;
    info->num_fences = 1;
    return 0;
}

int ioctl_sync_merge(IoctlCall &c) {
    auto *m = static_cast<sync_merge_data *>(c.arg);
    if (m->flags || m->pad) return -EINVAL;
    auto it = c.s.sync_fds.find(m->fd2);
    if (it == c.s.sync_fds.end()) return -ENOENT;
    FenceP mf = merge_fences({c.fence, it->second});
    int fd = -1;
    new_fence_fd(c.s, mf, &fd);
    if (fd < 0) return -EMFILE;
    m->fence = fd;
    return 0;
}

}  // namespace vgen9sim
