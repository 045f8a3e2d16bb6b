// The virtual Gen9 device model: i915 GEM/PRIME/execbuffer uAPI, dma-buf and
// sync_file emulation, fences and the BCS worker thread.  Test instrument;
// see docs/virtual-gen9.md for what is and is not modelled, with citations.
//
// Kernel citations below use the tags of /work/shared/reference/gen9-blt-i915.md:
// [K] freebsd/drm-kmod (port of Linux i915), [KB] intel-gpu-i915-backports.
#undef _FILE_OFFSET_BITS
#include "vgen9_internal.hpp"

#include <errno.h>
#include <fcntl.h>
#include <i915_drm.h>
#include <linux/dma-buf.h>
#include <linux/magic.h>
#include <linux/sync_file.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/bcs_engine.hpp"
#include "vgen9.h"

#ifndef DMA_BUF_MAGIC
#define DMA_BUF_MAGIC 0x444d4142
#endif

// i915-internal (not uAPI): RENDER|SAMPLER|COMMAND|INSTRUCTION|VERTEX.
#define I915_GEM_GPU_DOMAINS                                                                   \
    (I915_GEM_DOMAIN_RENDER | I915_GEM_DOMAIN_SAMPLER | I915_GEM_DOMAIN_COMMAND |               \
     I915_GEM_DOMAIN_INSTRUCTION | I915_GEM_DOMAIN_VERTEX)

namespace vgen9sim {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kPage = 4096;
constexpr uint64_t kMmapBase = 1ull << 32;  // fake mmap offsets start here
constexpr unsigned kBcsClass = 1;           // I915_ENGINE_CLASS_COPY

uint64_t page_round(uint64_t v) { return (v + kPage - 1) & ~(kPage - 1); }

std::atomic<bool> g_log{false};

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
std::atomic<uint64_t> g_seqno{0};
Fence::Fence() {
    efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    seqno = ++g_seqno;
}
using FenceP = std::shared_ptr<Fence>;

// A fence that completes when all of `in` completed (first error wins).
FenceP merge_fences(const std::vector<FenceP> &in) {
    std::vector<FenceP> pending;
    for (auto &f : in)
        if (f && f->get() == 0) pending.push_back(f);
    int err = 0;
    for (auto &f : in)
        if (f && f->get() < 0) err = f->get();
    if (pending.empty()) {
        auto f = std::make_shared<Fence>();
        f->signal(err ? err : 1);
        return f;
    }
    if (pending.size() == 1 && err == 0) return pending[0];
    auto out = std::make_shared<Fence>();
    struct Ctr {
        std::atomic<int> left;
        std::atomic<int> err;
    };
    auto ctr = std::make_shared<Ctr>();
    ctr->left = (int)pending.size();
    ctr->err = err;
    for (auto &p : pending) {
        std::weak_ptr<Fence> wp = p;
        p->on_signal([ctr, out, wp] {
            if (auto s = wp.lock())
                if (s->get() < 0) ctr->err = s->get();
            if (--ctr->left == 0) out->signal(ctr->err ? ctr->err.load() : 1);
        });
    }
    return out;
}

// ---------------------------------------------------------------- objects
struct Stats {
    std::atomic<uint64_t> objects{0}, memfds{0}, mappings{0}, submitted{0}, executed{0}, hung{0},
            rejected{0}, queued{0};
    // DMA_BUF_IOCTL_SYNC calls accepted on the sim's own dma-bufs (START, END).
    std::atomic<uint64_t> sync_starts{0}, sync_ends{0};
} g_stats;

struct Object {
    uint64_t size = 0;    // page-rounded
    int memfd = -1;       // native objects
    uint8_t *host = nullptr;
    bool host_owned = false;  // host is our mmap (native / foreign)
    bool userptr = false;
    bool foreign = false;
    bool readonly = false;
    int foreign_fd = -1;  // our dup of an imported real dma-buf
    dev_t dev = 0;
    ino_t ino = 0;
    uint64_t mmap_base = 0;
    // Implicit fences, protected by the global state mutex.
    FenceP write_fence;
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
        if (write_fence && write_fence->get() != 0) write_fence.reset();
        read_fences.erase(std::remove_if(read_fences.begin(), read_fences.end(),
                                         [](const FenceP &f) { return f->get() != 0; }),
                          read_fences.end());
    }
    std::vector<FenceP> fences(bool all) {
        prune();
        std::vector<FenceP> v;
        if (write_fence) v.push_back(write_fence);
        if (all) v.insert(v.end(), read_fences.begin(), read_fences.end());
        return v;
    }
};
using ObjectP = std::shared_ptr<Object>;

// One drm_file: what an open() of the node creates; dup()s share it.
struct File {
    std::map<uint32_t, ObjectP> handles;
    uint32_t next_handle = 1;
    std::map<uint32_t, bool> contexts;  // id -> exists (0 = default, implicit)
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
    bool hang = false, never = false;
    Clock::time_point ready_at;
};

class SimAS : public vgen9::AddressSpace {
public:
    explicit SimAS(const std::vector<Binding> &b) : b_(b) {}
    uint8_t *translate(uint64_t gpu_addr, uint64_t len) override {
        for (auto &x : b_)
            if (gpu_addr >= x.gpu && len <= x.size && gpu_addr - x.gpu <= x.size - len)
                return x.obj->host + (gpu_addr - x.gpu);
        return nullptr;
    }

private:
    const std::vector<Binding> &b_;
};

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
    std::vector<FailRule> fails;
};

