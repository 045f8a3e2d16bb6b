// The virtual Gen9's model: fences, GEM objects, drm_files, queued batches and
// the one State they live in, shared by the device's translation units
// (fd tracking, ioctl handlers, execbuffer, worker, poll, control API).
// Test instrument, not installed; see docs/virtual-gen9.md.
#pragma once

#include <errno.h>

#include "vgen9_internal.hpp"

#include <i915_drm.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <list>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "engine/bcs_engine.hpp"

namespace vgen9sim {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kPage = 4096;
constexpr uint64_t kMmapBase = 1ull << 32;  // fake mmap offsets start here
constexpr unsigned kBcsClass = 1;           // I915_ENGINE_CLASS_COPY

inline uint64_t page_round(uint64_t v) { return (v + kPage - 1) & ~(kPage - 1); }
inline uint64_t canonical(uint64_t a) { return (uint64_t)(((int64_t)(a << 16)) >> 16); }
inline int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
            .count();
}

extern std::atomic<bool> g_log;

// ------------------------------------------------------------------ fences
struct Fence {
    std::mutex m;
    std::condition_variable cv;
    int status = 0;  // 0 active, 1 signalled, <0 error
    int efd = -1;    // eventfd made readable on completion (poll target)
    uint64_t seqno = 0;
    uint64_t timestamp_ns = 0;
    std::vector<std::function<void()>> callbacks;

    Fence();
    ~Fence() {
        if (efd >= 0) real().close(efd);
    }
    int get() {
        std::lock_guard<std::mutex> l(m);
        return status;
    }
    void signal(int st) {
        std::vector<std::function<void()>> cbs;
        {
            std::lock_guard<std::mutex> l(m);
            if (status != 0) return;
            status = st;
            timestamp_ns = (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   Clock::now().time_since_epoch())
                                   .count();
            uint64_t one = 1;
            ssize_t w = ::write(efd, &one, sizeof one);
            (void)w;
            cbs.swap(callbacks);
        }
        cv.notify_all();
        for (auto &cb : cbs) cb();
    }
    // Wait until completed; deadline == nullopt: forever.  true if completed.
    bool wait_until(const Clock::time_point *deadline) {
        std::unique_lock<std::mutex> l(m);
        while (status == 0) {
            if (!deadline) {
                cv.wait(l);
            } else if (cv.wait_until(l, *deadline) == std::cv_status::timeout) {
                return status != 0;
            }
        }
        return true;
    }
    // cb runs once on completion (immediately if already complete).
    void on_signal(std::function<void()> cb) {
        {
            std::lock_guard<std::mutex> l(m);
            if (status == 0) {
                callbacks.push_back(std::move(cb));
                return;
            }
        }
        cb();
    }
};
using FenceP = std::shared_ptr<Fence>;

// A fence that completes when all of `in` completed (first error wins).
FenceP merge_fences(const std::vector<FenceP> &in);
// Waits for each fence; deadline == nullptr: forever.  0 or -ETIME.
int do_wait_fences(const std::vector<FenceP> &fs, const Clock::time_point *deadline);

// ---------------------------------------------------------------- objects
struct Stats {
    std::atomic<uint64_t> objects{0}, memfds{0}, mappings{0}, submitted{0}, executed{0}, hung{0},
            rejected{0}, queued{0}, cancelled{0};
    // DMA_BUF_IOCTL_SYNC calls accepted on the sim's own dma-bufs (START, END).
    std::atomic<uint64_t> sync_starts{0}, sync_ends{0};
};
extern Stats g_stats;

struct Object {
    uint64_t size = 0;    // page-rounded
    int memfd = -1;       // native objects
    uint8_t *host = nullptr;
    bool host_owned = false;  // host is our mmap (native / foreign)
    bool userptr = false;
    bool foreign = false;
    bool readonly = false;
    int foreign_fd = -1;  // our dup of an imported real dma-buf
    // Fixed widths: the sim's files differ in _FILE_OFFSET_BITS (those that
    // hook libc's 32-bit-offset forms leave it out), and on a 32-bit target
    // ino_t's width follows it; one layout for every file (ODR).
    uint64_t dev = 0;
    uint64_t ino = 0;
    uint64_t mmap_base = 0;
    // Implicit fences, protected by the global state mutex.  Every unsignalled
    // fence stays, writers' and readers' alike, as the kernel's reservation
    // object keeps them ([K] dma_resv_add_fence replaces only a signalled
    // fence or an earlier one of the same context): a later writer does not
    // hide an earlier writer that has not finished.
    std::vector<FenceP> write_fences;
    std::vector<FenceP> read_fences;

