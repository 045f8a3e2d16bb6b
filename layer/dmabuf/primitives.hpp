// dma-buf primitives over the kernel seam (uAPI: include/uapi/linux/dma-buf.h).
#pragma once

#include <cstdint>
#include <string>

#include "layer/registry.hpp"

namespace cldmabuf {

// From linux/dma-buf.h and linux/magic.h; defined here so the layer builds
// against any linux-libc-dev (EXPORT_SYNC_FILE needs 6.0 headers).
constexpr uint64_t DMABUF_SYNC_READ = 1 << 0;
constexpr uint64_t DMABUF_SYNC_WRITE = 1 << 1;
constexpr uint64_t DMABUF_SYNC_START = 0 << 2;
constexpr uint64_t DMABUF_SYNC_END = 1 << 2;
constexpr unsigned long DMABUF_IOCTL_SYNC = 0x40086200;  // _IOW('b', 0, struct dma_buf_sync)
constexpr long DMA_BUF_FS_MAGIC = 0x444d4142;            // "DMAB"

// Why an fd is not an importable dma-buf, or empty when it is.
std::string check_dmabuf_fd(int fd);
// Size from lseek(fd, 0, SEEK_END), the only size query dma-buf offers; -errno on failure.
int64_t dmabuf_size(int fd);
// DMA_BUF_IOCTL_SYNC, retried on EINTR/EAGAIN.  0 or -errno.
int dmabuf_sync(int fd, uint64_t flags);

// Wait for the dma-buf's implicit fences: for CPU reads only the writers
// (POLLIN), for CPU writes every fence (POLLOUT), as dma_buf_poll defines.
// 0 when idle, -ETIME after timeout_ms, -errno on error.
int dmabuf_wait_idle(int fd, bool for_write, int timeout_ms);

// ---- who owns the fd (docs/layer-rules.md, "Who owns the fd") ----
// The layer works on its own duplicate from the moment of import: the
// application may keep using, or close, its number.  adopt_dmabuf_fd() dups
// `app_fd` (F_DUPFD_CLOEXEC through the seam) into import.fd and records the
// application's fd and its identity (st_dev/st_ino).  `app_owned` = false
// (clImportMemoryARM) means the layer never closes `app_fd`.  0 or -errno.
int adopt_dmabuf_fd(Import &import, int app_fd, bool app_owned = true);
// Undo of adopt_dmabuf_fd for a refused import: closes the layer's dup only.
void drop_dmabuf_dup(Import &import);
// At destroy: always closes the layer's dup; closes the application's fd only
// when owned and that number still names the dma-buf recorded at import (a
// number the application closed and reused is never closed).  Returns
// whether the application's fd was closed.
bool close_import_fds(Import &import);

// CLDMABUF_FENCE_TIMEOUT_MS (default 1000), read once.
int fence_timeout_ms();

}  // namespace cldmabuf
