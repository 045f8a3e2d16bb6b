// The virtual Gen9's ioctls as tables of one handler per request, one table
// per kind of fd (render node, dma-buf, sync_file), in the manner of Mesa's
// drm-shim drivers.  Unlike drm-shim, entries are keyed by the full request
// code, not by its DRM number: EXECBUFFER2 and EXECBUFFER2_WR, MMAP_GTT and
// MMAP_OFFSET share a number, and a request of the right number but another
// size or direction must stay unmodelled (-EINVAL / -ENOTTY) as it was.
// The dispatcher (vgen9_device.cpp handle_ioctl) applies fault injection
// before the lookup, so vgen9_fail_ioctl works on any request.
#pragma once

#include <span>

#include "vgen9_model.hpp"

namespace vgen9sim {

// One call of a modelled ioctl.  `l` holds s.mu; a handler that waits for a
// fence or destroys an object drops it around that and takes it back.
struct IoctlCall {
    State &s;
    std::unique_lock<std::mutex> &l;
    unsigned long req;
    void *arg;
    File *file = nullptr;      // render-node fd
    ObjectP obj;               // dma-buf fd (one of ours, or a real one imported)
    FenceP fence;              // sync_file fd
    bool passthrough = false;  // dma-buf handlers: the real kernel answers too
    TimelineP timeline;        // sw_sync timeline fd
};

// Returns 0 or -errno.
using IoctlFn = int (*)(IoctlCall &);

struct IoctlEntry {
    unsigned long req;
    const char *name;  // for the event log
    IoctlFn fn;
};

// The tables (vgen9_ioctl_table.cpp: the one list of what is modelled).
std::span<const IoctlEntry> render_node_ioctls();
std::span<const IoctlEntry> dmabuf_ioctls();
std::span<const IoctlEntry> sync_file_ioctls();
std::span<const IoctlEntry> sw_sync_ioctls();
const IoctlEntry *find_ioctl(std::span<const IoctlEntry> table, unsigned long req);

// ---- render node: device queries, GEM objects, contexts (vgen9_ioctl_gem.cpp)
int ioctl_version(IoctlCall &c);
int ioctl_get_cap(IoctlCall &c);
int ioctl_i915_getparam(IoctlCall &c);
int ioctl_gem_create(IoctlCall &c);
int ioctl_gem_create_ext(IoctlCall &c);
int ioctl_gem_close(IoctlCall &c);
int ioctl_gem_mmap_gtt(IoctlCall &c);
int ioctl_gem_mmap_offset(IoctlCall &c);
int ioctl_gem_userptr(IoctlCall &c);
int ioctl_gem_set_domain(IoctlCall &c);
int ioctl_gem_busy(IoctlCall &c);
int ioctl_gem_wait(IoctlCall &c);
int ioctl_context_create(IoctlCall &c);
int ioctl_context_create_ext(IoctlCall &c);
int ioctl_context_destroy(IoctlCall &c);
int ioctl_context_setparam(IoctlCall &c);
int ioctl_context_getparam(IoctlCall &c);
int ioctl_execbuffer2(IoctlCall &c);
int ioctl_execbuffer2_wr(IoctlCall &c);

// ---- render node: PRIME export/import (vgen9_ioctl_prime.cpp)
int ioctl_prime_handle_to_fd(IoctlCall &c);
int ioctl_prime_fd_to_handle(IoctlCall &c);

// ---- dma-buf and sync_file fds (vgen9_ioctl_dmabuf.cpp)

// ---- sw_sync timelines (vgen9_sw_sync.cpp)
int ioctl_sw_sync_create_fence(IoctlCall &c);
int ioctl_sw_sync_inc(IoctlCall &c);
int ioctl_dmabuf_sync(IoctlCall &c);
int ioctl_dmabuf_export_sync_file(IoctlCall &c);
int ioctl_dmabuf_import_sync_file(IoctlCall &c);
int ioctl_dmabuf_set_name(IoctlCall &c);
int ioctl_sync_file_info(IoctlCall &c);
int ioctl_sync_merge(IoctlCall &c);

}  // namespace vgen9sim