    Object() { ++g_stats.objects; }
    ~Object() {
        if (host_owned && host) {
            real().munmap(host, size);
            --g_stats.mappings;
        }
        if (memfd >= 0) {
            real().close(memfd);
            --g_stats.memfds;
        }
        if (foreign_fd >= 0) real().close(foreign_fd);
        --g_stats.objects;
    }
    void prune() {
        const auto signalled = [](const FenceP &f) { return f->get() != 0; };
        write_fences.erase(std::remove_if(write_fences.begin(), write_fences.end(), signalled),
                           write_fences.end());
        read_fences.erase(std::remove_if(read_fences.begin(), read_fences.end(), signalled), read_fences.end());
    }
    std::vector<FenceP> fences(bool all) {
        prune();
        std::vector<FenceP> v;
        v.insert(v.end(), write_fences.begin(), write_fences.end());
        if (all) v.insert(v.end(), read_fences.begin(), read_fences.end());
        return v;
    }
};
using ObjectP = std::shared_ptr<Object>;

// A GEM context ([K] i915_gem_context).  Its requests run in submission
// order: one starts only once the one before it completed, and an error of
// that one's submit fence (its in-fence's error) is inherited
// ([K] __i915_request_ensure_ordering awaits prev->submit; i915_sw_fence_wake
// passes the error on).  Requests of different contexts do not wait for one
// another.  Persistent by default; a context made non-persistent
// (I915_CONTEXT_PARAM_PERSISTENCE = 0) is banned when it is destroyed: its
// requests end with -EIO once their turn comes, at once where nothing holds
// them, else when what they wait for ends (kill_context,
// __i915_request_submit on a banned context).
struct GemContext {
    bool persistent = true;
    std::atomic<bool> banned{false};
    // Its last request's fence (not kept alive: a fence gone has completed,
    // and a live one holds an eventfd) and submit error; under State::mu.
    std::weak_ptr<Fence> last;
    std::shared_ptr<std::atomic<int>> last_submit_err;
};
using GemContextP = std::shared_ptr<GemContext>;

// One drm_file: what an open() of the node creates; dup()s share it.
struct File {
    std::map<uint32_t, ObjectP> handles;
    uint32_t next_handle = 1;
    std::map<uint32_t, GemContextP> contexts;  // id -> context (0 = default, implicit)
    GemContextP default_ctx = std::make_shared<GemContext>();
    uint32_t next_ctx = 1;
    uint64_t next_gpu = 0x100000;  // placement cursor for unpinned objects
    uint32_t handle_of(const ObjectP &o) {
        for (auto &[h, p] : handles)
            if (p == o) return h;
        uint32_t h = next_handle++;
        handles[h] = o;
        return h;
    }
};
using FileP = std::shared_ptr<File>;

// ------------------------------------------------------------------ jobs
struct Binding {
    uint64_t gpu;
    uint64_t size;
    ObjectP obj;
};
struct Job {
    std::vector<uint32_t> batch;  // shadow copy, as the Gen9 parser makes
    std::vector<Binding> bindings;
    FenceP fence;
    FenceP in_fence;       // FENCE_IN from one of our sync_files
    int in_fence_fd = -1;  // FENCE_IN from a real sync_file (dup)
    std::vector<std::pair<ObjectP, short>> foreign_waits;  // implicit sync on real dma-bufs
    // Implicit sync on the sim's own objects: the fences it must follow
    // (the write fence of what it reads, every fence of what it writes).
    std::vector<FenceP> implicit;
    // Its context's previous request, where that had not completed at
    // submission, and that one's submit error (inherited).
    FenceP prev;
    std::shared_ptr<std::atomic<int>> prev_submit_err;
    // Its own submit error, for the next request of its context.
    std::shared_ptr<std::atomic<int>> submit_err = std::make_shared<std::atomic<int>>(0);
    // The real fds (in_fence_fd, foreign_waits) became ready; their error.
    std::atomic<bool> foreign_done{true};
    int foreign_err = 0;
    bool hang = false, never = false;
    GemContextP ctx;  // never null: the file's default context for id 0
    Clock::time_point ready_at;
    ~Job() {
        if (in_fence_fd >= 0) real().close(in_fence_fd);
    }
};
using JobP = std::shared_ptr<Job>;

// A batch whose fence never signals by itself (injected); a GPU reset or
// its context's cancellation ends it with -EIO.
struct NeverFence {
    FenceP fence;
    GemContextP ctx;
};

// ------------------------------------------------------------ configuration
struct FailRule {
    unsigned long req;
    unsigned countdown;  // 0 = always
    int err;
};

