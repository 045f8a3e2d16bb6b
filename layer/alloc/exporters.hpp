// The allocator's three exporters, each over the kernel seam
// (layer/base/kernel_ops.hpp) so the virtual Gen9 and unit fakes see every call.
// Each returns 0 and a new dma-buf fd (close-on-exec, read-write, at least
// `bytes` long, page-rounded), or -errno with nothing left behind: no fd, no
// GEM handle, no memfd.  -ENOENT/-ENODEV: the exporter is not on this machine.
#pragma once

#include <cstdint>
#include <string>

namespace cldmabuf {

// GEM_CREATE + PRIME export on the render node at `node_path` (opened and
// closed here: the dma-buf keeps the object alive).
int alloc_from_i915(const std::string &node_path, uint64_t bytes, int *fd);
// DMA_HEAP_IOCTL_ALLOC on /dev/dma_heap/system.
int alloc_from_dma_heap(uint64_t bytes, int *fd);
// A memfd of `bytes` (page-rounded), sealed against shrinking, turned into a
// dma-buf with UDMABUF_CREATE on /dev/udmabuf.
int alloc_from_udmabuf(uint64_t bytes, int *fd);

inline constexpr const char *kDmaHeapPath = "/dev/dma_heap/system";
inline constexpr const char *kUdmabufPath = "/dev/udmabuf";

}  // namespace cldmabuf
