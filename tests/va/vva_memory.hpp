// Where the virtual VA driver's surfaces live: real dma-bufs, mapped for
// the CPU work the driver does (uploads, downloads, derived images).
//   gem      i915 GEM objects on the display's DRM fd, exported with PRIME
//            (on the host: the virtual Gen9's, tests/sim)
//   heap     /dev/dma_heap/system (in the VM)
//   udmabuf  a sealed memfd through /dev/udmabuf (in the VM)
// VVA_MEMORY picks one; by default the first that works, in that order.
#pragma once

#include <cstddef>
#include <string>

namespace vva {

struct DmaBuf {
    int fd = -1;
    size_t size = 0;
    void *map = nullptr;  // whole-buffer MAP_SHARED mapping
};

// A dma-buf of at least `size` bytes, mapped; false with *why on failure.
bool allocate(int drm_fd, size_t size, DmaBuf *out, std::string *why);
void free_buffer(DmaBuf *buf);
// DMA_BUF_IOCTL_SYNC around the driver's CPU access (write: also read).
void cpu_begin(const DmaBuf &buf, bool write);
void cpu_end(const DmaBuf &buf, bool write);
// The backend in use ("gem", "heap", "udmabuf"), after the first allocation.
const char *backend_name();

}  // namespace vva
