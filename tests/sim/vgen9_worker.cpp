// The virtual Gen9's BCS ring: one worker thread runs accepted batches in
// order (delay, manual ticks, injected hangs and never-signalled fences), after
// their in-fences and the implicit fences of real dma-bufs.
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
    if (j.ctx && j.ctx->banned) {
        // Its context was cancelled while the batch waited: the request is
        // submitted with its payload skipped ([K] __i915_request_submit).
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

}  // namespace

void cancel_context(State &s, const GemContextP &ctx) {
    // A never-signalling batch is one the ring never got to (as if it waited
    // for an in-fence that never ends): banned, it stays pending until
    // vgen9_reset(), as i915 submits a cancelled request only once its
    // in-fences end.
    ctx->banned = true;
    std::vector<Job> dropped;
    {
        std::lock_guard<std::mutex> l(s.qmu);
        for (auto it = s.queue.begin(); it != s.queue.end();) {
            // One that waits for an in-fence stays: i915 submits it (payload
            // skipped) only once that fence ends.
            if (it->ctx == ctx && !it->in_fence && it->in_fence_fd < 0) {
                dropped.push_back(std::move(*it));
                it = s.queue.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (auto &j : dropped) {
        log_event("batch seqno %llu: context cancelled before it ran (-EIO)",
                  (unsigned long long)j.fence->seqno);
        ++g_stats.cancelled;
        --g_stats.queued;
        j.fence->signal(-EIO);
    }
    std::lock_guard<std::mutex> l(s.qmu);
    s.donecv.notify_all();
    s.qcv.notify_all();
}

void ensure_worker(State &s) {
    std::lock_guard<std::mutex> l(s.qmu);
    if (s.worker_started) return;
    s.worker_started = true;
    std::thread(worker_main).detach();
}

}  // namespace vgen9sim
