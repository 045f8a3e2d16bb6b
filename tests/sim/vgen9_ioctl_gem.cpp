// Render-node ioctls of the virtual Gen9 other than PRIME: what the device
// reports (version, caps, GETPARAM of a Skylake GT2), GEM objects (create,
// close, mmap offsets, userptr, domains, busy, wait), contexts, and the
// execbuffer entry points.  One handler per ioctl; vgen9_ioctl_table.cpp
// lists them.
//
// Kernel citations use the tags of /work/shared/reference/gen9-blt-i915.md:
// [K] freebsd/drm-kmod (port of Linux i915), [KB] intel-gpu-i915-backports.
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>

#include <algorithm>

#include "vgen9_ioctl_table.hpp"

// i915-internal (not uAPI): RENDER|SAMPLER|COMMAND|INSTRUCTION|VERTEX.
#define I915_GEM_GPU_DOMAINS                                                                   \
    (I915_GEM_DOMAIN_RENDER | I915_GEM_DOMAIN_SAMPLER | I915_GEM_DOMAIN_COMMAND |               \
     I915_GEM_DOMAIN_INSTRUCTION | I915_GEM_DOMAIN_VERTEX)

namespace vgen9sim {
namespace {

// The system memory region's size of an integrated Gen9: all of RAM.
uint64_t region_total() {
    struct sysinfo si {};
    if (sysinfo(&si) != 0) return UINT64_MAX;
    return (uint64_t)si.totalram * si.mem_unit;
}

int create_object(IoctlCall &c, __u64 *size, __u32 *handle) {
    // i915_gem_create rounds to pages and refuses 0 (-EINVAL); an object
    // larger than its memory region is -E2BIG (i915_gem_object_create_region:
    // "if (size > mr->total) return ERR_PTR(-E2BIG)", [KB]
    // gem/i915_gem_region.c).  Without this the sim's sparse memfd would
    // take any size, and the allocator's "size refused" path never ran.
    if (*size == 0 || page_round(*size) == 0) return -EINVAL;
    if (page_round(*size) > region_total()) return -E2BIG;
    int err = 0;
    ObjectP o = new_native(c.s, *size, &err);
    if (!o) return err;
    *size = o->size;
    *handle = c.file->handle_of(o);
    return 0;
}

// The GTT form's struct is a prefix of drm_i915_gem_mmap_offset.
int mmap_offset(IoctlCall &c, uint64_t flags) {
    auto *m = static_cast<drm_i915_gem_mmap_offset *>(c.arg);
    if (flags > I915_MMAP_OFFSET_FIXED) return -EINVAL;
    ObjectP o = lookup(*c.file, m->handle);
    if (!o) return -ENOENT;
    if (flags == I915_MMAP_OFFSET_FIXED) return -ENODEV;  // integrated: [K] i915_gem_mman.c:933-985
    if (o->userptr || o->foreign) return -ENODEV;          // no struct pages / never mmap
    m->offset = o->mmap_base;
    return 0;
}

}  // namespace

int ioctl_version(IoctlCall &c) {
    auto *v = static_cast<drm_version *>(c.arg);
    v->version_major = 1;
    v->version_minor = 6;
    v->version_patchlevel = 0;
    auto put = [](char *dst, __kernel_size_t *len, const char *src) {
        size_t n = strlen(src);
        if (dst && *len) memcpy(dst, src, std::min<size_t>(n, *len));
        *len = n;
    };
    put(v->name, &v->name_len, "i915");
    put(v->date, &v->date_len, "20201103");
    put(v->desc, &v->desc_len, "Intel Graphics");
    return 0;
}

int ioctl_get_cap(IoctlCall &c) {
    auto *cap = static_cast<drm_get_cap *>(c.arg);
    if (cap->capability == DRM_CAP_PRIME) {
        cap->value = DRM_PRIME_CAP_IMPORT | DRM_PRIME_CAP_EXPORT;
        return 0;
    }
    if (cap->capability == DRM_CAP_TIMESTAMP_MONOTONIC) {
        cap->value = 1;
        return 0;
    }
    log_event("GET_CAP %llu not modelled", (unsigned long long)cap->capability);
    return -EINVAL;
}

int ioctl_i915_getparam(IoctlCall &c) {
    auto *g = static_cast<drm_i915_getparam *>(c.arg);
    int v;
    switch (g->param) {
    case I915_PARAM_CHIPSET_ID: v = 0x1916; break;
    case I915_PARAM_REVISION: v = 7; break;
    case I915_PARAM_HAS_BLT: v = 1; break;
    case I915_PARAM_HAS_LLC: v = 1; break;
    case I915_PARAM_HAS_EXEC_NO_RELOC: v = 1; break;
    case I915_PARAM_HAS_EXEC_HANDLE_LUT: v = 1; break;
    case I915_PARAM_CMD_PARSER_VERSION: v = 10; break;
    case I915_PARAM_HAS_EXEC_SOFTPIN: v = 1; break;
    case I915_PARAM_HAS_EXEC_FENCE: v = 1; break;
    case I915_PARAM_HAS_EXEC_BATCH_FIRST: v = 1; break;
    case I915_PARAM_HAS_EXEC_ASYNC: v = 1; break;
    case I915_PARAM_HAS_WAIT_TIMEOUT: v = 1; break;
    case I915_PARAM_MMAP_GTT_VERSION: v = 4; break;
    case I915_PARAM_MMAP_VERSION: v = 4; break;
    case I915_PARAM_HAS_USERPTR_PROBE: v = 1; break;
    default:
        log_event("GETPARAM %d not modelled -> -EINVAL", g->param);
        return -EINVAL;
    }
    *g->value = v;
    return 0;
}

int ioctl_gem_create(IoctlCall &c) {
    auto *cr = static_cast<drm_i915_gem_create *>(c.arg);
    return create_object(c, &cr->size, &cr->handle);
}

int ioctl_gem_create_ext(IoctlCall &c) {
    auto *cr = static_cast<drm_i915_gem_create_ext *>(c.arg);
    if (cr->flags) return -EINVAL;
    if (cr->extensions) {
        log_event("GEM_CREATE_EXT extensions not modelled");
        return -EINVAL;
    }
    return create_object(c, &cr->size, &cr->handle);
}

int ioctl_gem_close(IoctlCall &c) {
    auto *cl = static_cast<drm_gem_close *>(c.arg);
    auto it = c.file->handles.find(cl->handle);
    if (it == c.file->handles.end()) return -EINVAL;  // drm_gem_handle_delete
    ObjectP keep = std::move(it->second);
    c.file->handles.erase(it);
    c.l.unlock();  // the object may be destroyed here
    keep.reset();
    c.l.lock();
    return 0;
}

int ioctl_gem_mmap_gtt(IoctlCall &c) { return mmap_offset(c, I915_MMAP_OFFSET_GTT); }

int ioctl_gem_mmap_offset(IoctlCall &c) {
    auto *m = static_cast<drm_i915_gem_mmap_offset *>(c.arg);
    if (m->extensions) return -EINVAL;
    return mmap_offset(c, m->flags);
}

int ioctl_gem_userptr(IoctlCall &c) {
    auto *u = static_cast<drm_i915_gem_userptr *>(c.arg);
    // [K] gem/i915_gem_userptr.c:463-557
    if (u->flags & ~(I915_USERPTR_READ_ONLY | I915_USERPTR_UNSYNCHRONIZED | I915_USERPTR_PROBE))
        return -EINVAL;
    if (!u->user_size) return -EINVAL;
    if ((u->user_ptr | u->user_size) & (kPage - 1)) return -EINVAL;
    if (u->flags & I915_USERPTR_UNSYNCHRONIZED) return -ENODEV;
    if (u->flags & I915_USERPTR_PROBE) {
        std::vector<unsigned char> vec(u->user_size / kPage);
        if (mincore((void *)(uintptr_t)u->user_ptr, u->user_size, vec.data()) != 0)
            return -EFAULT;
    }
    auto o = std::make_shared<Object>();
    o->size = u->user_size;
    o->host = (uint8_t *)(uintptr_t)u->user_ptr;  // aliases the user's pages
    o->userptr = true;
    o->readonly = u->flags & I915_USERPTR_READ_ONLY;
    u->handle = c.file->handle_of(o);
    return 0;
}

int ioctl_gem_set_domain(IoctlCall &c) {
    auto *d = static_cast<drm_i915_gem_set_domain *>(c.arg);
    if ((d->write_domain | d->read_domains) & I915_GEM_GPU_DOMAINS) return -EINVAL;
    if (d->write_domain && d->read_domains != d->write_domain) return -EINVAL;
    ObjectP o = lookup(*c.file, d->handle);
    if (!o) return -ENOENT;
    auto fs = o->fences(d->write_domain != 0);
    c.l.unlock();
    do_wait_fences(fs, nullptr);
    c.l.lock();
    return 0;
}

int ioctl_gem_busy(IoctlCall &c) {
    auto *b = static_cast<drm_i915_gem_busy *>(c.arg);
    ObjectP o = lookup(*c.file, b->handle);
    if (!o) return -ENOENT;
    o->prune();
    b->busy = 0;
    if (!o->write_fences.empty()) b->busy |= (kBcsClass + 1) | (0x10000u << kBcsClass);
    if (!o->read_fences.empty()) b->busy |= 0x10000u << kBcsClass;
    return 0;
}

int ioctl_gem_wait(IoctlCall &c) {
    auto *w = static_cast<drm_i915_gem_wait *>(c.arg);
    if (w->flags) return -EINVAL;
    ObjectP o = lookup(*c.file, w->bo_handle);
    if (!o) return -ENOENT;
    auto fs = o->fences(true);
    int64_t start = now_ns();
    c.l.unlock();
    int r;
    auto dl = Clock::now() + std::chrono::nanoseconds(std::max<int64_t>(w->timeout_ns, 0));
    r = do_wait_fences(fs, w->timeout_ns < 0 ? nullptr : &dl);
    if (r == 0 && o->foreign) {  // then the kernel's fences on a real dma-buf
        int ms = -1;
        if (w->timeout_ns >= 0)
            ms = (int)std::max<int64_t>(
                    0, std::chrono::duration_cast<std::chrono::milliseconds>(dl - Clock::now())
                               .count());
        struct pollfd pf = {o->foreign_fd, POLLOUT, 0};
        if (real().poll(&pf, 1, ms) == 0) r = -ETIME;
    }
    c.l.lock();
    if (w->timeout_ns > 0) {  // [K] i915_gem_wait_ioctl: report the remaining time
        w->timeout_ns -= now_ns() - start;
        if (w->timeout_ns < 0 || r == -ETIME) w->timeout_ns = 0;
    }
    return r;
}

int ioctl_context_create(IoctlCall &c) {
    auto *cc = static_cast<drm_i915_gem_context_create *>(c.arg);
    cc->ctx_id = c.file->next_ctx++;
    c.file->contexts[cc->ctx_id] = std::make_shared<GemContext>();
    return 0;
}

int ioctl_context_create_ext(IoctlCall &c) {
    auto *cc = static_cast<drm_i915_gem_context_create_ext *>(c.arg);
    if (cc->flags & ~(I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS |
                      I915_CONTEXT_CREATE_FLAGS_SINGLE_TIMELINE))
        return -EINVAL;
    if ((cc->flags & I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS) && cc->extensions) {
        log_event("context-create extensions not modelled");
        return -EINVAL;
    }
    cc->ctx_id = c.file->next_ctx++;
    c.file->contexts[cc->ctx_id] = std::make_shared<GemContext>();
    return 0;
}

int ioctl_context_destroy(IoctlCall &c) {
    auto *cd = static_cast<drm_i915_gem_context_destroy *>(c.arg);
    if (cd->pad) return -EINVAL;
    auto it = cd->ctx_id ? c.file->contexts.find(cd->ctx_id) : c.file->contexts.end();
    if (it == c.file->contexts.end()) return -ENOENT;
    GemContextP ctx = std::move(it->second);
    c.file->contexts.erase(it);
    // [K] context_close: a non-persistent context's requests are cancelled.
    if (!ctx->persistent) {
        c.l.unlock();  // the ring's locks come after the device's
        cancel_context(c.s, ctx);
        c.l.lock();
    }
    return 0;
}

// [K] ctx_setparam / i915_gem_context_getparam_ioctl: only
// I915_CONTEXT_PARAM_PERSISTENCE is modelled (size must be 0).
int ioctl_context_setparam(IoctlCall &c) {
    auto *p = static_cast<drm_i915_gem_context_param *>(c.arg);
    auto it = c.file->contexts.find(p->ctx_id);
    if (p->ctx_id == 0 || it == c.file->contexts.end()) return -ENOENT;
    if (p->param != I915_CONTEXT_PARAM_PERSISTENCE) {
        log_event("context setparam 0x%llx not modelled", (unsigned long long)p->param);
        return -EINVAL;
    }
    if (p->size) return -EINVAL;
    // [K] __context_set_persistence: cancelling needs preempt-to-idle and
    // an engine reset.
    if (!p->value && c.s.cfg.no_preemption) return -ENODEV;
    it->second->persistent = p->value != 0;
    return 0;
}

int ioctl_context_getparam(IoctlCall &c) {
    auto *p = static_cast<drm_i915_gem_context_param *>(c.arg);
    auto it = c.file->contexts.find(p->ctx_id);
    if (p->ctx_id == 0 || it == c.file->contexts.end()) return -ENOENT;
    if (p->param != I915_CONTEXT_PARAM_PERSISTENCE) {
        log_event("context getparam 0x%llx not modelled", (unsigned long long)p->param);
        return -EINVAL;
    }
    p->size = 0;
    p->value = it->second->persistent;
    return 0;
}

int ioctl_execbuffer2(IoctlCall &c) {
    return do_execbuffer(c.s, *c.file, static_cast<drm_i915_gem_execbuffer2 *>(c.arg), false);
}

int ioctl_execbuffer2_wr(IoctlCall &c) {
    return do_execbuffer(c.s, *c.file, static_cast<drm_i915_gem_execbuffer2 *>(c.arg), true);
}

}  // namespace vgen9sim