// --------------------------------------------------------------- state
struct State {
    std::mutex mu;  // tables, fences of objects, fault injection
    std::map<int, FileP> dev_fds;
    std::map<int, ObjectP> dmabuf_fds;
    std::map<int, FenceP> sync_fds;
    std::map<uint64_t, std::weak_ptr<Object>> mmap_offsets;  // base -> object
    std::map<std::pair<dev_t, ino_t>, std::weak_ptr<Object>> by_inode;
    std::map<uintptr_t, size_t> user_maps;
    uint64_t next_mmap = kMmapBase;
    Config env_cfg, cfg;
    std::atomic<bool> any_foreign{false};
    std::vector<FenceP> never_fences;

    // worker
    std::mutex qmu;
    std::condition_variable qcv, donecv;
    std::deque<Job> queue;
    bool executing = false;
    unsigned credits = 0;
    unsigned ran_in_tick = 0;
    bool worker_started = false;
    vgen9::BcsState bcs;
};

State &S() {
    static State *s = [] {
        auto *st = new State();  // never destroyed: hooks may run during exit
        const char *e;
        if ((e = getenv("CLDMABUF_SIM_LOG")) && *e && *e != '0') st->env_cfg.log = true;
        if ((e = getenv("CLDMABUF_SIM_DELAY_MS"))) st->env_cfg.delay_ms = (unsigned)atoi(e);
        if ((e = getenv("CLDMABUF_SIM_MANUAL")) && *e && *e != '0') st->env_cfg.manual = true;
        if ((e = getenv("CLDMABUF_SIM_HANG_NEXT"))) st->env_cfg.hang_next = (unsigned)atoi(e);
        if ((e = getenv("CLDMABUF_SIM_NEVER_SIGNAL_NEXT")))
            st->env_cfg.never_next = (unsigned)atoi(e);
        if ((e = getenv("CLDMABUF_SIM_FAIL_IOCTL"))) {
            std::string s(e);
            size_t pos = 0;
            while (pos < s.size()) {
                size_t end = s.find(',', pos);
                std::string item = s.substr(pos, end == std::string::npos ? end : end - pos);
                unsigned long req = 0;
                unsigned nth = 0;
                char name[32] = {0};
                if (sscanf(item.c_str(), "%li:%u:%31s", (long *)&req, &nth, name) == 3) {
                    static const std::pair<const char *, int> names[] = {
                            {"EINTR", EINTR}, {"EAGAIN", EAGAIN}, {"ENOMEM", ENOMEM},
                            {"ENOSPC", ENOSPC}, {"EIO", EIO},     {"EINVAL", EINVAL},
                            {"EBUSY", EBUSY}, {"ENODEV", ENODEV}, {"EFAULT", EFAULT}};
                    int err = atoi(name);
                    for (auto &[n, v] : names)
                        if (!strcmp(n, name)) err = v;
                    if (err > 0) st->env_cfg.fails.push_back({req, nth, err});
                }
                if (end == std::string::npos) break;
                pos = end + 1;
            }
        }
        st->cfg = st->env_cfg;
        g_log = st->cfg.log;
        return st;
    }();
    return *s;
}

void worker_main();

void ensure_worker(State &s) {
    std::lock_guard<std::mutex> l(s.qmu);
    if (s.worker_started) return;
    s.worker_started = true;
    std::thread(worker_main).detach();
}

bool runnable_now(State &s, Clock::time_point *wake) {
    if (s.queue.empty()) return false;
    if (s.cfg.manual) return s.credits > 0;
    if (s.queue.front().ready_at > Clock::now()) {
        *wake = s.queue.front().ready_at;
        return false;
    }
    return true;
}

void wait_foreign(int fd, short ev) {
    struct pollfd p = {fd, ev, 0};
    while (real().poll(&p, 1, -1) < 0 && errno == EINTR) {
    }
}

void run_job(State &s, Job &j) {
    int in_err = 0;
    if (j.in_fence) {
        j.in_fence->wait_until(nullptr);
        in_err = std::min(0, j.in_fence->get());
    }
    if (j.in_fence_fd >= 0) {
        wait_foreign(j.in_fence_fd, POLLIN);
        struct sync_file_info info;
        memset(&info, 0, sizeof info);
        if (real().ioctl(j.in_fence_fd, SYNC_IOC_FILE_INFO, &info) == 0 && info.status < 0)
            in_err = info.status;
        real().close(j.in_fence_fd);
        j.in_fence_fd = -1;
    }
    if (in_err && !j.never) {
        // An in-fence error is inherited by the request, whose payload is then
        // skipped ([K] i915_sw_fence.c:418-423, i915_request.c:650-651, 787-797).
        log_event("batch seqno %llu: FENCE_IN completed with %d, batch skipped",
                  (unsigned long long)j.fence->seqno, in_err);
        j.fence->signal(in_err);
        return;
    }
    for (auto &[o, ev] : j.foreign_waits) wait_foreign(o->foreign_fd, ev);
    if (j.never) {
        log_event("batch seqno %llu: fence will never signal (injected)",
                  (unsigned long long)j.fence->seqno);
        std::lock_guard<std::mutex> l(s.mu);
        s.never_fences.push_back(j.fence);
        return;
    }
    if (j.hang) {
        log_event("batch seqno %llu: hang injected, fence error -EIO",
                  (unsigned long long)j.fence->seqno);
        ++g_stats.hung;
        j.fence->signal(-EIO);
        return;
    }
    SimAS as(j.bindings);
    vgen9::LogFn lf = [](const std::string &m) {
        log_event("engine: %s", m.c_str() + (m.rfind("vgen9: ", 0) == 0 ? 7 : 0));
    };
    int r = vgen9::execute_batch(j.batch.data(), j.batch.size() * 4, as, s.bcs, lf);
    ++g_stats.executed;
    if (r == -EIO) {
        ++g_stats.hung;
        log_event("batch seqno %llu: engine returned -EIO (hung ring)",
                  (unsigned long long)j.fence->seqno);
        j.fence->signal(-EIO);
    } else {
        j.fence->signal(r < 0 ? r : 1);
    }
}

