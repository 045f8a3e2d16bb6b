// tests/support/dmabuf_source.cpp: see dmabuf_source.hpp.
#include "dmabuf_source.hpp"

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <linux/dma-heap.h>   // struct dma_heap_allocation_data, DMA_HEAP_IOCTL_ALLOC
#include <linux/udmabuf.h>    // struct udmabuf_create, UDMABUF_CREATE

#include <drm.h>              // libdrm's copy of the DRM core uAPI
#include <drm_mode.h>         // struct drm_mode_create_dumb

// vgem's uAPI header (include/uapi/drm/vgem_drm.h in Linux) is not shipped
// by libdrm or linux-libc-dev, so the two fence ioctls are restated here from
// that header (Linux v4.10+, unchanged since).
namespace {
using cldmabuf::test::Dmabuf;
using cldmabuf::test::DmabufKind;

struct drm_vgem_fence_attach {
    __u32 handle;
    __u32 flags;
    __u32 out_fence;
    __u32 pad;
};
struct drm_vgem_fence_signal {
    __u32 fence;
    __u32 flags;
};
constexpr __u32 kVgemFenceWrite = 0x1;   // VGEM_FENCE_WRITE
constexpr unsigned long kIoctlVgemFenceAttach =
    DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct drm_vgem_fence_attach);
constexpr unsigned long kIoctlVgemFenceSignal =
    DRM_IOW(DRM_COMMAND_BASE + 0x2, struct drm_vgem_fence_signal);
static_assert(kIoctlVgemFenceAttach == 0xC0106441UL);
static_assert(kIoctlVgemFenceSignal == 0x40086442UL);

[[noreturn]] void fail(const std::string& what, int err = errno) {
    throw std::system_error(err, std::generic_category(), "cldmabuf test support: " + what);
}

int xioctl(int fd, unsigned long req, void* arg) {
    int r;
    do {
        r = ::ioctl(fd, req, arg);
    } while (r == -1 && (errno == EINTR || errno == EAGAIN));
    return r;
}

std::size_t page_round(std::size_t n) {
    const auto pg = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return (n + pg - 1) / pg * pg;
}

constexpr const char* kHeapPath = "/dev/dma_heap/system";
constexpr const char* kUdmabufPath = "/dev/udmabuf";

// Returns the DRM driver name of an open DRM fd ("" if not DRM).
std::string drm_driver_name(int fd) {
    char name[64] = {};
    drm_version v{};
    v.name = name;
    v.name_len = sizeof(name) - 1;
    if (xioctl(fd, DRM_IOCTL_VERSION, &v) != 0) return {};
    return std::string(name, std::min<std::size_t>(v.name_len, sizeof(name) - 1));
}

// vgem's primary node (card*): CREATE_DUMB is not allowed on render nodes.
std::string find_vgem() {
    DIR* d = ::opendir("/dev/dri");
    if (!d) return {};
    std::string found;
    while (dirent* e = ::readdir(d)) {
        if (std::strncmp(e->d_name, "card", 4) != 0) continue;
        std::string path = std::string("/dev/dri/") + e->d_name;
        int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) continue;
        bool is_vgem = drm_driver_name(fd) == "vgem";
        ::close(fd);
        if (is_vgem) { found = path; break; }
    }
    ::closedir(d);
    return found;
}

bool can_open(const char* path) {
    int fd = ::open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return false;
    ::close(fd);
    return true;
}

Dmabuf alloc_heap(std::size_t size) {
    int heap = ::open(kHeapPath, O_RDWR | O_CLOEXEC);
    if (heap < 0) fail(std::string("open ") + kHeapPath);
    dma_heap_allocation_data a{};
    a.len = size;
    a.fd_flags = O_RDWR | O_CLOEXEC;
    int r = xioctl(heap, DMA_HEAP_IOCTL_ALLOC, &a);
    int err = errno;
    ::close(heap);
    if (r != 0) fail("DMA_HEAP_IOCTL_ALLOC", err);
    Dmabuf b;
    b.fd = static_cast<int>(a.fd);
    b.size = size;
    b.kind = DmabufKind::dma_heap;
    return b;
}

