// DRM_IOCTL_I915_GEM_EXECBUFFER2(_WR) on the virtual Gen9: the kernel's
// argument checks in its order, placement (softpin first), the Gen9 BCS
// command parser on a shadow copy, implicit and explicit fences, then the
// batch goes to the worker.
//
// Kernel citations use the tags of /work/shared/reference/gen9-blt-i915.md:
// [K] freebsd/drm-kmod (port of Linux i915), [KB] intel-gpu-i915-backports.
#include <errno.h>
#include <fcntl.h>
#include <linux/sync_file.h>
#include <string.h>
#include <sys/mman.h>

#include <algorithm>

#include "vgen9_model.hpp"

namespace vgen9sim {
namespace {

int reject(const char *rule, int err) {
    ++g_stats.rejected;
    log_event("execbuffer rejected (%s): %s", strerror(-err), rule);
    return err;
}

}  // namespace

int do_execbuffer(State &s, File &file, drm_i915_gem_execbuffer2 *eb, bool wr) {
    // Order follows i915_gem_execbuffer2_ioctl -> i915_gem_check_execbuffer ->
    // i915_gem_do_execbuffer -> eb_lookup_vmas/eb_validate_vma/eb_add_vma
    // ([K] i915_gem_execbuffer.c:506-631, 2210-2234, 3570-3596).
    if (eb->buffer_count < 1) return reject("buffer_count < 1", -EINVAL);
    if (eb->flags & __I915_EXEC_UNKNOWN_FLAGS) return reject("unknown execbuf flags", -EINVAL);
    if ((eb->batch_start_offset | eb->batch_len) & 7)
        return reject("batch_start_offset/batch_len not 8-byte aligned", -EINVAL);
    if (eb->DR4 == 0xffffffff) eb->DR4 = 0;  // legacy userspace quirk the kernel tolerates
    if (eb->DR1 || eb->DR4) return reject("DR1/DR4 must be zero", -EINVAL);
    if (eb->flags & I915_EXEC_FENCE_ARRAY)
        return reject("FENCE_ARRAY not modelled", -EINVAL);
    if (eb->num_cliprects || eb->cliprects_ptr)
        return reject("cliprects are not supported", -EINVAL);
    if (eb->flags & (I915_EXEC_USE_EXTENSIONS | I915_EXEC_FENCE_SUBMIT))
        return reject("USE_EXTENSIONS/FENCE_SUBMIT not modelled", -EINVAL);
    if (eb->flags & I915_EXEC_SECURE) return reject("SECURE needs DRM master", -EPERM);
    if ((eb->flags & I915_EXEC_FENCE_OUT) && !wr)
        return reject("FENCE_OUT through the non-_WR ioctl (the fd could not be returned)",
                      -EINVAL);
    // In-fence ([K] i915_gem_do_execbuffer: sync_file_get_fence() == NULL -> -EINVAL).
    FenceP in_fence;
    int in_fd = -1;
    if (eb->flags & I915_EXEC_FENCE_IN) {
        int fd = (int)(uint32_t)eb->rsvd2;
        auto it = s.sync_fds.find(fd);
        if (it != s.sync_fds.end()) {
            in_fence = it->second;
        } else {
            struct sync_file_info info;
            memset(&info, 0, sizeof info);
            if (real().ioctl(fd, SYNC_IOC_FILE_INFO, &info) != 0)
                return reject("FENCE_IN fd is not a sync_file", -EINVAL);
            in_fd = real().fcntl(fd, F_DUPFD_CLOEXEC, 0);
        }
    }
    struct FdGuard {
        int &fd;
        ~FdGuard() {
            if (fd >= 0) real().close(fd);
        }
    } guard{in_fd};
    // Context ([K] i915_gem_context_lookup -> -ENOENT).
    uint32_t ctx = (uint32_t)eb->rsvd1;
    GemContextP gem_ctx = file.default_ctx;
    if (ctx != 0) {
        auto it = file.contexts.find(ctx);
        if (it == file.contexts.end()) return reject("unknown context id", -ENOENT);
        gem_ctx = it->second;
    }
    // Engine.  Only the blitter ring is modelled.
    unsigned ring = eb->flags & I915_EXEC_RING_MASK;
    if (ring != I915_EXEC_BLT)
        return reject("only I915_EXEC_BLT is modelled (render/video rings are not)", -EINVAL);
    if (eb->flags & (I915_EXEC_BSD_MASK | I915_EXEC_CONSTANTS_MASK | I915_EXEC_RESOURCE_STREAMER))
        return reject("BSD/constants/resource-streamer bits with the BLT ring", -EINVAL);

    auto *ex = reinterpret_cast<drm_i915_gem_exec_object2 *>(eb->buffers_ptr);
    uint32_t n = eb->buffer_count;
    std::vector<ObjectP> objs(n);
    for (uint32_t i = 0; i < n; ++i) {
        auto &e = ex[i];
        objs[i] = lookup(file, e.handle);
        if (!objs[i]) return reject("unknown GEM handle", -ENOENT);
        if (e.flags & __EXEC_OBJECT_UNKNOWN_FLAGS) return reject("unknown object flags", -EINVAL);
        if (e.alignment && (e.alignment & (e.alignment - 1)))
            return reject("alignment not a power of two", -EINVAL);
        if ((e.flags & EXEC_OBJECT_PINNED) &&
            e.offset != canonical(e.offset & ~(kPage - 1)))
            return reject("pinned offset not page aligned or not canonical", -EINVAL);
        if (!(e.flags & EXEC_OBJECT_PAD_TO_SIZE)) e.pad_to_size = 0;  // sanitised, not rejected
        if ((e.flags & EXEC_OBJECT_PAD_TO_SIZE) && (e.pad_to_size & (kPage - 1)))
            return reject("pad_to_size not page aligned", -EINVAL);
        for (uint32_t k = 0; k < i; ++k)
            if (ex[k].handle == e.handle) return reject("duplicate handle in exec list", -EINVAL);
        if (e.relocation_count) {
            log_event("relocations are not modelled: object %u has relocation_count %u", i,
                      e.relocation_count);
            return reject("relocations not modelled (softpin only)", -EINVAL);
        }
    }
    uint32_t bi = (eb->flags & I915_EXEC_BATCH_FIRST) ? 0 : n - 1;
    if (ex[bi].flags & EXEC_OBJECT_WRITE)
        return reject("batch object flagged EXEC_OBJECT_WRITE", -EINVAL);
    uint64_t bsize = objs[bi]->size;
    uint64_t blen = eb->batch_len;
    if (eb->batch_start_offset > bsize || blen > bsize - eb->batch_start_offset)
        return reject("batch outside its object", -EINVAL);
    if (blen == 0) blen = bsize - eb->batch_start_offset;
    if (blen == 0) return reject("empty batch", -EINVAL);

    // Placement.
    std::vector<Binding> binds(n);
    auto overlaps = [&](uint64_t a, uint64_t sz, uint32_t upto) {
        for (uint32_t k = 0; k < upto; ++k)
            if (binds[k].size && a < binds[k].gpu + binds[k].size && binds[k].gpu < a + sz)
                return true;
        return false;
    };
    for (uint32_t i = 0; i < n; ++i) {  // pinned first
        auto &e = ex[i];
        if (!(e.flags & EXEC_OBJECT_PINNED)) continue;
        uint64_t sz = std::max<uint64_t>(objs[i]->size,
                                         (e.flags & EXEC_OBJECT_PAD_TO_SIZE) ? e.pad_to_size : 0);
        uint64_t a = e.offset & ((1ull << 48) - 1);
        if (!(e.flags & EXEC_OBJECT_SUPPORTS_48B_ADDRESS) && a + sz > (1ull << 32))
            return reject("pinned above 4GiB without EXEC_OBJECT_SUPPORTS_48B_ADDRESS", -EINVAL);
        if (a + sz > (1ull << 48)) return reject("pinned range beyond 48 bits", -EINVAL);
        if (e.alignment && (a & (e.alignment - 1)))
            return reject("pinned offset violates alignment", -EINVAL);
        if (overlaps(a, sz, n)) return reject("overlapping pinned ranges", -ENOSPC);
        binds[i] = {a, sz, objs[i]};
    }
    for (uint32_t i = 0; i < n; ++i) {
        auto &e = ex[i];
        if (e.flags & EXEC_OBJECT_PINNED) continue;
        uint64_t sz = objs[i]->size;
        uint64_t limit = (e.flags & EXEC_OBJECT_SUPPORTS_48B_ADDRESS) ? (1ull << 48) : (1ull << 32);
        uint64_t al = std::max<uint64_t>(kPage, e.alignment);
        uint64_t a = e.offset & ((1ull << 48) - 1);
        if (!a || (a & (al - 1)) || a + sz > limit || overlaps(a, sz, n)) {
            a = (file.next_gpu + al - 1) & ~(al - 1);
            while (overlaps(a, sz, n)) a += al;
            if (a + sz > limit) a = (0x100000 + al - 1) & ~(al - 1);
            while (overlaps(a, sz, n)) a += al;
            file.next_gpu = a + sz;
        }
        binds[i] = {a, sz, objs[i]};
    }

    // Userptr pages must be present (the kernel's get_user_pages -> -EFAULT).
    for (uint32_t i = 0; i < n; ++i) {
        if (!objs[i]->userptr) continue;
        std::vector<unsigned char> vec(objs[i]->size / kPage);
        if (mincore(objs[i]->host, objs[i]->size, vec.data()) != 0)
            return reject("userptr range no longer mapped", -EFAULT);
    }

    // The mandatory Gen9 BCS command parser, on a shadow copy of the batch
    // ([K] i915_cmd_parser.c:457-500, 1270, 1491-1530).
    auto jp = std::make_shared<Job>();
    Job &job = *jp;
    job.batch.resize(blen / 4);
    memcpy(job.batch.data(), objs[bi]->host + eb->batch_start_offset, blen);
    std::string why;
    int pr = vgen9::check_batch(job.batch.data(), blen, &why);
    if (pr) return reject(("command parser: " + why).c_str(), pr);

    // Accepted.  Write back placements (softpin offsets unchanged).
    for (uint32_t i = 0; i < n; ++i) ex[i].offset = canonical(binds[i].gpu);

    job.fence = std::make_shared<Fence>();
    // The out-fence first: a refusal leaves no fence on objects or context.
    if (eb->flags & I915_EXEC_FENCE_OUT) {
        int fd = -1;
        new_fence_fd(s, job.fence, &fd);
        if (fd < 0) return -EMFILE;
        eb->rsvd2 = (eb->rsvd2 & 0xffffffffull) | ((uint64_t)(uint32_t)fd << 32);
    }
    job.bindings = std::move(binds);
    job.in_fence = in_fence;
    job.in_fence_fd = in_fd;
    job.ctx = gem_ctx;
    in_fd = -1;
    if (s.cfg.hang_next) {
        --s.cfg.hang_next;
        job.hang = true;
    } else if (s.cfg.never_next) {
        --s.cfg.never_next;
        job.never = true;
    }
    for (uint32_t i = 0; i < n; ++i) {
        auto &o = objs[i];
        bool w = ex[i].flags & EXEC_OBJECT_WRITE;
        o->prune();
        // Implicit sync ([K] eb_move_to_gpu -> i915_request_await_object):
        // a reader follows the last writer, a writer every earlier user;
        // EXEC_OBJECT_ASYNC opts out.
        if (!(ex[i].flags & EXEC_OBJECT_ASYNC)) {
            if (o->foreign) job.foreign_waits.push_back({o, (short)(w ? POLLOUT : POLLIN)});
            for (auto &f : o->fences(w))
                if (f != job.fence) job.implicit.push_back(f);
        }
        if (w)
            o->write_fences.push_back(job.fence);
        else
            o->read_fences.push_back(job.fence);
    }
    // Its context's order ([K] __i915_request_ensure_ordering: only a
    // previous request not yet complete is waited for).
    if (FenceP last = gem_ctx->last.lock(); last && last->get() == 0) {
        job.prev = last;
        job.prev_submit_err = gem_ctx->last_submit_err;
    }
    gem_ctx->last = job.fence;
    gem_ctx->last_submit_err = job.submit_err;
    unsigned delay = s.cfg.delay_ms;
    job.ready_at = Clock::now() + std::chrono::milliseconds(delay);
    ++g_stats.submitted;
    ++g_stats.queued;
    log_event("execbuffer accepted: seqno %llu, %u objects, batch %llu bytes%s%s",
              (unsigned long long)job.fence->seqno, n, (unsigned long long)blen,
              job.hang ? " [hang]" : "", job.never ? " [never-signal]" : "");
    queue_job(s, std::move(jp));
    return 0;
}

}  // namespace vgen9sim