void worker_main() {
    State &s = S();
    std::unique_lock<std::mutex> l(s.qmu);
    for (;;) {
        Clock::time_point wake{};
        while (!runnable_now(s, &wake)) {
            if (wake != Clock::time_point{}) {
                s.qcv.wait_until(l, wake);
                wake = {};
            } else {
                s.qcv.wait(l);
            }
        }
        Job j = std::move(s.queue.front());
        s.queue.pop_front();
        if (s.cfg.manual && s.credits) {
            --s.credits;
            ++s.ran_in_tick;
        }
        s.executing = true;
        l.unlock();
        run_job(s, j);
        j = Job{};  // drop object references outside the lock
        --g_stats.queued;
        l.lock();
        s.executing = false;
        s.donecv.notify_all();
    }
}

// ------------------------------------------------------------- helpers
int inject(State &s, unsigned long req) {
    std::lock_guard<std::mutex> l(s.mu);
    for (auto it = s.cfg.fails.begin(); it != s.cfg.fails.end(); ++it) {
        if (it->req != req) continue;
        if (it->countdown == 0) return it->err;
        if (--it->countdown == 0) {
            int e = it->err;
            s.cfg.fails.erase(it);
            return e;
        }
    }
    return 0;
}

FenceP new_fence_fd(State &s, FenceP f, int *fd_out) {
    // Caller holds s.mu.  A sync_file fd is a dup of the fence's eventfd, so
    // poll() on it is real (POLLIN when the counter becomes non-zero).
    int fd = real().fcntl(f->efd, F_DUPFD_CLOEXEC, 0);
    *fd_out = fd;
    if (fd >= 0) s.sync_fds[fd] = f;
    return f;
}

int do_wait_fences(const std::vector<FenceP> &fs, const Clock::time_point *deadline) {
    for (auto &f : fs)
        if (!f->wait_until(deadline)) return -ETIME;
    return 0;
}

ObjectP lookup(File &f, uint32_t h) {
    auto it = f.handles.find(h);
    return it == f.handles.end() ? nullptr : it->second;
}

ObjectP new_native(State &s, uint64_t size, int *err) {
    auto o = std::make_shared<Object>();
    o->size = page_round(size);
    o->memfd = memfd_create("vgen9-gem", MFD_CLOEXEC);
    if (o->memfd < 0) {
        *err = -errno;
        return nullptr;
    }
    ++g_stats.memfds;
    if (ftruncate(o->memfd, (off_t)o->size) != 0) {
        *err = -ENOMEM;
        return nullptr;
    }
    void *p = real().mmap(nullptr, o->size, PROT_READ | PROT_WRITE, MAP_SHARED, o->memfd, 0);
    if (p == MAP_FAILED) {
        *err = -ENOMEM;
        return nullptr;
    }
    o->host = (uint8_t *)p;
    o->host_owned = true;
    ++g_stats.mappings;
    struct stat st;
    if (real().fstat(o->memfd, &st) == 0) {
        o->dev = st.st_dev;
        o->ino = st.st_ino;
        s.by_inode[{o->dev, o->ino}] = o;
    }
    o->mmap_base = s.next_mmap;
    s.next_mmap += o->size + kPage;
    s.mmap_offsets[o->mmap_base] = o;
    return o;
}

uint64_t canonical(uint64_t a) { return (uint64_t)(((int64_t)(a << 16)) >> 16); }

int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
            .count();
}

// --------------------------------------------------------- execbuffer2
int reject(const char *rule, int err) {
    ++g_stats.rejected;
    log_event("execbuffer rejected (%s): %s", strerror(-err), rule);
    return err;
}

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
    if (ctx != 0 && !file.contexts.count(ctx)) return reject("unknown context id", -ENOENT);
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
    Job job;
    job.batch.resize(blen / 4);
    memcpy(job.batch.data(), objs[bi]->host + eb->batch_start_offset, blen);
    std::string why;
    int pr = vgen9::check_batch(job.batch.data(), blen, &why);
    if (pr) return reject(("command parser: " + why).c_str(), pr);

    // Accepted.  Write back placements (softpin offsets unchanged).
    for (uint32_t i = 0; i < n; ++i) ex[i].offset = canonical(binds[i].gpu);

    job.fence = std::make_shared<Fence>();
    job.bindings = std::move(binds);
    job.in_fence = in_fence;
    job.in_fence_fd = in_fd;
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
        if (o->foreign && !(ex[i].flags & EXEC_OBJECT_ASYNC))
            job.foreign_waits.push_back({o, (short)(w ? POLLOUT : POLLIN)});
        if (w)
            o->write_fence = job.fence;
        else
            o->read_fences.push_back(job.fence);
    }
    if (eb->flags & I915_EXEC_FENCE_OUT) {
        int fd = -1;
        new_fence_fd(s, job.fence, &fd);
        if (fd < 0) return -EMFILE;
        eb->rsvd2 = (eb->rsvd2 & 0xffffffffull) | ((uint64_t)(uint32_t)fd << 32);
    }
    unsigned delay = s.cfg.delay_ms;
    job.ready_at = Clock::now() + std::chrono::milliseconds(delay);
    ++g_stats.submitted;
    ++g_stats.queued;
    log_event("execbuffer accepted: seqno %llu, %u objects, batch %llu bytes%s%s",
              (unsigned long long)job.fence->seqno, n, (unsigned long long)blen,
              job.hang ? " [hang]" : "", job.never ? " [never-signal]" : "");
    ensure_worker(s);
    {
        std::lock_guard<std::mutex> l(s.qmu);
        s.queue.push_back(std::move(job));
    }
    s.qcv.notify_all();
    return 0;
}

