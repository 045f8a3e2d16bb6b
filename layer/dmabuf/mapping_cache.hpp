// CPU mappings of dma-bufs, shared and kept for reuse.
//
// Why: some exporters map every page up front (the system dma-heap's mmap
// calls remap_pfn_range page by page: 116 ms for 256 MiB in the VM lane), so
// an import costs O(size) there however little the layer itself does.  Video
// and camera pipelines import the same few buffers of a pool over and over,
// so the mapping of a buffer is kept after its cl_mem goes and the next
// import of the same dma-buf (same inode, whatever fd) reuses it: O(1) from
// the second import on.  Two imports of one dma-buf alive at once (the planes
// of an NV12 frame) share one mapping.
//
// Cost: an idle cached mapping keeps its dma-buf's memory alive (a mapping
// holds a reference on the file after the application and the producer let
// go of it), so the cache is opt-in: CLDMABUF_MAP_CACHE_MB=N keeps up to N MiB
// of idle mappings, evicted oldest first (unset or 0: every mapping goes with
// its last import, as before).  docs/benchmarks.md has the numbers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cldmabuf {

struct MappingCacheStats {
    uint64_t hits = 0, misses = 0, evictions = 0;
    uint64_t idle_bytes = 0, live_mappings = 0;
};

// A mapping of at least `len` bytes of dma-buf `fd` from offset 0:
// read/write when `writable`, else read-only (a cached mapping is reused
// only with the same protection).  Returns MAP_FAILED with errno
// set when mmap fails.  *mapped_len receives the length to hand back.
void *acquire_mapping(int fd, size_t len, bool writable, size_t *mapped_len);
// Hands a mapping back: kept idle within the budget when `keep`, else
// unmapped as soon as no import uses it (failed imports keep nothing).
void release_mapping(void *addr, size_t mapped_len, bool keep = true);

MappingCacheStats mapping_cache_stats();
// Unmaps every idle mapping (tests, and the layer's teardown).
void drop_idle_mappings();

}  // namespace cldmabuf
