#include "layer/alloc/exporters.hpp"

#include <fcntl.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>
#include <sys/mman.h>

#include <cerrno>

#include "layer/i915/gem_export.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/owned_fd.hpp"

namespace cldmabuf {
namespace {

constexpr uint64_t kPage = 4096;

int page_round(uint64_t bytes, uint64_t *out) {
    if (bytes == 0) return -EINVAL;
    if (bytes > UINT64_MAX - kPage) return -E2BIG;
    *out = (bytes + kPage - 1) & ~(kPage - 1);
    return 0;
}

}  // namespace

// Each error is taken from errno before the fds go (at the end of scope).

int alloc_from_i915(const std::string &node_path, uint64_t bytes, int *fd) {
    const OwnedFd node(kernel().open(node_path.c_str(), O_RDWR));
    if (!node) return -errno;
    return i915::export_new_gem(node.get(), bytes, fd);
}

int alloc_from_dma_heap(uint64_t bytes, int *fd) {
    uint64_t len = 0;
    if (int r = page_round(bytes, &len); r != 0) return r;
    const OwnedFd heap(kernel().open(kDmaHeapPath, O_RDONLY));
    if (!heap) return -errno;
    dma_heap_allocation_data data{};
    data.len = len;
    data.fd_flags = O_RDWR | O_CLOEXEC;
    if (kernel_ioctl_retry(heap.get(), DMA_HEAP_IOCTL_ALLOC, &data) != 0) return -errno;
    *fd = static_cast<int>(data.fd);
    return 0;
}

int alloc_from_udmabuf(uint64_t bytes, int *fd) {
    uint64_t len = 0;
    if (int r = page_round(bytes, &len); r != 0) return r;
    // The device first: without it there is no point in a memfd.
    const OwnedFd dev(kernel().open(kUdmabufPath, O_RDWR));
    if (!dev) return -errno;
    // Closed once the dma-buf is made: the dma-buf holds the memfd's pages.
    const OwnedFd memfd(kernel().memfd_create("cldmabuf", MFD_ALLOW_SEALING));
    if (!memfd) return -errno;
    // udmabuf refuses a memfd that could shrink under the device's pages.
    if (kernel().ftruncate(memfd.get(), static_cast<off_t>(len)) != 0 ||
        kernel().add_seals(memfd.get(), F_SEAL_SHRINK) != 0)
        return -errno;
    udmabuf_create create{};
    create.memfd = static_cast<__u32>(memfd.get());
    create.flags = UDMABUF_FLAGS_CLOEXEC;
    create.offset = 0;
    create.size = len;
    const int made = kernel_ioctl_retry(dev.get(), UDMABUF_CREATE, &create);
    if (made < 0) return -errno;
    *fd = made;
    return 0;
}

}  // namespace cldmabuf