// ---------------------------------------------------------- device ioctls
int device_ioctl(State &s, std::unique_lock<std::mutex> &l, FileP fp, unsigned long req,
                 void *arg) {
    File &file = *fp;
    switch (req) {
    case DRM_IOCTL_VERSION: {
        auto *v = static_cast<drm_version *>(arg);
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
    case DRM_IOCTL_GET_CAP: {
        auto *c = static_cast<drm_get_cap *>(arg);
        if (c->capability == DRM_CAP_PRIME) {
            c->value = DRM_PRIME_CAP_IMPORT | DRM_PRIME_CAP_EXPORT;
            return 0;
        }
        if (c->capability == DRM_CAP_TIMESTAMP_MONOTONIC) {
            c->value = 1;
            return 0;
        }
        log_event("GET_CAP %llu not modelled", (unsigned long long)c->capability);
        return -EINVAL;
    }
    case DRM_IOCTL_I915_GETPARAM: {
        auto *g = static_cast<drm_i915_getparam *>(arg);
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
    case DRM_IOCTL_I915_GEM_CREATE:
    case DRM_IOCTL_I915_GEM_CREATE_EXT: {
        __u64 *size;
        __u32 *handle;
        if (req == DRM_IOCTL_I915_GEM_CREATE) {
            auto *c = static_cast<drm_i915_gem_create *>(arg);
            size = &c->size;
            handle = &c->handle;
        } else {
            auto *c = static_cast<drm_i915_gem_create_ext *>(arg);
            if (c->flags) return -EINVAL;
            if (c->extensions) {
                log_event("GEM_CREATE_EXT extensions not modelled");
                return -EINVAL;
            }
            size = &c->size;
            handle = &c->handle;
        }
        if (*size == 0) return -EINVAL;
        int err = 0;
        ObjectP o = new_native(s, *size, &err);
        if (!o) return err;
        *size = o->size;
        *handle = file.handle_of(o);
        return 0;
    }
    case DRM_IOCTL_GEM_CLOSE: {
        auto *c = static_cast<drm_gem_close *>(arg);
        auto it = file.handles.find(c->handle);
        if (it == file.handles.end()) return -EINVAL;  // drm_gem_handle_delete
        ObjectP keep = std::move(it->second);
        file.handles.erase(it);
        l.unlock();  // the object may be destroyed here
        keep.reset();
        l.lock();
        return 0;
    }
    case DRM_IOCTL_I915_GEM_MMAP_GTT:
    case DRM_IOCTL_I915_GEM_MMAP_OFFSET: {
        auto *m = static_cast<drm_i915_gem_mmap_offset *>(arg);  // GTT form is a prefix
        uint64_t flags = req == DRM_IOCTL_I915_GEM_MMAP_GTT ? I915_MMAP_OFFSET_GTT : m->flags;
        if (req == DRM_IOCTL_I915_GEM_MMAP_OFFSET && m->extensions) return -EINVAL;
        if (flags > I915_MMAP_OFFSET_FIXED) return -EINVAL;
        ObjectP o = lookup(file, m->handle);
        if (!o) return -ENOENT;
        if (flags == I915_MMAP_OFFSET_FIXED) return -ENODEV;  // integrated: [K] i915_gem_mman.c:933-985
        if (o->userptr || o->foreign) return -ENODEV;          // no struct pages / never mmap
        m->offset = o->mmap_base;
        return 0;
    }
    case DRM_IOCTL_I915_GEM_USERPTR: {
        auto *u = static_cast<drm_i915_gem_userptr *>(arg);
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
        u->handle = file.handle_of(o);
        return 0;
    }
    case DRM_IOCTL_I915_GEM_SET_DOMAIN: {
        auto *d = static_cast<drm_i915_gem_set_domain *>(arg);
        if ((d->write_domain | d->read_domains) & I915_GEM_GPU_DOMAINS) return -EINVAL;
        if (d->write_domain && d->read_domains != d->write_domain) return -EINVAL;
        ObjectP o = lookup(file, d->handle);
        if (!o) return -ENOENT;
        auto fs = o->fences(d->write_domain != 0);
        l.unlock();
        do_wait_fences(fs, nullptr);
        l.lock();
        return 0;
    }
    case DRM_IOCTL_I915_GEM_BUSY: {
        auto *b = static_cast<drm_i915_gem_busy *>(arg);
        ObjectP o = lookup(file, b->handle);
        if (!o) return -ENOENT;
        o->prune();
        b->busy = 0;
        if (o->write_fence) b->busy |= (kBcsClass + 1) | (0x10000u << kBcsClass);
        if (!o->read_fences.empty()) b->busy |= 0x10000u << kBcsClass;
        return 0;
    }
    case DRM_IOCTL_I915_GEM_WAIT: {
        auto *w = static_cast<drm_i915_gem_wait *>(arg);
        if (w->flags) return -EINVAL;
        ObjectP o = lookup(file, w->bo_handle);
        if (!o) return -ENOENT;
        auto fs = o->fences(true);
        int64_t start = now_ns();
        l.unlock();
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
        l.lock();
        if (w->timeout_ns > 0) {  // [K] i915_gem_wait_ioctl: report the remaining time
            w->timeout_ns -= now_ns() - start;
            if (w->timeout_ns < 0 || r == -ETIME) w->timeout_ns = 0;
        }
        return r;
    }
    case DRM_IOCTL_I915_GEM_CONTEXT_CREATE: {
        auto *c = static_cast<drm_i915_gem_context_create *>(arg);
        c->ctx_id = file.next_ctx++;
        file.contexts[c->ctx_id] = true;
        return 0;
    }
    case DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT: {
        auto *c = static_cast<drm_i915_gem_context_create_ext *>(arg);
        if (c->flags & ~(I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS |
                         I915_CONTEXT_CREATE_FLAGS_SINGLE_TIMELINE))
            return -EINVAL;
        if ((c->flags & I915_CONTEXT_CREATE_FLAGS_USE_EXTENSIONS) && c->extensions) {
            log_event("context-create extensions not modelled");
            return -EINVAL;
        }
        c->ctx_id = file.next_ctx++;
        file.contexts[c->ctx_id] = true;
        return 0;
    }
    case DRM_IOCTL_I915_GEM_CONTEXT_DESTROY: {
        auto *c = static_cast<drm_i915_gem_context_destroy *>(arg);
        if (c->pad) return -EINVAL;
        if (!c->ctx_id || !file.contexts.erase(c->ctx_id)) return -ENOENT;
        return 0;
    }
    case DRM_IOCTL_PRIME_HANDLE_TO_FD: {
        auto *p = static_cast<drm_prime_handle *>(arg);
        if (p->flags & ~(DRM_CLOEXEC | DRM_RDWR)) return -EINVAL;
        ObjectP o = lookup(file, p->handle);
        if (!o) return -ENOENT;
        int cloexec = (p->flags & DRM_CLOEXEC) ? O_CLOEXEC : 0;
        int fd;
        if (o->foreign) {  // re-export returns the original dma-buf
            fd = real().fcntl(o->foreign_fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
            if (fd < 0) return -errno;
            p->fd = fd;
            return 0;
        }
        if (o->userptr) {
            log_event("PRIME export of a userptr object not modelled");
            return -ENODEV;
        }
        // A new open file description of the object's memfd, read-only unless
        // DRM_RDWR, like the kernel's dma-buf file f_mode.
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", o->memfd);
        fd = real().open(path, ((p->flags & DRM_RDWR) ? O_RDWR : O_RDONLY) | cloexec);
        if (fd < 0) return -errno;
        s.dmabuf_fds[fd] = o;
        p->fd = fd;
        return 0;
    }
    case DRM_IOCTL_PRIME_FD_TO_HANDLE: {
        auto *p = static_cast<drm_prime_handle *>(arg);
        auto it = s.dmabuf_fds.find(p->fd);
        ObjectP o;
        if (it != s.dmabuf_fds.end()) {
            o = it->second;
        } else {
            // dma_buf_get(): -EBADF for a closed fd, -EINVAL for a file that
            // is not a dma-buf ([KB] drivers/dma-buf/dma-buf.c, dma_buf_get).
            struct stat st;
            if (real().fstat(p->fd, &st) != 0) return -EBADF;
            auto bi = s.by_inode.find({st.st_dev, st.st_ino});
            if (bi != s.by_inode.end()) o = bi->second.lock();
            if (o && !o->foreign) {
                s.dmabuf_fds[p->fd] = o;  // one of ours that travelled (e.g. SCM_RIGHTS)
            } else if (!o) {
                struct statfs sf;
                if (real().fstatfs(p->fd, &sf) != 0) return -EBADF;
                if ((unsigned long)sf.f_type != DMA_BUF_MAGIC) return -EINVAL;
                off_t size = real().lseek(p->fd, 0, SEEK_END);
                real().lseek(p->fd, 0, SEEK_SET);
                if (size <= 0) return -EINVAL;
                o = std::make_shared<Object>();
                o->foreign = true;
                o->size = (uint64_t)size;
                o->foreign_fd = real().fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
                void *m = real().mmap(nullptr, o->size, PROT_READ | PROT_WRITE, MAP_SHARED,
                                      o->foreign_fd, 0);
                if (m == MAP_FAILED) {
                    m = real().mmap(nullptr, o->size, PROT_READ, MAP_SHARED, o->foreign_fd, 0);
                    o->readonly = true;
                }
                if (m == MAP_FAILED) {
                    log_event("import of a real dma-buf without mmap support not modelled");
                    return -EINVAL;
                }
                o->host = (uint8_t *)m;
                o->host_owned = true;
                ++g_stats.mappings;
                o->dev = st.st_dev;
                o->ino = st.st_ino;
                s.by_inode[{o->dev, o->ino}] = o;
                s.any_foreign = true;
                log_event("imported a real dma-buf (%llu bytes)", (unsigned long long)o->size);
            }
        }
        p->handle = file.handle_of(o);
        return 0;
    }
    case DRM_IOCTL_I915_GEM_EXECBUFFER2:
    case DRM_IOCTL_I915_GEM_EXECBUFFER2_WR:
        return do_execbuffer(s, file, static_cast<drm_i915_gem_execbuffer2 *>(arg),
                             req == DRM_IOCTL_I915_GEM_EXECBUFFER2_WR);
    default:
        log_event("ioctl 0x%lx on the render node not modelled -> -EINVAL", req);
        return -EINVAL;
    }
}

// dma-buf / sync_file ioctls.  Caller holds l.
int dmabuf_ioctl(State &s, std::unique_lock<std::mutex> &l, ObjectP o, unsigned long req,
                 void *arg, bool *passthrough) {
    *passthrough = false;
    switch (req) {
    case DMA_BUF_IOCTL_SYNC: {
        // [KB] dma-buf.c dma_buf_ioctl: unknown bits or neither READ nor WRITE -> -EINVAL
        auto *sy = static_cast<dma_buf_sync *>(arg);
        if (sy->flags & ~DMA_BUF_SYNC_VALID_FLAGS_MASK) return -EINVAL;
        if (!(sy->flags & DMA_BUF_SYNC_RW)) return -EINVAL;
        if (!o->foreign) ++((sy->flags & DMA_BUF_SYNC_END) ? g_stats.sync_ends : g_stats.sync_starts);
        if (!(sy->flags & DMA_BUF_SYNC_END)) {
            auto fs = o->fences(sy->flags & DMA_BUF_SYNC_WRITE);
            l.unlock();
            do_wait_fences(fs, nullptr);
            l.lock();
        }
        if (o->foreign) *passthrough = true;
        return 0;
    }
    case DMA_BUF_IOCTL_EXPORT_SYNC_FILE: {
        if (o->foreign) {
            *passthrough = true;  // real kernel fences; sim fences are waited by SYNC/poll only
            return 0;
        }
        auto *e = static_cast<dma_buf_export_sync_file *>(arg);
        if (e->flags & ~DMA_BUF_SYNC_RW) return -EINVAL;
        if (!(e->flags & DMA_BUF_SYNC_RW)) return -EINVAL;
        FenceP f = merge_fences(o->fences(e->flags & DMA_BUF_SYNC_WRITE));
        int fd = -1;
        new_fence_fd(s, f, &fd);
        if (fd < 0) return -EMFILE;
        e->fd = fd;
        return 0;
    }
    case DMA_BUF_IOCTL_IMPORT_SYNC_FILE: {
        if (o->foreign) {
            *passthrough = true;
            return 0;
        }
        auto *im = static_cast<dma_buf_import_sync_file *>(arg);
        if (im->flags & ~DMA_BUF_SYNC_RW) return -EINVAL;
        if (!(im->flags & DMA_BUF_SYNC_RW)) return -EINVAL;
        auto it = s.sync_fds.find(im->fd);
        if (it == s.sync_fds.end()) {
            log_event("IMPORT_SYNC_FILE of a foreign sync_file not modelled");
            return -EINVAL;
        }
        if (im->flags & DMA_BUF_SYNC_WRITE)
            o->write_fence = it->second;
        else
            o->read_fences.push_back(it->second);
        return 0;
    }
    case DMA_BUF_SET_NAME_A:
    case DMA_BUF_SET_NAME_B:
        if (o->foreign) *passthrough = true;
        return 0;
    default:
        if (o->foreign) {
            *passthrough = true;
            return 0;
        }
        return -ENOTTY;
    }
}

int syncfile_ioctl(State &s, FenceP f, unsigned long req, void *arg) {
    switch (req) {
    case SYNC_IOC_FILE_INFO: {
        auto *info = static_cast<sync_file_info *>(arg);
        if (info->flags || info->pad) return -EINVAL;
        snprintf(info->name, sizeof info->name, "vgen9-bcs-%llu", (unsigned long long)f->seqno);
        info->status = f->get();
        if (info->num_fences == 0) {
            info->num_fences = 1;
            return 0;
        }
        auto *fi = reinterpret_cast<sync_fence_info *>(info->sync_fence_info);
        memset(fi, 0, sizeof *fi);
        snprintf(fi->obj_name, sizeof fi->obj_name, "bcs0");
        snprintf(fi->driver_name, sizeof fi->driver_name, "i915");
        fi->status = f->get();
        fi->timestamp_ns = fi->status ? f->timestamp_ns : 0;
        info->num_fences = 1;
        return 0;
    }
    case SYNC_IOC_MERGE: {
        auto *m = static_cast<sync_merge_data *>(arg);
        if (m->flags || m->pad) return -EINVAL;
        auto it = s.sync_fds.find(m->fd2);
        if (it == s.sync_fds.end()) return -ENOENT;
        FenceP mf = merge_fences({f, it->second});
        int fd = -1;
        new_fence_fd(s, mf, &fd);
        if (fd < 0) return -EMFILE;
        m->fence = fd;
        return 0;
    }
    default:
        return -ENOTTY;
    }
}

ObjectP foreign_by_fd(State &s, int fd) {
    // Caller holds s.mu.  A real dma-buf previously imported (matched by inode).
    if (!s.any_foreign) return nullptr;
    struct stat st;
    if (real().fstat(fd, &st) != 0) return nullptr;
    auto it = s.by_inode.find({st.st_dev, st.st_ino});
    if (it == s.by_inode.end()) return nullptr;
    ObjectP o = it->second.lock();
    return (o && o->foreign) ? o : nullptr;
}

int g_minor = -1;
std::string g_node;

}  // namespace

// ==================================================================== API
void log_event(const char *fmt, ...) {
    if (!g_log.load(std::memory_order_relaxed)) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "vgen9: %s\n", buf);
}

int node_minor() {
    if (g_minor < 0) {
        // The first render minor whose node and sysfs entry do not exist for
        // real (a Debian 13 VM may have vgem at renderD128).
        int m = 128;
        for (; m < 192; ++m) {
            char p[64], q[64];
            struct stat st;
            snprintf(p, sizeof p, "/dev/dri/renderD%d", m);
            snprintf(q, sizeof q, "/sys/dev/char/226:%d", m);
            if (real().stat(p, &st) != 0 && real().stat(q, &st) != 0) break;
        }
        char p[64];
        snprintf(p, sizeof p, "/dev/dri/renderD%d", m);
        g_node = p;
        g_minor = m;
    }
    return g_minor;
}
const std::string &node_path() {
    node_minor();
    return g_node;
}

bool is_tracked(int fd) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    return s.dev_fds.count(fd) || s.dmabuf_fds.count(fd) || s.sync_fds.count(fd);
}

