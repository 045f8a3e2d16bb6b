#include "layer/dmabuf/explicit_fences.hpp"

#include <errno.h>
// _IOWR, which DMA_BUF_IOCTL_EXPORT_SYNC_FILE expands to: <linux/dma-buf.h>
// does not include it, and only x86-64 gets it through another header.
#include <linux/ioctl.h>
#include <linux/dma-buf.h>
#include <poll.h>

#include <cstring>

#include "layer/base/kernel_ops.hpp"
#include "layer/base/owned_fd.hpp"
#include "layer/base/settings.hpp"

namespace cldmabuf {

bool explicit_fences_on() {
    static const bool on = [] {
        const char *v = setting("CLDMABUF_EXPLICIT_FENCES");
        return !(v && !std::strcmp(v, "off"));  // a refused value was logged by the settings loader: auto
    }();
    return on;
}

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

int dmabuf_wait_exported_fences(int dmabuf_fd, bool write, int timeout_ms, bool *exported) {
    int exported_fd = -1;
    const int err = export_dmabuf_fences(dmabuf_fd, write, &exported_fd);
    *exported = err == 0;
    if (err < 0) return err;
    const OwnedFd sync_fd(exported_fd);
    short revents = 0;
    const int r = kernel_poll_bounded(sync_fd.get(), POLLIN, timeout_ms, &revents);
    if (r < 0) return r;
    if (r == 0) return -ETIME;
    return revents & (POLLERR | POLLNVAL) ? -EBADF : 0;
}

}  // namespace cldmabuf
