// Stand-in for the CTS's allocate_dma_buf (test_common/harness/alloc.h):
// a dma-buf fd of `size` bytes, TEST_SKIPPED_ITSELF when this machine has no
// exporter, -1 on another failure.  The CTS's takes it from the system
// dma-heap only; this one from this project's test sources
// (tests/e2e/test_dmabufs.hpp: CLDMABUF_TEST_DMABUF=heap|udmabuf|vgem|sim), so
// the host lane runs the tests on the virtual Gen9's PRIME exports.
#pragma once

#include <cstdint>

enum class dma_buf_heap_type { SYSTEM };
int allocate_dma_buf(uint64_t size, dma_buf_heap_type heap_type = dma_buf_heap_type::SYSTEM);