int device_open(int flags) {
    State &s = S();
    int fd = memfd_create("vgen9-render-node", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
    if (fd < 0) return -1;
    std::lock_guard<std::mutex> l(s.mu);
    s.dev_fds[fd] = std::make_shared<File>();
    log_event("open %s -> fd %d", node_path().c_str(), fd);
    return fd;
}

void on_close(int fd) {
    State &s = S();
    FileP f;
    ObjectP o;
    FenceP fe;
    {
        std::lock_guard<std::mutex> l(s.mu);
        if (auto it = s.dev_fds.find(fd); it != s.dev_fds.end()) {
            f = std::move(it->second);
            s.dev_fds.erase(it);
        }
        if (auto it = s.dmabuf_fds.find(fd); it != s.dmabuf_fds.end()) {
            o = std::move(it->second);
            s.dmabuf_fds.erase(it);
        }
        if (auto it = s.sync_fds.find(fd); it != s.sync_fds.end()) {
            fe = std::move(it->second);
            s.sync_fds.erase(it);
        }
    }
    // f/o/fe released here, outside the lock (may destroy objects).
}

void on_close_range(unsigned first, unsigned last) {
    State &s = S();
    std::vector<int> fds;
    {
        std::lock_guard<std::mutex> l(s.mu);
        auto collect = [&](auto &m) {
            for (auto it = m.lower_bound((int)std::min<unsigned>(first, INT32_MAX));
                 it != m.end() && (unsigned)it->first <= last; ++it)
                fds.push_back(it->first);
        };
        collect(s.dev_fds);
        collect(s.dmabuf_fds);
        collect(s.sync_fds);
    }
    for (int fd : fds) on_close(fd);
}

void on_dup(int oldfd, int newfd) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    if (auto it = s.dev_fds.find(oldfd); it != s.dev_fds.end()) s.dev_fds[newfd] = it->second;
    if (auto it = s.dmabuf_fds.find(oldfd); it != s.dmabuf_fds.end())
        s.dmabuf_fds[newfd] = it->second;
    if (auto it = s.sync_fds.find(oldfd); it != s.sync_fds.end()) s.sync_fds[newfd] = it->second;
}

