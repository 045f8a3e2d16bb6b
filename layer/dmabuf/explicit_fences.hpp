// A dma-buf's implicit fences as an explicit sync_file and back (Linux >= 6.0,
// drivers/dma-buf/dma-buf.c): the two ioctls the semaphore bridge
// (layer/sync/dmabuf_bridge.hpp) and, once wired, acquire/release use.
// Through the kernel seam; no OpenCL call.
#pragma once

namespace cldmabuf {

// DMA_BUF_IOCTL_EXPORT_SYNC_FILE: a sync_file of the fences an access in
// this direction must wait for (write: every fence; read: the writers').
// 0 with *sync_fd set, or -errno (-ENOTTY before Linux 6.0).
int export_dmabuf_fences(int dmabuf_fd, bool write, int *sync_fd);

// DMA_BUF_IOCTL_IMPORT_SYNC_FILE: `sync_fd` becomes a fence of the dma-buf
// (write: its exclusive writer; read: a reader), so implicit-sync users of
// the buffer wait for it.  The caller keeps `sync_fd`.  0 or -errno.
int import_fence_into_dmabuf(int dmabuf_fd, int sync_fd, bool write);

}  // namespace cldmabuf
