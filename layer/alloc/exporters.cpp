#include "layer/alloc/exporters.hpp"

#include <fcntl.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>
#include <sys/mman.h>

#include <cerrno>

#include "layer/i915/gem_export.hpp"
#include "layer/base/kernel_ops.hpp"

namespace cldmabuf {
namespace {

constexpr uint64_t kPage = 4096;

int page_round(uint64_t bytes, uint64_t *out) {
    if (bytes == 0) return -EINVAL;
    if (bytes > UINT64_MAX - kPage) return -E2BIG;
    *out = (bytes + kPage - 1) & ~(kPage - 1);
    return 0;
}

// Closes `fd` keeping errno.
void close_quietly(int fd) {
    const int err = errno;
    kernel().close(fd);
    errno = err;
}

}  // namespace

int alloc_from_i915(const std::string &node_path, uint64_t bytes, int *fd) {
    const int node = kernel().open(node_path.c_str(), O_RDWR);
    if (node < 0) return -errno;
    const int r = i915::export_new_gem(node, bytes, fd);
    kernel().close(node);
    return r;
}

int alloc_from_dma_heap(uint64_t bytes, int *fd) {
    uint64_t len = 0;
    if (int r = page_round(bytes, &len); r != 0) return r;
    const int heap = kernel().open(kDmaHeapPath, O_RDONLY);
    if (heap < 0) return -errno;
    dma_heap_allocation_data data{};
    data.len = len;
    data.fd_flags = O_RDWR | O_CLOEXEC;
    const int ok = kernel_ioctl_retry(heap, DMA_HEAP_IOCTL_ALLOC, &data);
    const int err = ok == 0 ? 0 : -errno;
    kernel().close(heap);
    if (err != 0) return err;
    *fd = static_cast<int>(data.fd);
    return 0;
}

int alloc_from_udmabuf(uint64_t bytes, int *fd) {
    uint64_t len = 0;
    if (int r = page_round(bytes, &len); r != 0) return r;
    // The device first: without it there is no point in a memfd.
    const int dev = kernel().open(kUdmabufPath, O_RDWR);
    if (dev < 0) return -errno;
    const int memfd = kernel().memfd_create("cldmabuf", MFD_ALLOW_SEALING);
    if (memfd < 0) {
        const int err = -errno;
        kernel().close(dev);
        return err;
    }
    int err = 0;
    // udmabuf refuses a memfd that could shrink under the device's pages.
    if (kernel().ftruncate(memfd, static_cast<off_t>(len)) != 0 || kernel().add_seals(memfd, F_SEAL_SHRINK) != 0) {
        err = -errno;
    } else {
        udmabuf_create create{};
        create.memfd = static_cast<__u32>(memfd);
        create.flags = UDMABUF_FLAGS_CLOEXEC;
        create.offset = 0;
        create.size = len;
        const int made = kernel_ioctl_retry(dev, UDMABUF_CREATE, &create);
        if (made < 0) err = -errno;
        else *fd = made;
    }
    close_quietly(memfd);  // the dma-buf holds the memfd's pages
    close_quietly(dev);
    return err;
}

}  // namespace cldmabuf