bool handle_ioctl(int fd, unsigned long req, void *arg, int *ret) {
    State &s = S();
    std::unique_lock<std::mutex> l(s.mu);
    FileP f;
    ObjectP o;
    FenceP fe;
    if (auto it = s.dev_fds.find(fd); it != s.dev_fds.end()) f = it->second;
    else if (auto it2 = s.dmabuf_fds.find(fd); it2 != s.dmabuf_fds.end()) o = it2->second;
    else if (auto it3 = s.sync_fds.find(fd); it3 != s.sync_fds.end()) fe = it3->second;
    else if (req == DMA_BUF_IOCTL_SYNC) o = foreign_by_fd(s, fd);
    if (!f && !o && !fe) return false;
    if (!o || !o->foreign) {
        l.unlock();
        int e = inject(s, req);
        l.lock();
        if (e) {
            log_event("ioctl 0x%lx: injected failure %s", req, strerror(e));
            *ret = -e;
            return true;
        }
    }
    if (f) {
        *ret = device_ioctl(s, l, f, req, arg);
        return true;
    }
    if (fe) {
        *ret = syncfile_ioctl(s, fe, req, arg);
        return true;
    }
    bool pass = false;
    *ret = dmabuf_ioctl(s, l, o, req, arg, &pass);
    return !pass || *ret != 0;
}

