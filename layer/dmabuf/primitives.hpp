// dma-buf primitives over the kernel seam (uAPI: include/uapi/linux/dma-buf.h).
#pragma once

#include <cstdint>
#include <string>


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

// CLDMABUF_FENCE_TIMEOUT_MS (default 1000), read once.
int fence_timeout_ms();

}  // namespace cldmabuf
