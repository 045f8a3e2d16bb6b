// A dma-buf's implicit fences as an explicit sync_file and back (Linux >= 6.0,
// drivers/dma-buf/dma-buf.c): the two ioctls the semaphore bridge
// (layer/sync/dmabuf_bridge.hpp) and, once wired, acquire/release use.
// Through the kernel seam; no OpenCL call.
#pragma once

#include <errno.h>

namespace cldmabuf {

// CLDMABUF_EXPLICIT_FENCES: `auto` (default) lets acquire wait on the
// exported sync_file and release attach its fence where the kernel has the
// ioctls; `off` keeps the poll and attaches nothing.  Read once.
bool explicit_fences_on();

// DMA_BUF_IOCTL_EXPORT_SYNC_FILE: a sync_file of the fences an access in
// this direction must wait for (write: every fence; read: the writers').
// 0 with *sync_fd set, or -errno (-ENOTTY before Linux 6.0).
int export_dmabuf_fences(int dmabuf_fd, bool write, int *sync_fd);

// DMA_BUF_IOCTL_IMPORT_SYNC_FILE: `sync_fd` becomes a fence of the dma-buf
// (write: its exclusive writer; read: a reader), so implicit-sync users of
// the buffer wait for it.  The caller keeps `sync_fd`.  0 or -errno.
int import_fence_into_dmabuf(int dmabuf_fd, int sync_fd, bool write);

// The same wait as dmabuf_wait_idle (primitives.hpp), on the fences taken
// out as one sync_file: EXPORT_SYNC_FILE, poll(POLLIN) bounded by
// `timeout_ms`, close.  *exported says whether the export worked; if not,
// the export's -errno is returned (-ENOTTY before Linux 6.0) and nothing was
// waited for.  Else 0 when the fences signalled (a fence's error status is
// not looked at: poll on the dma-buf does not either), -ETIME after the
// timeout, -errno when the poll failed.  The sync_file is closed on every path.
int dmabuf_wait_exported_fences(int dmabuf_fd, bool write, int timeout_ms, bool *exported);
// Whether an export errno means "not supported here" (Linux < 6.0: ENOTTY;
// an exporter or a kernel that refuses the flags: EINVAL).
inline bool export_unsupported(int err) { return err == -ENOTTY || err == -EINVAL; }

}  // namespace cldmabuf
