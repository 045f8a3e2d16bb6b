// Per-device i915 GEM state: the render-node fd, the device's own GEM
// context and the ones made for submitters (create_context), dma-buf imports (refcounted per GEM handle), a softpin address allocator and a
// pool of reusable batch buffers.  Every kernel call goes through the seam
// (layer/base/kernel_ops.hpp).  Not thread-safe: BltEngine serialises access.
#pragma once

#include <cerrno>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "layer/base/gem_handle.hpp"
#include "layer/base/owned_fd.hpp"
#include "layer/base/owned_mapping.hpp"
#include "layer/i915/gen9_probe.hpp"

namespace cldmabuf::i915 {

inline constexpr uint64_t kPageSize = 4096;

// Sign-extends bit 47 (the form execbuffer wants for softpinned offsets).
inline uint64_t canonical_address(uint64_t addr) {
    return static_cast<uint64_t>(static_cast<int64_t>(addr << 16) >> 16);
}

// Page-aligned GPU VA ranges in [start, end), best-fit from a free list, else
// bumped.  end defaults to 2^47 so every address is canonical as-is.
class VaAllocator {
public:
    explicit VaAllocator(uint64_t start = uint64_t{1} << 20, uint64_t end = uint64_t{1} << 47)
        : next_(start), end_(end) {}
    // 0 when exhausted.
    uint64_t alloc(uint64_t size);
    void free(uint64_t addr, uint64_t size);
    uint64_t bytes_in_use() const { return in_use_; }

private:
    uint64_t next_, end_, in_use_ = 0;
    std::multimap<uint64_t, uint64_t> free_by_size_;  // size -> addr
};

struct BatchBuffer {
    uint32_t handle = 0;
    uint64_t gpu_addr = 0;
    uint64_t size = 0;
    uint32_t *map = nullptr;
    bool in_flight = false;
    uint64_t seq = 0;  // submission order, oldest retired first
};

// A linear GEM object of the node's own, mapped for the CPU: what a tiled
// image import de-tiles into (layer/blit/tiled_shadow.cpp).
struct ShadowBuffer {
    uint32_t handle = 0;
    uint64_t gpu_addr = 0;
    uint64_t size = 0;  // page-rounded
    void *map = nullptr;
};

class GemDevice {
public:
    // Takes ownership of info.fd (closed on failure too).  Creates the GEM context, non-persistent
    // where the kernel allows it (see cancel_context).  0 or -errno.
    static int create(const Gen9Info &info, std::unique_ptr<GemDevice> *out);
    ~GemDevice();
    GemDevice(const GemDevice &) = delete;
    GemDevice &operator=(const GemDevice &) = delete;

    int fd() const { return fd_.get(); }
    uint32_t context() const { return ctx_; }
    // 0 when the context is non-persistent (I915_CONTEXT_PARAM_PERSISTENCE
    // = 0): destroying it cancels its batches.  Else the kernel's -errno
    // (-ENODEV: no preempt-to-idle or engine reset).
    int cancel_support() const { return cancel_support_; }
    // Destroys the context, so the kernel cancels every batch still
    // outstanding on it ([uapi] their fences end with -EIO; one not yet
    // submitted skips its payload), and makes a fresh one for later batches.
    // 0; when the context is persistent, why (cancel_support(), or -ENOTSUP
    // for the default context); or the -errno of making the new one (later
    // batches then go to the default context).
    int cancel_context();
    const Gen9Info &info() const { return info_; }

    // A further GEM context, non-persistent where the kernel allows it: 0,
    // *id, and in *cancel_support 0 or why destroying it would not cancel
    // its batches (-errno of the setparam).  -errno when none was made.
    int create_context(uint32_t *id, int *cancel_support);
    // Destroys a context of create_context (a non-persistent one's
    // outstanding batches are cancelled by the kernel).
    void destroy_context(uint32_t id);
    // Contexts alive: the device's own and those of create_context.
    size_t contexts() const { return contexts_; }

    // PRIME_FD_TO_HANDLE + a softpin range.  Importing the same dma-buf again
    // yields the same handle (the kernel dedups), so the same address and a
    // reference.  size 0 = ask the dma-buf (lseek SEEK_END).
    int import_dmabuf(int dmabuf_fd, uint64_t size, uint32_t *handle, uint64_t *gpu_addr,
                      uint64_t *size_out);
    // Drops one reference; the last one GEM_CLOSEs and frees the range.
    void release(uint32_t handle);

    // A mapped batch buffer of at least `bytes`, idle.  Reuses a retired one
    // (GEM_BUSY on those in flight, oldest first), else creates one, up to
    // kMaxBatches; then -EBUSY without waiting.
    int acquire_batch(size_t bytes, BatchBuffer **out);
    // After execbuffer: mark in flight (submitted) or give back at once.
    void retire_batch(BatchBuffer *b, bool submitted);

    // GEM_CREATE + GEM_MMAP_OFFSET (WB on LLC parts, else WC) + mmap + a
    // softpin range.  0 or -errno; nothing is left behind on failure.
    int create_shadow(uint64_t bytes, ShadowBuffer *out);
    // munmap + GEM_CLOSE + free the range.  A batch still in flight keeps
    // its own reference to the object in the kernel.
    void destroy_shadow(const ShadowBuffer &shadow);

    size_t imports() const { return imports_.size(); }
    size_t batches() const { return batches_.size(); }
    size_t shadows() const { return shadows_; }

    static constexpr size_t kMinBatchBytes = 16 * 1024;
    static constexpr size_t kMaxBatches = 64;

private:
    GemDevice() = default;
    int make_context();
    int create_mapped(uint64_t bytes, GemHandle *handle, OwnedMapping *map, uint64_t *size, uint64_t *gpu_addr);
    int new_batch(size_t bytes, BatchBuffer **out);
    bool batch_idle(BatchBuffer *b);
    void destroy_batch(BatchBuffer &b);

    struct ImportEntry {
        uint32_t refs = 0;
        uint64_t gpu_addr = 0;
        uint64_t size = 0;
        uint64_t va_size = 0;
    };

    Gen9Info info_;
    OwnedFd fd_;
    uint32_t ctx_ = 0;
    int cancel_support_ = -ENOTSUP;
    VaAllocator va_;
    std::unordered_map<uint32_t, ImportEntry> imports_;
    std::vector<std::unique_ptr<BatchBuffer>> batches_;
    uint64_t seq_ = 0;
    size_t shadows_ = 0;
    size_t contexts_ = 0;
};

}  // namespace cldmabuf::i915