Dmabuf alloc_udmabuf(std::size_t size) {
    int memfd = ::memfd_create("cldmabuf-test-udmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
    if (memfd < 0) fail("memfd_create");
    if (::ftruncate(memfd, static_cast<off_t>(size)) != 0) {
        int err = errno; ::close(memfd); fail("ftruncate memfd", err);
    }
    if (::fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK) != 0) {
        int err = errno; ::close(memfd); fail("F_ADD_SEALS F_SEAL_SHRINK", err);
    }
    int dev = ::open(kUdmabufPath, O_RDWR | O_CLOEXEC);
    if (dev < 0) { int err = errno; ::close(memfd); fail(std::string("open ") + kUdmabufPath, err); }
    udmabuf_create c{};
    c.memfd = static_cast<__u32>(memfd);
    c.flags = UDMABUF_FLAGS_CLOEXEC;
    c.offset = 0;
    c.size = size;
    int fd = xioctl(dev, UDMABUF_CREATE, &c);   // returns the dma-buf fd
    int err = errno;
    ::close(dev);
    ::close(memfd);   // the dma-buf keeps the pages
    if (fd < 0) fail("UDMABUF_CREATE", err);
    Dmabuf b;
    b.fd = fd;
    b.size = size;
    b.kind = DmabufKind::udmabuf;
    return b;
}

Dmabuf alloc_vgem(std::size_t size) {
    std::string path = find_vgem();
    if (path.empty()) fail("no vgem device in /dev/dri", ENODEV);
    Dmabuf b;
    b.kind = DmabufKind::vgem;
    b.vgem_fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (b.vgem_fd < 0) fail("open " + path);
    // One row per page, 32 bpp: pitch 4096, height = pages.
    const std::size_t pg = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    drm_mode_create_dumb c{};
    c.width = static_cast<__u32>(pg / 4);
    c.bpp = 32;
    c.height = static_cast<__u32>(size / pg);
    if (xioctl(b.vgem_fd, DRM_IOCTL_MODE_CREATE_DUMB, &c) != 0) fail("DRM_IOCTL_MODE_CREATE_DUMB");
    b.vgem_handle = c.handle;
    drm_prime_handle p{};
    p.handle = c.handle;
    p.flags = DRM_RDWR | DRM_CLOEXEC;
    p.fd = -1;
    if (xioctl(b.vgem_fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p) != 0) fail("DRM_IOCTL_PRIME_HANDLE_TO_FD");
    b.fd = p.fd;
    b.size = size;
    if (c.size < size) fail("vgem dumb BO smaller than requested", EINVAL);
    return b;
}

}  // namespace

