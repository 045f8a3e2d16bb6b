// The virtual Gen9's BCS engine: one worker thread runs accepted batches
// (delay, manual ticks, injected hangs and never-signalled fences) once their
// waits ended: in-fences, implicit fences, and their GEM context's previous
// request (i915 orders the requests of one context, not of different ones).
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <linux/sync_file.h>

#include <thread>

#include "vgen9_model.hpp"

namespace vgen9sim {
namespace {

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

// Under s.qmu: whether everything `j` waits for has ended (its submit
// fence: in-fences, implicit fences, its context's previous request).
bool waits_ended(const Job &j) {
    if (j.prev && j.prev->get() == 0) return false;
    if (j.in_fence && j.in_fence->get() == 0) return false;
    for (auto &f : j.implicit)
        if (f->get() == 0) return false;
    return j.foreign_done.load();
}

// Under s.qmu: the first batch, in submission order, the engine may take
// now, or end().  A banned context's batch is taken at once (no delay, no
// tick); *wake: when the first delayed one becomes due.
std::list<JobP>::iterator next_job(State &s, Clock::time_point *wake) {
    const Clock::time_point now = Clock::now();
    for (auto it = s.queue.begin(); it != s.queue.end(); ++it) {
        const Job &j = **it;
        if (!waits_ended(j)) continue;
        if (j.ctx->banned) return it;
        if (s.cfg.manual) {
            if (s.credits > 0) return it;
            continue;
        }
        if (j.ready_at > now) {
            if (*wake == Clock::time_point{} || j.ready_at < *wake) *wake = j.ready_at;
            continue;
        }
        return it;
    }
    return s.queue.end();
}

void wake_engine(State &s) {
    std::lock_guard<std::mutex> l(s.qmu);
    s.qcv.notify_all();
}

bool ready_now(int fd, short ev) {
    struct pollfd p = {fd, ev, 0};
    return real().poll(&p, 1, 0) == 1;
}

void wait_ready(int fd, short ev) {
    struct pollfd p = {fd, ev, 0};
    while (real().poll(&p, 1, -1) < 0 && errno == EINTR) {
    }
}

// The real in-fence's error once it ended (SYNC_IOC_FILE_INFO), or 0.
int real_fence_error(int fd) {
    struct sync_file_info info;
    memset(&info, 0, sizeof info);
    if (real().ioctl(fd, SYNC_IOC_FILE_INFO, &info) == 0 && info.status < 0) return info.status;
    return 0;
}

// The real fds a batch waits for (a real sync_file in-fence, the implicit
// fences of real dma-bufs): ended now, or watched by a thread of their own
// so that the engine goes on with other contexts meanwhile.
void watch_real_fds(State &s, const JobP &j) {
    if (j->in_fence_fd < 0 && j->foreign_waits.empty()) return;
    bool all = j->in_fence_fd < 0 || ready_now(j->in_fence_fd, POLLIN);
    for (auto &[o, ev] : j->foreign_waits) all = all && ready_now(o->foreign_fd, ev);
    if (all) {
        if (j->in_fence_fd >= 0) j->foreign_err = real_fence_error(j->in_fence_fd);
        return;
    }
    j->foreign_done = false;
    std::thread([&s, j] {
        if (j->in_fence_fd >= 0) wait_ready(j->in_fence_fd, POLLIN);
        for (auto &[o, ev] : j->foreign_waits) wait_ready(o->foreign_fd, ev);
        std::lock_guard<std::mutex> l(s.qmu);
        if (j->in_fence_fd >= 0) j->foreign_err = real_fence_error(j->in_fence_fd);
        j->foreign_done = true;
        s.qcv.notify_all();
    }).detach();
}

void run_job(State &s, Job &j) {
    // The submit fence's error: the in-fence's, else the one inherited from
    // the context's previous request ([K] i915_sw_fence.c, submit_notify).
    int in_err = 0;
    if (j.in_fence) in_err = std::min(0, j.in_fence->get());
    if (!in_err) in_err = j.foreign_err;
    if (!in_err && j.prev_submit_err) in_err = j.prev_submit_err->load();
    j.submit_err->store(in_err);
    if (in_err && !j.never) {
        // An in-fence error is inherited by the request, whose payload is then
        // skipped ([K] i915_sw_fence.c:418-423, i915_request.c:650-651, 787-797).
        log_event("batch seqno %llu: FENCE_IN completed with %d, batch skipped",
                  (unsigned long long)j.fence->seqno, in_err);
        j.fence->signal(in_err);
        return;
    }
    if (j.ctx->banned) {
        // Its context was cancelled before the engine took the batch: the
        // request is submitted with its payload skipped ([K] __i915_request_submit).
        log_event("batch seqno %llu: context cancelled, batch skipped (-EIO)",
                  (unsigned long long)j.fence->seqno);
        ++g_stats.cancelled;
        j.fence->signal(-EIO);
        return;
    }
    if (j.never) {
        log_event("batch seqno %llu: fence will never signal (injected)",
                  (unsigned long long)j.fence->seqno);
        std::lock_guard<std::mutex> l(s.mu);
        s.never_fences.push_back({j.fence, j.ctx});
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

// The one BCS engine: runs one batch at a time, the first in submission
// order whose waits ended; a batch that waits holds back only the batches
// of its own context (and those that wait for it).
void worker_main() {
    State &s = S();
    std::unique_lock<std::mutex> l(s.qmu);
    for (;;) {
        Clock::time_point wake{};
        auto it = next_job(s, &wake);
        if (it == s.queue.end()) {
            if (wake != Clock::time_point{})
                s.qcv.wait_until(l, wake);
            else
                s.qcv.wait(l);
            continue;
        }
        JobP j = std::move(*it);
        s.queue.erase(it);
        if (!j->ctx->banned && s.cfg.manual && s.credits) {
            --s.credits;
            ++s.ran_in_tick;
        }
        s.executing = true;
        l.unlock();
        run_job(s, *j);
        {
            // Its objects let go of signalled fences now: each holds an
            // eventfd, which the process's fd count would otherwise carry
            // until the object's next batch (the kernel's fences hold none).
            std::lock_guard<std::mutex> m(s.mu);
            for (auto &b : j->bindings) b.obj->prune();
        }
        j.reset();  // drop object references outside the lock
        --g_stats.queued;
        l.lock();
        s.executing = false;
        s.donecv.notify_all();
    }
}

}  // namespace

void cancel_context(State &s, const GemContextP &ctx) {
    // The engine ends the context's batches: at once those nothing holds,
    // the others when what they wait for ends.  A never-signalling batch is
    // one the engine never got to end (as if it waited for an in-fence that
    // never ends): it stays pending until vgen9_reset().
    ctx->banned = true;
    std::lock_guard<std::mutex> l(s.qmu);
    s.donecv.notify_all();
    s.qcv.notify_all();
}

unsigned ready_batches(State &s) {
    std::lock_guard<std::mutex> l(s.qmu);
    unsigned n = 0;
    for (const JobP &j : s.queue) n += waits_ended(*j) && !j->ctx->banned;
    return n;
}

void queue_job(State &s, JobP job) {
    ensure_worker(s);
    watch_real_fds(s, job);
    std::vector<FenceP> waits = job->implicit;
    if (job->prev) waits.push_back(job->prev);
    if (job->in_fence) waits.push_back(job->in_fence);
    {
        std::lock_guard<std::mutex> l(s.qmu);
        s.queue.push_back(std::move(job));
    }
    // Each wait that ends looks at the queue again (at once if it has ended).
    for (auto &f : waits) f->on_signal([&s] { wake_engine(s); });
    wake_engine(s);
}

void ensure_worker(State &s) {
    std::lock_guard<std::mutex> l(s.qmu);
    if (s.worker_started) return;
    s.worker_started = true;
    std::thread(worker_main).detach();
}

}  // namespace vgen9sim
