#include "vva_memory.hpp"

#include <drm.h>
#include <i915_drm.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace vva {
namespace {

enum class Backend { none, gem, heap, udmabuf };
Backend chosen = Backend::none;

int gem_dmabuf(int drm_fd, size_t size, std::string *why) {
    drm_i915_gem_create create{};
    create.size = size;
    if (ioctl(drm_fd, DRM_IOCTL_I915_GEM_CREATE, &create)) {
        *why = std::string("I915_GEM_CREATE: ") + std::strerror(errno);
        return -1;
    }
    drm_prime_handle prime{};
    prime.handle = create.handle;
    prime.flags = DRM_CLOEXEC | DRM_RDWR;
    const int rc = ioctl(drm_fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime);
    const int err = errno;
    drm_gem_close close_arg{};
    close_arg.handle = create.handle;
    ioctl(drm_fd, DRM_IOCTL_GEM_CLOSE, &close_arg);  // the dma-buf keeps the object
    if (rc) {
        *why = std::string("PRIME_HANDLE_TO_FD: ") + std::strerror(err);
        return -1;
    }
    return prime.fd;
}

int heap_dmabuf(size_t size, std::string *why) {
    const int heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
    if (heap < 0) {
        *why = std::string("/dev/dma_heap/system: ") + std::strerror(errno);
        return -1;
    }
    dma_heap_allocation_data alloc{};
    alloc.len = size;
    alloc.fd_flags = O_RDWR | O_CLOEXEC;
    const int rc = ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &alloc);
    const int err = errno;
    close(heap);
    if (rc) {
        *why = std::string("DMA_HEAP_IOCTL_ALLOC: ") + std::strerror(err);
        return -1;
    }
    return static_cast<int>(alloc.fd);
}

int udmabuf_dmabuf(size_t size, std::string *why) {
    const int memfd = memfd_create("vva-surface", MFD_ALLOW_SEALING | MFD_CLOEXEC);
    if (memfd < 0 || ftruncate(memfd, static_cast<off_t>(size)) || fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
        *why = std::string("memfd: ") + std::strerror(errno);
        if (memfd >= 0) close(memfd);
        return -1;
    }
    const int dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
    if (dev < 0) {
        *why = std::string("/dev/udmabuf: ") + std::strerror(errno);
        close(memfd);
        return -1;
    }
    udmabuf_create create{};
    create.memfd = static_cast<__u32>(memfd);
    create.flags = UDMABUF_FLAGS_CLOEXEC;
    create.size = size;
    const int fd = ioctl(dev, UDMABUF_CREATE, &create);
    const int err = errno;
    close(dev);
    close(memfd);
    if (fd < 0) *why = std::string("UDMABUF_CREATE: ") + std::strerror(err);
    return fd;
}

int make(Backend b, int drm_fd, size_t size, std::string *why) {
    switch (b) {
    case Backend::gem: return gem_dmabuf(drm_fd, size, why);
    case Backend::heap: return heap_dmabuf(size, why);
    case Backend::udmabuf: return udmabuf_dmabuf(size, why);
    default: return -1;
    }
}

void sync(const DmaBuf &buf, uint64_t flags) {
    dma_buf_sync s{};
    s.flags = flags;
    while (ioctl(buf.fd, DMA_BUF_IOCTL_SYNC, &s) && (errno == EINTR || errno == EAGAIN)) {}
}

}  // namespace

bool allocate(int drm_fd, size_t size, DmaBuf *out, std::string *why) {
    size = (size + 4095) & ~size_t{4095};
    int fd = -1;
    if (chosen != Backend::none) {
        fd = make(chosen, drm_fd, size, why);
    } else {
        const char *want = std::getenv("VVA_MEMORY");
        const std::string w = want ? want : "";
        for (Backend b : {Backend::gem, Backend::heap, Backend::udmabuf}) {
            if (!w.empty() && w != (b == Backend::gem ? "gem" : b == Backend::heap ? "heap" : "udmabuf")) continue;
            std::string reason;
            fd = make(b, drm_fd, size, &reason);
            if (fd >= 0) {
                chosen = b;
                break;
            }
            *why += (why->empty() ? "" : "; ") + reason;
        }
    }
    if (fd < 0) return false;
    void *map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        *why = std::string("mmap of the dma-buf: ") + std::strerror(errno);
        close(fd);
        return false;
    }
    out->fd = fd;
    out->size = size;
    out->map = map;
    return true;
}

void free_buffer(DmaBuf *buf) {
    if (buf->map) munmap(buf->map, buf->size);
    if (buf->fd >= 0) close(buf->fd);
    *buf = DmaBuf{};
}

void cpu_begin(const DmaBuf &buf, bool write) {
    sync(buf, DMA_BUF_SYNC_START | (write ? DMA_BUF_SYNC_RW : DMA_BUF_SYNC_READ));
}

void cpu_end(const DmaBuf &buf, bool write) {
    sync(buf, DMA_BUF_SYNC_END | (write ? DMA_BUF_SYNC_RW : DMA_BUF_SYNC_READ));
}

const char *backend_name() {
    switch (chosen) {
    case Backend::gem: return "gem";
    case Backend::heap: return "heap";
    case Backend::udmabuf: return "udmabuf";
    default: return "none";
    }
}

}  // namespace vva
