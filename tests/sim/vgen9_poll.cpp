// poll()/ppoll() on the virtual Gen9's dma-bufs (and real ones it imported):
// dma_buf_poll's rules on the sim's fences, real ppoll for everything else.
#include <poll.h>
#include <signal.h>

#include <thread>

#include "vgen9_internal.hpp"
#include "vgen9_model.hpp"

namespace vgen9sim {
namespace {

// The threads inside a poll that waits for the sim's fences, each with
// those fences: a scheduler that runs batches and signals timelines one
// step at a time (tests/explore) counts them as waiting, not working.
std::mutex waits_mu;
std::map<std::thread::id, std::vector<FenceP>> &fence_waits() {
    static auto *m = new std::map<std::thread::id, std::vector<FenceP>>;  // hooks may run during exit
    return *m;
}

class FenceWait {
public:
    FenceWait(std::vector<FenceP> fences, int64_t timeout_ns) : on_(timeout_ns != 0 && !fences.empty()) {
        if (!on_) return;
        std::lock_guard<std::mutex> l(waits_mu);
        fence_waits()[std::this_thread::get_id()] = std::move(fences);
    }
    ~FenceWait() {
        if (!on_) return;
        std::lock_guard<std::mutex> l(waits_mu);
        fence_waits().erase(std::this_thread::get_id());
    }

private:
    bool on_;
};

}  // namespace

void fence_waiters(uint64_t out[2]) {
    std::lock_guard<std::mutex> l(waits_mu);
    out[0] = fence_waits().size();
    out[1] = 0;
    for (auto &[thread, fences] : fence_waits()) {
        bool pending = true;
        for (auto &f : fences) pending = pending && f->get() == 0;
        out[1] += pending;
    }
}

int poll_sync_files(struct pollfd *fds, nfds_t n, int64_t timeout_ns, const sigset_t *mask, bool *handled) {
    std::vector<FenceP> fences;
    {
        State &s = S();
        std::lock_guard<std::mutex> l(s.mu);
        if (!s.sync_fds.empty())
            for (nfds_t i = 0; i < n; ++i)
                if (auto it = s.sync_fds.find(fds[i].fd); it != s.sync_fds.end()) fences.push_back(it->second);
    }
    *handled = !fences.empty();
    if (fences.empty()) return 0;
    FenceWait mark(std::move(fences), timeout_ns);
    struct timespec ts = {(time_t)(timeout_ns / 1000000000), (long)(timeout_ns % 1000000000)};
    return real().ppoll(fds, n, timeout_ns < 0 ? nullptr : &ts, mask);
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
        std::vector<FenceP> awaited;
        for (nfds_t i = 0; i < n; ++i)
            if (kind[i] == 2) awaited.push_back(hold[i]);
        int r = 0;
        {
            FenceWait mark(std::move(awaited), left);
            r = real().ppoll(tmp.data(), n, left < 0 ? nullptr : &ts, mask);
        }
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
