// The virtual Gen9's control API (vgen9.h): fault injection, batch timing,
// reset, stats.  Exported from libvgen9.so; everything else is hidden.
#include <errno.h>
#include <string.h>

#include <set>

#include "vgen9.h"
#include "vgen9_internal.hpp"
#include "vgen9_model.hpp"

// ================================================================ C API
using namespace vgen9sim;

extern "C" {

__attribute__((visibility("default"))) const char *vgen9_node_path(void) {
    return node_path().c_str();
}

__attribute__((visibility("default"))) int vgen9_fail_ioctl(unsigned long request, unsigned nth,
                                                            int err) {
    if (err <= 0) return -1;
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    s.cfg.fails.push_back({request, nth, err});
    return 0;
}

__attribute__((visibility("default"))) void vgen9_hang_next(unsigned n) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    s.cfg.hang_next = n;
}

__attribute__((visibility("default"))) void vgen9_never_signal_next(unsigned n) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    s.cfg.never_next = n;
}

__attribute__((visibility("default"))) void vgen9_set_delay_ms(unsigned ms) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.qmu);
    s.cfg.delay_ms = ms;
    s.qcv.notify_all();
}

__attribute__((visibility("default"))) void vgen9_set_manual(int on) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.qmu);
    s.cfg.manual = on != 0;
    s.credits = 0;
    s.qcv.notify_all();
}

__attribute__((visibility("default"))) unsigned vgen9_tick(unsigned n) {
    State &s = S();
    std::unique_lock<std::mutex> l(s.qmu);
    s.ran_in_tick = 0;
    s.credits = n;
    s.qcv.notify_all();
    s.donecv.wait(l, [&] { return (s.credits == 0 || s.queue.empty()) && !s.executing; });
    s.credits = 0;
    return s.ran_in_tick;
}

__attribute__((visibility("default"))) int vgen9_drain(void) {
    State &s = S();
    std::unique_lock<std::mutex> l(s.qmu);
    if (s.cfg.manual && !s.queue.empty()) return -1;
    s.donecv.wait(l, [&] { return s.queue.empty() && !s.executing; });
    return 0;
}

__attribute__((visibility("default"))) void vgen9_set_export_name(const char *name) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    g_export_name = name && *name ? name : "i915";
}

__attribute__((visibility("default"))) void vgen9_set_no_preemption(int on) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    s.cfg.no_preemption = on != 0;
}

__attribute__((visibility("default"))) void vgen9_reset(void) {
    State &s = S();
    {
        std::lock_guard<std::mutex> l(s.mu);
        g_export_name = "i915";
        std::lock_guard<std::mutex> q(s.qmu);
        s.cfg.fails.clear();
        s.cfg.hang_next = 0;
        s.cfg.never_next = 0;
        s.cfg.manual = false;
        s.cfg.delay_ms = 0;
        for (auto &j : s.queue) j->ready_at = Clock::now();
        s.qcv.notify_all();
    }
    // Drain, completing never-signalled fences with -EIO as a GPU reset
    // would (a queued batch may wait on one through FENCE_IN).
    for (;;) {
        std::vector<NeverFence> nev;
        {
            std::lock_guard<std::mutex> l(s.mu);
            nev.swap(s.never_fences);
        }
        for (auto &f : nev) f.fence->signal(-EIO);
        std::unique_lock<std::mutex> q(s.qmu);
        if (s.queue.empty() && !s.executing) break;
        s.donecv.wait_for(q, std::chrono::milliseconds(5));
    }
    {
        std::lock_guard<std::mutex> l(s.mu);
        // Objects let go of the fences the reset ended (each holds an
        // eventfd), as the engine makes them let go of the ones it ends.
        for (auto &[base, w] : s.mmap_offsets)
            if (ObjectP o = w.lock()) o->prune();
        for (auto &[key, w] : s.by_inode)
            if (ObjectP o = w.lock()) o->prune();
        std::lock_guard<std::mutex> q(s.qmu);
        s.cfg = s.env_cfg;
        s.cfg.hang_next = s.cfg.never_next = 0;  // one-shot: consumed at load time
        s.cfg.fails.clear();
        s.credits = 0;
        s.qcv.notify_all();
    }
    g_stats.submitted = g_stats.executed = g_stats.hung = g_stats.rejected = g_stats.cancelled = 0;
    g_log = s.env_cfg.log;
}

__attribute__((visibility("default"))) void vgen9_stats(struct vgen9_stats *out) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    memset(out, 0, sizeof *out);
    out->live_objects = g_stats.objects;
    out->live_memfds = g_stats.memfds;
    out->live_mappings = g_stats.mappings;
    out->live_device_fds = s.dev_fds.size();
    out->live_dmabuf_fds = s.dmabuf_fds.size();
    out->live_sync_fds = s.sync_fds.size();
    out->batches_submitted = g_stats.submitted;
    out->batches_executed = g_stats.executed;
    out->batches_hung = g_stats.hung;
    out->batches_rejected = g_stats.rejected;
    out->batches_queued = g_stats.queued;
    out->batches_cancelled = g_stats.cancelled;
}

__attribute__((visibility("default"))) void vgen9_set_log(int on) { g_log = on != 0; }

// GEM contexts created with CONTEXT_CREATE and not yet destroyed, over every
// open drm_file (a closed file's contexts go with it, as in the kernel).
__attribute__((visibility("default"))) uint64_t vgen9_live_contexts(void) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    std::set<File *> files;
    uint64_t n = 0;
    for (auto &[fd, f] : s.dev_fds)
        if (files.insert(f.get()).second) n += f->contexts.size();
    return n;
}

// DMA_BUF_IOCTL_SYNC calls on the sim's own dma-bufs since load (tests look
// this up with dlsym; not in vgen9_stats so that struct keeps its layout).
__attribute__((visibility("default"))) void vgen9_dmabuf_syncs(uint64_t *starts, uint64_t *ends) {
    *starts = g_stats.sync_starts;
    *ends = g_stats.sync_ends;
}

// For a scheduler that runs every step itself (tests/explore; dlsym, not in
// vgen9.h): the threads polling the sim's fences ([0]) and of those the ones
// whose fences are all pending ([1]); the queued batches vgen9_tick(1) would
// run now in manual mode.
__attribute__((visibility("default"))) void vgen9_fence_waiters(uint64_t out[2]) { fence_waiters(out); }
__attribute__((visibility("default"))) unsigned vgen9_ready_batches(void) { return ready_batches(S()); }

}  // extern "C"
