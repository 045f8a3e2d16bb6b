#include "layer/dmabuf/explicit_fences.hpp"

#include <errno.h>
#include <linux/dma-buf.h>

#include "layer/kernel_ops.hpp"

namespace cldmabuf {

int export_dmabuf_fences(int dmabuf_fd, bool write, int *sync_fd) {
    dma_buf_export_sync_file e{};
    e.flags = write ? DMA_BUF_SYNC_WRITE : DMA_BUF_SYNC_READ;
    e.fd = -1;
    if (kernel_ioctl_retry(dmabuf_fd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &e) != 0) return -errno;
    *sync_fd = e.fd;
    return 0;
}

int import_fence_into_dmabuf(int dmabuf_fd, int sync_fd, bool write) {
    dma_buf_import_sync_file i{};
    i.flags = write ? DMA_BUF_SYNC_WRITE : DMA_BUF_SYNC_READ;
    i.fd = sync_fd;
    return kernel_ioctl_retry(dmabuf_fd, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &i) == 0 ? 0 : -errno;
}

}  // namespace cldmabuf