bool handle_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off, void **out) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    int target = -1;
    off_t toff = off;
    if (s.dev_fds.count(fd)) {
        auto it = s.mmap_offsets.upper_bound((uint64_t)off);
        ObjectP o;
        if (it != s.mmap_offsets.begin()) o = std::prev(it)->second.lock();
        if (!o || (uint64_t)off < o->mmap_base || (uint64_t)off - o->mmap_base + len > o->size) {
            errno = EINVAL;
            *out = MAP_FAILED;
            return true;
        }
        target = o->memfd;
        toff = off - (off_t)o->mmap_base;
    } else if (s.dmabuf_fds.count(fd)) {
        target = fd;
        if ((uint64_t)off + len > page_round(s.dmabuf_fds[fd]->size)) {
            errno = EINVAL;  // dma_buf_mmap_internal: beyond the buffer
            *out = MAP_FAILED;
            return true;
        }
    } else {
        return false;
    }
    void *p = real().mmap(addr, len, prot, flags, target, toff);
    if (p != MAP_FAILED) {
        s.user_maps[(uintptr_t)p] = len;
        ++g_stats.mappings;
    }
    *out = p;
    return true;
}

void on_munmap(void *addr, size_t) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    auto it = s.user_maps.find((uintptr_t)addr);
    if (it != s.user_maps.end()) {
        s.user_maps.erase(it);
        --g_stats.mappings;
    }
}

bool handle_lseek(int fd, off_t off, int whence, off_t *ret) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    auto it = s.dmabuf_fds.find(fd);
    if (it == s.dmabuf_fds.end()) return false;
    // [KB] dma-buf.c dma_buf_llseek: only (0, SEEK_END) and (0, SEEK_SET).
    if ((whence != SEEK_END && whence != SEEK_SET) || off != 0) {
        errno = EINVAL;
        *ret = -1;
        return true;
    }
    *ret = whence == SEEK_END ? (off_t)it->second->size : 0;
    return true;
}

bool handle_fstatfs(int fd, struct statfs *buf) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    if (!s.dmabuf_fds.count(fd)) return false;
    memset(buf, 0, sizeof *buf);
    buf->f_type = DMA_BUF_MAGIC;
    buf->f_bsize = kPage;
    buf->f_namelen = 255;
    return true;
}

// The exporter name fdinfo reports for the sim's dma-bufs: "i915", like
// i915_gem_prime_export; tests set another to play a foreign exporter.
std::string g_export_name = "i915";  // under S().mu

bool dmabuf_fdinfo(int fd, std::string *out) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    auto it = s.dmabuf_fds.find(fd);
    if (it == s.dmabuf_fds.end() || it->second->foreign) return false;  // a real dma-buf: the kernel answers
    char text[256];
    snprintf(text, sizeof text, "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t%lu\nsize:\t%llu\ncount:\t1\n"
             "exp_name:\t%s\nname:\t\n",
             (unsigned long)it->second->ino, (unsigned long long)it->second->size, g_export_name.c_str());
    *out = text;
    return true;
}

