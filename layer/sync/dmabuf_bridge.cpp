#include "layer/sync/dmabuf_bridge.hpp"

#include <errno.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "layer/dmabuf/explicit_fences.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/base/stats.hpp"

namespace cldmabuf::sync {
namespace {

// One mutex guards every DmabufSignal's fence and the set of pending ones:
// a signal is two quick syscalls, and the watchdog, the release's step and a
// destructor may race for the same fence.  Leaked on purpose (no static
// destructor may run while the watchdog or a worker still signals).
struct Pending {
    std::mutex mutex;
    std::condition_variable wake;
    std::unordered_set<DmabufSignal *> signals;
    std::thread watchdog;
    bool stopping = false;
};
Pending &pending_state() {
    static Pending *p = new Pending;
    return *p;
}

void watch() {
    Pending &p = pending_state();
    std::unique_lock lock(p.mutex);
    while (!p.stopping) {
        auto next = std::chrono::steady_clock::time_point::max();
        for (DmabufSignal *s : p.signals) next = std::min(next, s->deadline());
        if (next == std::chrono::steady_clock::time_point::max())
            p.wake.wait(lock);
        else
            p.wake.wait_until(lock, next);
        if (p.stopping) break;
        lock.unlock();
        signal_expired_dmabuf_signals(std::chrono::steady_clock::now());
        lock.lock();
    }
}

}  // namespace

void signal_expired_dmabuf_signals(std::chrono::steady_clock::time_point now) {
    Pending &p = pending_state();
    std::lock_guard lock(p.mutex);
    for (auto it = p.signals.begin(); it != p.signals.end();) {
        DmabufSignal *s = *it++;  // signal_locked erases s
        if (s->deadline_ <= now) {
            stats().release_fences_expired++;
            s->signal_locked("its deadline (CLDMABUF_FENCE_TIMEOUT_MS) passed");
        }
    }
}

DmabufSignal::~DmabufSignal() {
    // Never left pending: a release step dropped without running (its queue
    // torn down, enqueue refused) lets the dma-buf's consumers go.
    std::lock_guard lock(pending_state().mutex);
    signal_locked(nullptr);
}

int DmabufSignal::attach(int dmabuf_fd) {
    {
        std::lock_guard lock(pending_state().mutex);
        if (retired_) return -ECANCELED;  // signalled before it was attached: nothing to wait for
    }
    LayerFence f;
    if (int err = create_layer_fence(&f); err < 0) return err;
    const int err = import_fence_into_dmabuf(dmabuf_fd, f.fence.get(), /*write=*/true);
    // The dma-buf holds its own reference to the fence: the sync_file is not needed.
    f.fence.reset();
    if (err < 0) {
        // Never imported: signal it so nothing of it lingers, then let it go.
        signal_layer_fence(&f);
        return err;
    }
    Pending &p = pending_state();
    std::lock_guard lock(p.mutex);
    if (retired_) {  // signalled while it was being attached: let it go at once
        signal_layer_fence(&f);
        return -ECANCELED;
    }
    fence_ = std::move(f);
    dmabuf_fd_ = dmabuf_fd;
    deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(fence_timeout_ms());
    p.signals.insert(this);
    if (!p.watchdog.joinable()) {
        p.stopping = false;
        p.watchdog = std::thread(watch);
    }
    p.wake.notify_one();
    return 0;
}

void DmabufSignal::signal() {
    std::lock_guard lock(pending_state().mutex);
    retired_ = true;  // an attach still to come (a release's fence handed to its acquire) does nothing
    signal_locked(nullptr);
}

bool DmabufSignal::pending() const {
    std::lock_guard lock(pending_state().mutex);
    return static_cast<bool>(fence_.timeline);
}

void DmabufSignal::signal_locked(const char *why) {
    if (!fence_.timeline) return;
    pending_state().signals.erase(this);
    if (why)
        LOG_WARN("release: the fence it put into dma-buf fd %d was signalled before the release ran: %s", dmabuf_fd_,
                 why);
    if (int err = signal_layer_fence(&fence_); err < 0)
        LOG_ERROR("release: signalling its fence in dma-buf fd %d failed (errno %d); closing its timeline "
                  "signalled it", dmabuf_fd_, -err);
    fence_ = LayerFence{};
}

void signal_all_dmabuf_signals() {
    Pending &p = pending_state();
    std::thread watchdog;
    {
        std::lock_guard lock(p.mutex);
        while (!p.signals.empty()) (*p.signals.begin())->signal_locked("the layer is unloaded");
        p.stopping = true;
        watchdog = std::move(p.watchdog);
    }
    p.wake.notify_all();
    if (watchdog.joinable()) watchdog.join();
}

size_t pending_dmabuf_signals() {
    std::lock_guard lock(pending_state().mutex);
    return pending_state().signals.size();
}

}  // namespace cldmabuf::sync
