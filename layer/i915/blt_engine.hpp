// Public facade of the Gen9 blitter path.  Its caller (layer/blit) imports
// each dma-buf once (BltImport, cached per import by layer/blit/gem_cache)
// and submits copies between imported objects; each submission is one batch
// on the BCS ring, on a GEM context (BltContext, or the engine's own), and
// returns a sync_file the caller owns.  Queue ordering and events are the
// caller's (layer/blit/submit).  Thread-safe: one mutex per engine, held
// across ioctls that do not wait, never across a fence wait.
#pragma once

#include <cerrno>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "layer/i915/blit_plan.hpp"
#include "layer/i915/gen9_probe.hpp"

namespace cldmabuf::i915 {

class GemDevice;

struct BltImport {
    uint32_t handle = 0;
    uint64_t gpu_addr = 0;
    uint64_t size = 0;
};

// A linear buffer of the node's own, mapped for the CPU (tiled image
// imports de-tile into it).  `obj` goes to the submit_* calls like an import.
struct BltShadow {
    BltImport obj;
    void *map = nullptr;
};

// A GEM context of the engine's node.  i915 runs the batches of one context
// in submission order, each once the one before it completed (in-fence
// waits included), and batches of different contexts independently: each
// submitter that must not be held up by another's batches (a command queue)
// gets its own.
struct BltContext {
    uint32_t id = 0;
    // 0: non-persistent, destroying it cancels its outstanding batches; else
    // why not (-errno: -ENODEV without preempt-to-idle or engine reset).
    int cancel_support = -ENOTSUP;
};

class BltEngine {
public:
    // Lazily probes once (thread-safe).  nullptr when there is no Gen9 i915
    // render node or CLDMABUF_BLT=off.  The instance lives for the process.
    static BltEngine *instance();
    // Probe now through the current kernel seam (tests; instance() uses it).
    // nullptr on failure, with the reason in *err when given.
    static std::unique_ptr<BltEngine> create(int *err = nullptr);
    ~BltEngine();

    // PRIME_FD_TO_HANDLE + a softpin range.  size 0 = the dma-buf's size.
    // The dma-buf fd stays the caller's.  0 or -errno.
    int import(int dmabuf_fd, uint64_t size, BltImport *out);
    // GEM_CLOSE (last reference) + free the address range.
    void release(const BltImport &imp);

    // A mapped linear GEM object of at least `bytes`.  0 or -errno.
    int create_shadow(uint64_t bytes, BltShadow *out);
    void release_shadow(const BltShadow &shadow);

    // CONTEXT_CREATE + PERSISTENCE = 0.  0, or -errno with nothing made.
    int open_context(BltContext *out);
    // CONTEXT_DESTROY: the kernel cancels a non-persistent context's
    // outstanding batches (their fences end with -EIO).  ctx->id becomes 0.
    void close_context(BltContext *ctx);

    // Build + submit one batch, on `ctx` (nullptr: the engine's own context).  0 and *out_fence (a sync_file fd the caller
    // owns and closes), or -errno: -EINVAL for out-of-bounds or inexpressible
    // requests, else the execbuffer error (-ENOMEM, -ENOSPC, -EIO, ...).
    // A zero-sized copy still submits an empty batch so a fence is returned.
    // in_fence >= 0: a sync_file the batch waits for on the GPU
    // (I915_EXEC_FENCE_IN; the fd stays the caller's).
    int submit_copy_buffer(const BltImport &src, const BltImport &dst, uint64_t src_off,
                           uint64_t dst_off, uint64_t size, int *out_fence, int in_fence = -1,
                           const BltContext *ctx = nullptr);
    int submit_copy_rect(const BltImport &src, const BltImport &dst, const RectCopy &rect,
                         int *out_fence, int in_fence = -1,
                           const BltContext *ctx = nullptr);
    int submit_copy_2d(const BltImport &src, const BltImport &dst, const ImageCopy &copy,
                       int *out_fence, int in_fence = -1,
                           const BltContext *ctx = nullptr);

    // Wait for a sync_file: 1 signalled ok, 0 timeout, -errno when the fence
    // signalled with an error (SYNC_IOC_FILE_INFO status < 0, e.g. -EIO after
    // a GPU hang) or the fd is bad.  timeout_ms < 0 waits forever.
    static int wait_fence(int fence_fd, int timeout_ms);

    // Cancels every batch still outstanding on the engine's own GEM context
    // (a batch that outlasted the fence bound, and any queued with it): their
    // fences end with -EIO once the kernel has preempted or reset them.  0,
    // or -ENOTSUP where the kernel keeps the context persistent
    // (cancel_support()), or the -errno of the fresh context.
    int cancel_outstanding();
    // 0 when cancel_outstanding() can work, else why not (-errno).
    int cancel_support() const;

    struct Stats {
        uint64_t submits = 0, blits = 0, bytes = 0;
    };
    Stats stats() const;
    const Gen9Info &device_info() const;
    // Live imports / batch buffers (leak checks in tests).
    size_t live_imports() const;
    size_t batch_buffers() const;
    size_t live_shadows() const;
    // GEM contexts alive: the engine's own and the open BltContexts.
    size_t live_contexts() const;

private:
    BltEngine() = default;
    int submit_plan(const BltImport &src, const BltImport &dst, const BlitPlan &plan,
                    int *out_fence, int in_fence, const BltContext *ctx);

    mutable std::mutex mu_;
    std::unique_ptr<GemDevice> dev_;
    Stats stats_;
};

}  // namespace cldmabuf::i915
