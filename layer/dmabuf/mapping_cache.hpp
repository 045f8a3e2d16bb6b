// CPU mappings of dma-bufs, kept after their import for the next import of
// the same dma-buf.
//
// Why: some exporters map every page up front (the system dma-heap's mmap
// calls remap_pfn_range page by page: 116 ms for 256 MiB in the VM lane), so
// an import costs O(size) there however little the layer itself does.  Video
// and camera pipelines import the same few buffers of a pool frame after
// frame (FFmpeg maps every VA surface anew per frame, V4L2 and GStreamer
// re-export their pool's buffers), so the mapping an import made is parked
// when its cl_mem goes and the next import of the same dma-buf takes it:
// O(1) from the second import on, with no setting (CLDMABUF_MAP_CACHE_MB
// overrides the budget; 0 turns the cache off).
//
// Invariants, and why each holds:
// 1. A mapping is held by at most one live import.  A second import of a
//    dma-buf while the first lives (the two planes of an NV12 frame) gets a
//    mapping of its own; only an idle (parked) mapping is handed out.  So
//    whatever is done to one import's mapping (the failed-acquire shield
//    replaces it with anonymous pages, layer/handoff/failed_acquire_shield)
//    never reaches another import's kernels, and restoring it never
//    re-attaches pages another import's shield needs detached.
// 2. A parked mapping is only ever handed to an import of the same memory.
//    Key: the dma-buf's (st_dev, st_ino) and its size (a dma-buf's inode
//    carries its size; a file of size 0, such as the one anonymous inode
//    that all dma-bufs shared before Linux 5.3, is never cached).  The key
//    names one memory only while that inode lives: once freed its number
//    may be handed out again (get_next_ino() wraps at 32 bits), and some
//    exporters' mappings do not hold the dma-buf's file at all (i915's
//    dma-buf mmap points the VMA at the GEM object's shmem file), so the
//    mapping alone cannot keep the number taken.  Hence each entry holds a
//    duplicate fd of its dma-buf from its mapping to its unmapping: while
//    it is open the inode lives and no other file has its number.  A new
//    buffer of another size or content on a recycled number therefore
//    never meets a stale mapping: the old number cannot be recycled while
//    the entry exists.
// 3. A parked mapping goes when the memory goes elsewhere.  The entry's own
//    fd and mapping keep the dma-buf alive, so "the last fd closed" means
//    "only the entry's references are left": the kernel prints a dma-buf's
//    file reference count in fdinfo ("count:", dma_buf_show_fdinfo), and the
//    entry learns its own share when it maps (the count before and after
//    its mmap: 1 for its fd, plus 1 where the exporter's mapping holds the
//    file).  While anything is parked a thread looks every 50 ms (a procfs
//    read per parked mapping) and unmaps those whose count fell to the
//    cache's share: the sum of every entry of that dma-buf (two imports of
//    it alive at once park two entries, each pinning the file); a VA
//    surface destroyed or a pool freed drops the GEM
//    handles' and the producer's references, so it is seen the same way.
//    Nothing is notified when a count falls, so "the moment" is the next
//    look.  Where fdinfo has no count (not a dma-buf, a fake) the entry
//    stays until evicted: the budget bounds what is held.
// 4. Bounded: parked mappings take at most the budget's bytes (default
//    kDefaultBudgetMiB, 64 MiB where pointers are 32-bit) and kMaxParked fds,
//    evicted least recently parked first; a mapping larger than the budget
//    is never parked; failed imports park nothing.
// 5. What a user built over a mapping of its own (an attachment: the copy
//    route's registration of a mapping with an ICD) parks with that mapping
//    (park_mapping) and comes back only to a taker that names the same
//    owner (the ICD context it was made in): take_parked_mapping, which
//    hands the mapping out of the cache altogether (a live registration
//    holds no fd of the cache's).  A plain acquire_mapping never gets it.
//    An entry with an attachment that goes (3 or 4) hands its mapping to
//    the attachment, which unmaps it only after letting go of what it
//    built over it: an ICD that tracks what it registered by address must
//    not meet that range mapped again before.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "layer/base/owned_mapping.hpp"
#include "layer/dmabuf/identity.hpp"

namespace cldmabuf {

// Invariant 5's attachment.  The cache never calls into OpenCL itself.
class MappingAttachment {
public:
    virtual ~MappingAttachment() = default;
    // Whose it is: it comes back only to a taker naming the same.
    virtual uintptr_t owner() const = 0;
    // The entry goes: let go of what was built over `map`, then unmap it
    // (later is fine; called under the cache's lock: post, never wait).
    virtual void retire(OwnedMapping map) = 0;
};

struct MappingCacheStats {
    uint64_t hits = 0, misses = 0, evictions = 0, gone = 0;  // gone: dropped when only the cache held the dma-buf
    uint64_t idle_bytes = 0, live_mappings = 0, parked = 0;
};

// A mapping of at least `len` bytes of dma-buf `fd` from offset 0, used by
// one import until release_mapping: read/write when `writable`, else
// read-only (a parked mapping is reused only with the same protection).
// Returns MAP_FAILED with errno set when mmap fails.  *mapped_len receives
// the length to hand back.  `known`: `fd`'s identity where the caller has
// it (an import's, taken on that fd: layer/dmabuf/identity.hpp), else it is
// asked here.
void *acquire_mapping(int fd, size_t len, bool writable, size_t *mapped_len,
                      const DmabufIdentity *known = nullptr);
// Hands a mapping back: parked within the budget when `keep`, else unmapped
// (failed imports keep nothing).
void release_mapping(void *addr, size_t mapped_len, bool keep = true);

// Parks `map` (a mapping of dma-buf `fd`, whose identity is `id`, made by
// the caller) with `attach`, holding a duplicate of `fd` as every entry
// does; where it cannot be parked (cache off, over the budget, no fd)
// `attach` retires it at once.
void park_mapping(int fd, const DmabufIdentity &id, OwnedMapping map, bool writable,
                  std::unique_ptr<MappingAttachment> attach);
// A parked mapping of `id`'s dma-buf of at least `len` bytes with an
// attachment of `owner`, taken out of the cache (the caller owns the
// mapping and the attachment now); an empty mapping when there is none.
OwnedMapping take_parked_mapping(const DmabufIdentity &id, size_t len, bool writable, uintptr_t owner,
                                 std::unique_ptr<MappingAttachment> *attached);

MappingCacheStats mapping_cache_stats();
// Unmaps every parked mapping (tests, and the layer's teardown).
void drop_idle_mappings();

}  // namespace cldmabuf