namespace cldmabuf::test {

const char* kind_name(DmabufKind kind) {
    switch (kind) {
    case DmabufKind::dma_heap: return "dma-heap";
    case DmabufKind::udmabuf: return "udmabuf";
    case DmabufKind::vgem: return "vgem";
    }
    return "?";
}

std::vector<DmabufKind> all_kinds() {
    return {DmabufKind::dma_heap, DmabufKind::udmabuf, DmabufKind::vgem};
}

bool available(DmabufKind kind) {
    switch (kind) {
    case DmabufKind::dma_heap: return can_open(kHeapPath);
    case DmabufKind::udmabuf: return can_open(kUdmabufPath);
    case DmabufKind::vgem: return !find_vgem().empty();
    }
    return false;
}

std::string vgem_device_path() { return find_vgem(); }

Dmabuf::Dmabuf(Dmabuf&& o) noexcept
    : fd(std::exchange(o.fd, -1)), size(std::exchange(o.size, 0)), kind(o.kind),
      vgem_fd(std::exchange(o.vgem_fd, -1)), vgem_handle(std::exchange(o.vgem_handle, 0)) {}

Dmabuf& Dmabuf::operator=(Dmabuf&& o) noexcept {
    if (this != &o) {
        reset();
        fd = std::exchange(o.fd, -1);
        size = std::exchange(o.size, 0);
        kind = o.kind;
        vgem_fd = std::exchange(o.vgem_fd, -1);
        vgem_handle = std::exchange(o.vgem_handle, 0);
    }
    return *this;
}

Dmabuf::~Dmabuf() { reset(); }

void Dmabuf::reset() noexcept {
    if (fd >= 0) ::close(fd);
    fd = -1;
    if (vgem_fd >= 0) {
        if (vgem_handle != 0) {
            drm_gem_close c{};
            c.handle = vgem_handle;
            xioctl(vgem_fd, DRM_IOCTL_GEM_CLOSE, &c);
        }
        ::close(vgem_fd);
    }
    vgem_fd = -1;
    vgem_handle = 0;
    size = 0;
}

int Dmabuf::release_fd() noexcept { return std::exchange(fd, -1); }

int Dmabuf::dup_fd() const {
    int d = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (d < 0) fail("dup dma-buf fd");
    return d;
}

Dmabuf allocate(DmabufKind kind, std::size_t size) {
    if (size == 0) fail("allocate: size 0", EINVAL);
    size = page_round(size);
    switch (kind) {
    case DmabufKind::dma_heap: return alloc_heap(size);
    case DmabufKind::udmabuf: return alloc_udmabuf(size);
    case DmabufKind::vgem: return alloc_vgem(size);
    }
    fail("allocate: bad kind", EINVAL);
}

void* map(const Dmabuf& buf) {
    void* p = ::mmap(nullptr, buf.size, PROT_READ | PROT_WRITE, MAP_SHARED, buf.fd, 0);
    if (p == MAP_FAILED) fail(std::string("mmap ") + kind_name(buf.kind) + " dma-buf");
    return p;
}

void unmap(void* ptr, std::size_t size) {
    if (ptr && ::munmap(ptr, size) != 0) fail("munmap");
}

void sync(int dmabuf_fd, std::uint64_t flags) {
    dma_buf_sync s{};
    s.flags = flags;
    if (xioctl(dmabuf_fd, DMA_BUF_IOCTL_SYNC, &s) != 0) fail("DMA_BUF_IOCTL_SYNC");
}

std::size_t kernel_size(int dmabuf_fd) {
    off_t end = ::lseek(dmabuf_fd, 0, SEEK_END);
    if (end < 0) fail("lseek(SEEK_END) on dma-buf");
    ::lseek(dmabuf_fd, 0, SEEK_SET);
    return static_cast<std::size_t>(end);
}

bool poll_ready(int dmabuf_fd, short events, int timeout_ms) {
    pollfd p{dmabuf_fd, events, 0};
    int r;
    do {
        r = ::poll(&p, 1, timeout_ms);
    } while (r < 0 && errno == EINTR);
    if (r < 0) fail("poll dma-buf");
    return r > 0 && (p.revents & events) != 0;
}

std::uint32_t attach_fence(const Dmabuf& buf, bool write) {
    if (buf.kind != DmabufKind::vgem || buf.vgem_fd < 0) fail("attach_fence: not a vgem buffer", EINVAL);
    drm_vgem_fence_attach a{};
    a.handle = buf.vgem_handle;
    a.flags = write ? kVgemFenceWrite : 0;
    if (xioctl(buf.vgem_fd, kIoctlVgemFenceAttach, &a) != 0) fail("DRM_IOCTL_VGEM_FENCE_ATTACH");
    return a.out_fence;
}

void signal_fence(const Dmabuf& buf, std::uint32_t fence_id) {
    if (buf.kind != DmabufKind::vgem || buf.vgem_fd < 0) fail("signal_fence: not a vgem buffer", EINVAL);
    drm_vgem_fence_signal s{};
    s.fence = fence_id;
    if (xioctl(buf.vgem_fd, kIoctlVgemFenceSignal, &s) != 0) fail("DRM_IOCTL_VGEM_FENCE_SIGNAL");
}

}  // namespace cldmabuf::test