bool handle_fstat(int fd, struct stat *st) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    if (!s.dev_fds.count(fd)) return false;
    memset(st, 0, sizeof *st);
    st->st_mode = S_IFCHR | 0666;
    st->st_rdev = makedev(226, node_minor());
    st->st_dev = makedev(0, 5);
    st->st_ino = 1000 + node_minor();
    st->st_nlink = 1;
    st->st_blksize = 4096;
    return true;
}

bool poll_needs_sim(const struct pollfd *fds, nfds_t n) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    if (s.dmabuf_fds.empty() && !s.any_foreign) return false;
    for (nfds_t i = 0; i < n; ++i)
        if (s.dmabuf_fds.count(fds[i].fd)) return true;
    if (s.any_foreign)
        for (nfds_t i = 0; i < n; ++i)
            if (fds[i].fd >= 0 && foreign_by_fd(s, fds[i].fd)) return true;
    return false;
}

int poll_impl(struct pollfd *fds, nfds_t n, int64_t timeout_ns, const sigset_t *mask) {
    // dma_buf_poll ([KB] dma-buf.c): POLLIN waits for the write fence, POLLOUT
    // for all fences.  Tracked fds are replaced by the eventfd of one pending
    // fence, re-evaluated after every wake-up.
    State &s = S();
    auto start = Clock::now();
    std::vector<struct pollfd> tmp(n);
    std::vector<int> kind(n);  // 0 pass-through, 1 own export ready, 2 waiting on sim fence
    std::vector<FenceP> hold(n);  // keeps the substituted eventfds open during ppoll
    std::vector<short> ready_ev(n);
    for (;;) {
        int ready_own = 0;
        {
            std::lock_guard<std::mutex> l(s.mu);
            for (nfds_t i = 0; i < n; ++i) {
                tmp[i] = fds[i];
                tmp[i].revents = 0;
                kind[i] = 0;
                ObjectP o;
                if (auto it = s.dmabuf_fds.find(fds[i].fd); it != s.dmabuf_fds.end())
                    o = it->second;
                else if (fds[i].fd >= 0)
                    o = foreign_by_fd(s, fds[i].fd);
                if (!o) continue;
                short ev = fds[i].events & (POLLIN | POLLOUT);
                auto wf = o->fences(false);  // write fence (POLLIN)
                auto af = o->fences(true);   // all fences (POLLOUT)
                short ready = 0;
                if ((ev & POLLIN) && wf.empty()) ready |= POLLIN;
                if ((ev & POLLOUT) && af.empty()) ready |= POLLOUT;
                FenceP pend;
                if (o->foreign ? ready != ev : !ready && ev)
                    pend = ((ev & POLLIN) && !(ready & POLLIN)) ? wf.back() : af.back();
                hold[i] = pend;
                ready_ev[i] = ready;
                if (pend) {
                    tmp[i].fd = pend->efd;
                    tmp[i].events = POLLIN;
                    kind[i] = 2;
                } else if (!o->foreign) {
                    tmp[i].fd = -1;
                    kind[i] = 1;
                    if (ready) ++ready_own;
                }
            }
        }
        int64_t left = -1;
        if (timeout_ns >= 0) {
            left = timeout_ns -
                   std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start)
                           .count();
            if (left < 0) left = 0;
        }
        if (ready_own) left = 0;
        struct timespec ts = {(time_t)(left / 1000000000), (long)(left % 1000000000)};
        int r = real().ppoll(tmp.data(), n, left < 0 ? nullptr : &ts, mask);
        if (r < 0) return r;
        int count = 0;
        bool sim_woke = false;
        for (nfds_t i = 0; i < n; ++i) {
            fds[i].revents = 0;
            if (kind[i] == 0) {
                fds[i].revents = tmp[i].revents;
            } else if (kind[i] == 1) {
                fds[i].revents = ready_ev[i];
            } else if (tmp[i].revents) {
                sim_woke = true;  // a fence completed: re-evaluate
            }
            if (fds[i].revents) ++count;
        }
        if (count) return count;
        if (!sim_woke) return 0;  // the real timeout expired
        if (timeout_ns >= 0 && Clock::now() - start >= std::chrono::nanoseconds(timeout_ns))
            return 0;
    }
}

}  // namespace vgen9sim

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
        for (auto &j : s.queue) j.ready_at = Clock::now();
        s.qcv.notify_all();
    }
    // Drain, completing never-signalled fences with -EIO as a GPU reset
    // would (a queued batch may wait on one through FENCE_IN).
    for (;;) {
        std::vector<FenceP> nev;
        {
            std::lock_guard<std::mutex> l(s.mu);
            nev.swap(s.never_fences);
        }
        for (auto &f : nev) f->signal(-EIO);
        std::unique_lock<std::mutex> q(s.qmu);
        if (s.queue.empty() && !s.executing) break;
        s.donecv.wait_for(q, std::chrono::milliseconds(5));
    }
    {
        std::lock_guard<std::mutex> l(s.mu);
        std::lock_guard<std::mutex> q(s.qmu);
        s.cfg = s.env_cfg;
        s.cfg.hang_next = s.cfg.never_next = 0;  // one-shot: consumed at load time
        s.cfg.fails.clear();
        s.credits = 0;
        s.qcv.notify_all();
    }
    g_stats.submitted = g_stats.executed = g_stats.hung = g_stats.rejected = 0;
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
}

__attribute__((visibility("default"))) void vgen9_set_log(int on) { g_log = on != 0; }

// DMA_BUF_IOCTL_SYNC calls on the sim's own dma-bufs since load (tests look
// this up with dlsym; not in vgen9_stats so that struct keeps its layout).
__attribute__((visibility("default"))) void vgen9_dmabuf_syncs(uint64_t *starts, uint64_t *ends) {
    *starts = g_stats.sync_starts;
    *ends = g_stats.sync_ends;
}

}  // extern "C"
