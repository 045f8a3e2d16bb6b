// tests/support/dmabuf_source.hpp: real dma-buf producers for tests.
//
// Allocates dma-bufs from the three in-kernel exporters a test VM offers
// (see docs/vm-lane.md): the system dma-heap, udmabuf (a sealed memfd) and
// vgem (dumb BOs exported with PRIME; also the only one with fences, so it is
// what tests use to make a dma-buf "busy").  None of them exists on a normal
// build host; check available() and skip.
//
// Nothing here depends on Catch2 or OpenCL.  Errors throw std::system_error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cldmabuf::test {

enum class DmabufKind {
    dma_heap,   // /dev/dma_heap/system, DMA_HEAP_IOCTL_ALLOC
    udmabuf,    // /dev/udmabuf, memfd + F_SEAL_SHRINK + UDMABUF_CREATE
    vgem,       // vgem DRM device, CREATE_DUMB + PRIME_HANDLE_TO_FD
};

const char* kind_name(DmabufKind kind);
// All kinds, in a fixed order (for table-driven tests).
std::vector<DmabufKind> all_kinds();

// Whether this machine can produce dma-bufs of `kind` (device present and
// openable).  Never throws.
bool available(DmabufKind kind);

// One dma-buf.  Move-only; the destructor closes whatever it still owns.
struct Dmabuf {
    int fd = -1;              // the dma-buf fd (O_RDWR | O_CLOEXEC)
    std::size_t size = 0;     // size in bytes (requested size, page-rounded)
    DmabufKind kind = DmabufKind::dma_heap;
    int vgem_fd = -1;         // vgem only: the DRM device fd owning the BO
    std::uint32_t vgem_handle = 0;  // vgem only: the GEM handle on vgem_fd

    Dmabuf() = default;
    Dmabuf(const Dmabuf&) = delete;
    Dmabuf& operator=(const Dmabuf&) = delete;
    Dmabuf(Dmabuf&& o) noexcept;
    Dmabuf& operator=(Dmabuf&& o) noexcept;
    ~Dmabuf();

    // Give up ownership of `fd` (e.g. after a successful OpenCL import, which
    // takes ownership of the fd).  The vgem device/handle stay owned.
    int release_fd() noexcept;
    // A new fd for the same dma-buf (dup, O_CLOEXEC); caller owns it.
    int dup_fd() const;
    void reset() noexcept;
};

// Allocate `size` bytes (rounded up to the page size; size > 0).
Dmabuf allocate(DmabufKind kind, std::size_t size);

// ---- CPU access helpers (any kind) ----------------------------------------
// mmap the dma-buf fd shared read/write.  munmap with unmap().
void* map(const Dmabuf& buf);
void unmap(void* ptr, std::size_t size);
// DMA_BUF_IOCTL_SYNC; flags are DMA_BUF_SYNC_{READ,WRITE,RW} | {START,END}.
void sync(int dmabuf_fd, std::uint64_t flags);
// Size the kernel reports: lseek(fd, 0, SEEK_END).
std::size_t kernel_size(int dmabuf_fd);
// poll() the dma-buf fd: POLLIN waits for the write (exclusive) fence,
// POLLOUT for all fences.  Returns true if ready within timeout_ms.
bool poll_ready(int dmabuf_fd, short events, int timeout_ms);

// ---- vgem fences ------------------------------------------------------------
// Attach an unsignalled fence to a vgem buffer (DRM_IOCTL_VGEM_FENCE_ATTACH).
// write=true attaches an exclusive/write fence (blocks readers and writers),
// false a shared/read fence (blocks writers).  Returns the fence id.
// The kernel signals (times out) unsignalled vgem fences after ~10 s.
std::uint32_t attach_fence(const Dmabuf& buf, bool write);
// Signal a fence (DRM_IOCTL_VGEM_FENCE_SIGNAL).
void signal_fence(const Dmabuf& buf, std::uint32_t fence_id);

// Path of the vgem DRM node used (empty if none).
std::string vgem_device_path();

}  // namespace cldmabuf::test