struct Config {
    bool log = false;
    unsigned delay_ms = 0;
    bool manual = false;
    unsigned hang_next = 0, never_next = 0;
    // No preempt-to-idle / engine reset: I915_CONTEXT_PARAM_PERSISTENCE = 0
    // is refused with -ENODEV, as on a kernel without them.
    bool no_preemption = false;
    std::vector<FailRule> fails;
};

// ------------------------------------------------------------- sw_sync
// A sw_sync timeline (drivers/dma-buf/sw_sync.c, CONFIG_SW_SYNC at
// /sys/kernel/debug/sync/sw_sync): fences at points, signalled when the
// timeline's value reaches them (SW_SYNC_IOC_INC); closing the last fd of the
// timeline signals what is left with -ENOENT (sw_sync_debugfs_release).
// Modelled only where the real file cannot be reached (debugfs needs root).
struct Timeline {
    uint32_t value = 0;
    std::vector<std::pair<uint32_t, FenceP>> pts;
    ~Timeline() {
        for (auto &p : pts) p.second->signal(-ENOENT);
    }
};
using TimelineP = std::shared_ptr<Timeline>;
inline constexpr const char *kSwSyncPath = "/sys/kernel/debug/sync/sw_sync";

// --------------------------------------------------------------- state
struct State {
    std::mutex mu;  // tables, fences of objects, fault injection
    std::map<int, FileP> dev_fds;
    std::map<int, ObjectP> dmabuf_fds;
    std::map<int, FenceP> sync_fds;
    std::map<int, TimelineP> sw_sync_fds;
    std::map<uint64_t, std::weak_ptr<Object>> mmap_offsets;  // base -> object
    std::map<std::pair<uint64_t, uint64_t>, std::weak_ptr<Object>> by_inode;
    std::map<uintptr_t, size_t> user_maps;
    uint64_t next_mmap = kMmapBase;
    Config env_cfg, cfg;
    std::atomic<bool> any_foreign{false};
    // CLDMABUF_SIM_WATCH_SYNCS: a real exporter's dma-buf the sim never
    // imported has its DMA_BUF_IOCTL_SYNC counted and open to injected
    // failures (the kernel still answers the rest), so a test of the
    // layer's brackets runs on real dma-bufs with the sim as its fault
    // injector.  Off: such a call is not the sim's business at all.
    bool watch_foreign_syncs = false;
    std::vector<NeverFence> never_fences;

    // worker
    std::mutex qmu;
    std::condition_variable qcv, donecv;
    std::list<JobP> queue;  // accepted, not yet taken by the engine (submission order)
    bool executing = false;
    unsigned credits = 0;
    unsigned ran_in_tick = 0;
    bool worker_started = false;
    vgen9::BcsState bcs;
};

// The one device state; created on first use, never destroyed (hooks may run
// during exit).  Reads the CLDMABUF_SIM_* environment once.
State &S();

// ---- helpers shared by the ioctl handlers (vgen9_state.cpp) ----
// An injected errno for this call of `req` (vgen9_fail_ioctl), or 0.
int inject(State &s, unsigned long req);
// Caller holds s.mu.  A new sync_file fd for f (a dup of its eventfd).
FenceP new_fence_fd(State &s, FenceP f, int *fd_out);
ObjectP lookup(File &f, uint32_t h);
// Caller holds s.mu.  A memfd-backed GEM object of `size` (page-rounded).
ObjectP new_native(State &s, uint64_t size, int *err);
// Caller holds s.mu.  A real dma-buf previously imported (matched by inode).
ObjectP foreign_by_fd(State &s, int fd);
// The exporter name fdinfo reports for the sim's dma-bufs; under S().mu.
extern std::string g_export_name;

// ---- the BCS worker (vgen9_worker.cpp) ----
// Bans `ctx` and cancels its batches: one nothing holds ends with -EIO at
// once; one waiting (for its in-fences, its implicit fences or the one before
// it in the context) skips its payload when that ends; a never-signalling one
// ends when vgen9_reset() ends it ([K] kill_context).
void cancel_context(State &s, const GemContextP &ctx);
void ensure_worker(State &s);
// Caller holds s.mu, not s.qmu.  Queues an accepted batch: the engine takes
// it once what it waits for has ended.
void queue_job(State &s, JobP job);
// Not under s.qmu.  Queued batches the engine would take now but for manual
// mode (what vgen9_tick(1) runs without waiting).
unsigned ready_batches(State &s);

// ---- execbuffer2 (vgen9_execbuffer.cpp); caller holds s.mu ----
int do_execbuffer(State &s, File &file, drm_i915_gem_execbuffer2 *eb, bool wr);

}  // namespace vgen9sim
