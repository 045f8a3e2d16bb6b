#include "layer/i915/gem.hpp"

#include <algorithm>
#include <drm.h>
#include <i915_drm.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include "layer/base/gem_handle.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/owned_mapping.hpp"

namespace cldmabuf::i915 {
namespace {

uint64_t page_align(uint64_t v) { return (v + kPageSize - 1) & ~(kPageSize - 1); }

int ioctl_errno(int fd, unsigned long req, void *arg) {
    return kernel_ioctl_retry(fd, req, arg) == 0 ? 0 : -errno;
}

}  // namespace

uint64_t VaAllocator::alloc(uint64_t size) {
    size = page_align(size ? size : 1);
    auto it = free_by_size_.lower_bound(size);
    if (it != free_by_size_.end()) {
        const uint64_t addr = it->second, have = it->first;
        free_by_size_.erase(it);
        if (have > size) free_by_size_.emplace(have - size, addr + size);
        in_use_ += size;
        return addr;
    }
    if (next_ + size > end_ || next_ + size < next_) return 0;
    const uint64_t addr = next_;
    next_ += size;
    in_use_ += size;
    return addr;
}

void VaAllocator::free(uint64_t addr, uint64_t size) {
    size = page_align(size ? size : 1);
    in_use_ -= size;
    if (addr + size == next_) {
        next_ = addr;  // give the tail back to the bump pointer
        return;
    }
    free_by_size_.emplace(size, addr);
}

int GemDevice::create_context(uint32_t *id, int *cancel_support) {
    drm_i915_gem_context_create cc{};
    if (int r = ioctl_errno(fd(), DRM_IOCTL_I915_GEM_CONTEXT_CREATE, &cc); r != 0) return r;
    ++contexts_;
    // Non-persistent, so that a batch outlasting the layer's fence bound can
    // be cancelled by destroying the context ([uapi] I915_CONTEXT_PARAM_
    // PERSISTENCE; [K] needs preempt-to-idle and an engine reset, -ENODEV
    // without them).
    drm_i915_gem_context_param p{};
    p.ctx_id = cc.ctx_id;
    p.param = I915_CONTEXT_PARAM_PERSISTENCE;
    p.value = 0;
    *cancel_support = ioctl_errno(fd(), DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM, &p);
    *id = cc.ctx_id;
    return 0;
}

void GemDevice::destroy_context(uint32_t id) {
    if (id == 0) return;
    drm_i915_gem_context_destroy cd{};
    cd.ctx_id = id;
    kernel_ioctl_retry(fd(), DRM_IOCTL_I915_GEM_CONTEXT_DESTROY, &cd);
    --contexts_;
}

int GemDevice::make_context() { return create_context(&ctx_, &cancel_support_); }

int GemDevice::create(const Gen9Info &info, std::unique_ptr<GemDevice> *out) {
    std::unique_ptr<GemDevice> dev(new GemDevice());
    dev->info_ = info;
    dev->fd_.reset(info.fd);
    if (int r = dev->make_context(); r != 0) return r;  // dev closes the fd
    *out = std::move(dev);
    return 0;
}

int GemDevice::cancel_context() {
    if (cancel_support_ != 0) return cancel_support_;
    if (ctx_ == 0) return -ENOTSUP;
    destroy_context(ctx_);
    ctx_ = 0;
    if (int r = make_context(); r != 0) {
        cancel_support_ = r;  // the default context is persistent
        return r;
    }
    return 0;
}

// The node's fd (fd_) closes after this body, once every object on it is closed.
GemDevice::~GemDevice() {
    for (auto &b : batches_) destroy_batch(*b);
    for (auto &[handle, entry] : imports_) GemHandle(fd(), handle).reset();
    destroy_context(ctx_);
}

int GemDevice::import_dmabuf(int dmabuf_fd, uint64_t size, uint32_t *handle, uint64_t *gpu_addr,
                             uint64_t *size_out) {
    if (dmabuf_fd < 0) return -EBADF;
    const off_t real = kernel().lseek(dmabuf_fd, 0, SEEK_END);
    if (real > 0) {
        kernel().lseek(dmabuf_fd, 0, SEEK_SET);
        if (size == 0) size = static_cast<uint64_t>(real);
        if (size > static_cast<uint64_t>(real)) return -EINVAL;
    }
    if (size == 0) return -EINVAL;

    drm_prime_handle ph{};
    ph.fd = dmabuf_fd;
    if (int r = ioctl_errno(fd(), DRM_IOCTL_PRIME_FD_TO_HANDLE, &ph); r != 0) return r;

    auto [it, inserted] = imports_.try_emplace(ph.handle);
    ImportEntry &e = it->second;
    if (inserted) {
        e.va_size = page_align(size);
        e.gpu_addr = va_.alloc(e.va_size);
        if (e.gpu_addr == 0) {
            imports_.erase(it);
            GemHandle(fd(), ph.handle).reset();
            return -ENOSPC;
        }
        e.size = size;
    } else if (size > e.va_size) {
        // Same object seen with a bigger size than its first import: refuse
        // rather than move a pinned range under in-flight work.
        return -EINVAL;
    }
    ++e.refs;
    *handle = ph.handle;
    *gpu_addr = e.gpu_addr;
    *size_out = size;
    return 0;
}

void GemDevice::release(uint32_t handle) {
    auto it = imports_.find(handle);
    if (it == imports_.end()) return;
    if (--it->second.refs > 0) return;
    // In-flight batches keep their own reference to the object in the kernel,
    // so closing the handle now is safe; the range is only reused by later
    // submissions, which the kernel orders after eviction/rebind.
    GemHandle(fd(), handle).reset();
    va_.free(it->second.gpu_addr, it->second.va_size);
    imports_.erase(it);
}

// GEM_CREATE + GEM_MMAP_OFFSET + mmap + a softpin range: the part a batch
// and a shadow share.  0 or -errno; on failure the owners close what was made.
int GemDevice::create_mapped(uint64_t bytes, GemHandle *handle, OwnedMapping *map, uint64_t *size,
                             uint64_t *gpu_addr) {
    drm_i915_gem_create gc{};
    gc.size = bytes;
    if (int r = ioctl_errno(fd(), DRM_IOCTL_I915_GEM_CREATE, &gc); r != 0) return r;
    *handle = GemHandle(fd(), gc.handle);
    drm_i915_gem_mmap_offset mo{};
    mo.handle = gc.handle;
    // LLC parts snoop the CPU cache, so WB is coherent (for the CPU's writes
    // of a batch and for the blitter's of a shadow); BXT/GLK have no LLC.
    mo.flags = info_.has_llc ? I915_MMAP_OFFSET_WB : I915_MMAP_OFFSET_WC;
    if (int r = ioctl_errno(fd(), DRM_IOCTL_I915_GEM_MMAP_OFFSET, &mo); r != 0) return r;
    *map = OwnedMapping(kernel().mmap(nullptr, gc.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd(),
                                      static_cast<off_t>(mo.offset)),
                        gc.size);
    if (!*map) return -errno;
    *gpu_addr = va_.alloc(gc.size);
    if (*gpu_addr == 0) return -ENOSPC;
    *size = gc.size;
    return 0;
}

int GemDevice::new_batch(size_t bytes, BatchBuffer **out) {
    size_t size = kMinBatchBytes;
    while (size < bytes) size *= 2;
    auto b = std::make_unique<BatchBuffer>();
    GemHandle handle;
    OwnedMapping map;
    if (int r = create_mapped(size, &handle, &map, &b->size, &b->gpu_addr); r != 0) return r;
    b->handle = handle.release();  // destroy_batch closes them
    b->map = static_cast<uint32_t *>(map.release());
    batches_.push_back(std::move(b));
    *out = batches_.back().get();
    return 0;
}

int GemDevice::create_shadow(uint64_t bytes, ShadowBuffer *out) {
    if (bytes == 0) return -EINVAL;
    ShadowBuffer s;
    GemHandle handle;
    OwnedMapping map;
    if (int r = create_mapped(page_align(bytes), &handle, &map, &s.size, &s.gpu_addr); r != 0) return r;
    s.handle = handle.release();  // destroy_shadow closes them
    s.map = map.release();
    ++shadows_;
    *out = s;
    return 0;
}

void GemDevice::destroy_shadow(const ShadowBuffer &s) {
    if (!s.handle) return;
    OwnedMapping(s.map, s.size).reset();
    GemHandle(fd(), s.handle).reset();
    va_.free(s.gpu_addr, s.size);
    --shadows_;
}

bool GemDevice::batch_idle(BatchBuffer *b) {
    if (!b->in_flight) return true;
    drm_i915_gem_busy busy{};
    busy.handle = b->handle;
    if (kernel_ioctl_retry(fd(), DRM_IOCTL_I915_GEM_BUSY, &busy) != 0) return false;
    if (busy.busy == 0) b->in_flight = false;
    return !b->in_flight;
}

int GemDevice::acquire_batch(size_t bytes, BatchBuffer **out) {
    std::vector<BatchBuffer *> in_flight;  // fitting ones, oldest first
    for (auto &b : batches_) {
        if (b->size < bytes) continue;
        if (!b->in_flight) {
            *out = b.get();
            return 0;
        }
        in_flight.push_back(b.get());
    }
    std::sort(in_flight.begin(), in_flight.end(), [](auto *a, auto *b) { return a->seq < b->seq; });
    // Oldest first: one context's batches retire in order, so the oldest is
    // the likeliest idle; but a batch held by its fences (an in-fence that
    // does not come, on a queue's own context) lets every other context's
    // batches retire before it, so the others are asked too before the pool
    // grows.
    for (BatchBuffer *b : in_flight)
        if (batch_idle(b)) {
            *out = b;
            return 0;
        }
    if (batches_.size() < kMaxBatches || in_flight.empty()) return new_batch(bytes, out);
    // The pool is full and every buffer still in the kernel: refused at once.
    // Waiting here would hold the engine's lock across a kernel wait, and a
    // buffer held by a fence that never comes (a cancelled queue's batch
    // waiting for its in-fence) would not come back anyway.
    return -EBUSY;
}

void GemDevice::retire_batch(BatchBuffer *b, bool submitted) {
    b->in_flight = submitted;
    if (submitted) b->seq = ++seq_;
}

void GemDevice::destroy_batch(BatchBuffer &b) {
    OwnedMapping(b.map, b.size).reset();
    GemHandle(fd(), b.handle).reset();
    va_.free(b.gpu_addr, b.size);
    b.map = nullptr;
}

}  // namespace cldmabuf::i915
