#include "layer/handoff/acquire_opening.hpp"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/core/dmabuf_aliases.hpp"
#include "layer/core/import_state.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/handoff/cpu_access.hpp"
#include "layer/handoff/plan.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/base/stats.hpp"

namespace cldmabuf {

// A release fence handed to the acquires ahead of its release that had not
// opened: attached by the last of them to finish its opening (any fd of the
// dma-buf: one reservation object), never if one of them failed or was
// dropped (its release signals it all the same).  Under openings_mutex.
struct HandOver {
    std::shared_ptr<sync::DmabufSignal> fence;
    size_t remaining = 0;  // openings still to finish
    bool failed = false;
};

class AcquireOpening {
public:
    AcquireOpening(std::shared_ptr<Import> import, std::vector<cl_event> waits)
        : import_(std::move(import)), waits_(std::move(waits)) {}
    ~AcquireOpening();
    AcquireOpening(const AcquireOpening &) = delete;
    AcquireOpening &operator=(const AcquireOpening &) = delete;

    // pending: neither side has begun; opening_ahead: a release claimed it
    // and is at its fence check and SYNC START, outside the lock;
    // opened_ahead: that release did it, the step skips it; opening: the
    // step is at it; done: the step finished it (or gave up waiting for the
    // release); retired: its step returned or was dropped, or its import was
    // torn down: no longer findable, never opened.
    enum class State { pending, opening_ahead, opened_ahead, opening, done, retired };
    State state = State::pending;  // under openings_mutex
    std::vector<std::shared_ptr<HandOver>> handed;  // finished with the step's START
    std::shared_ptr<Import> import_;
    std::vector<cl_event> waits_;  // the acquire's wait list, retained
    bool waits_complete() const {
        for (cl_event e : waits_) {
            cl_int status = CL_QUEUED;
            if (next().clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) !=
                    CL_SUCCESS ||
                status != CL_COMPLETE)
                return false;
        }
        return true;
    }
};

namespace {

// Every opening not retired, by dma-buf (every import of it: a release fence
// in the dma-buf holds any of their SYNC STARTs).  The table holds weak
// references: a release keeps the ones it claimed alive while it is outside
// the lock.  Leaked on purpose (steps may still be destroyed by ICD threads
// at exit).  No kernel call that can wait is made under openings_mutex.
std::mutex openings_mutex;
std::condition_variable *opening_ended = new std::condition_variable;  // an opening left opening/opening_ahead
struct Listed {
    AcquireOpening *raw;
    std::weak_ptr<AcquireOpening> ref;
};
auto *openings = new std::unordered_multimap<DmabufKey, Listed, DmabufKeyHash>;

bool unopened(const AcquireOpening &o) {
    using S = AcquireOpening::State;
    return o.state == S::pending || o.state == S::opening || o.state == S::opening_ahead;
}

// One opening of the hand-over finished (under openings_mutex): the fence to
// attach now if it was the last and none failed, else null.
std::shared_ptr<sync::DmabufSignal> finish_hand_over(HandOver &h, bool failed) {
    h.failed = h.failed || failed;
    if (--h.remaining != 0 || h.failed) return nullptr;
    return h.fence;
}

// Every fence handed to `o` finished with its opening (under openings_mutex);
// the ones it completed are added to `attach`.
void finish_handed(AcquireOpening &o, bool failed, std::vector<std::shared_ptr<sync::DmabufSignal>> *attach) {
    for (const auto &h : o.handed)
        if (auto fence = finish_hand_over(*h, failed)) attach->push_back(std::move(fence));
    o.handed.clear();
}

// Under openings_mutex.  The fences handed to it are never attached by it;
// their releases signal them, which retires them.
void retire_locked(AcquireOpening &o) {
    if (o.state == AcquireOpening::State::retired) return;
    auto range = openings->equal_range(dmabuf_key(*o.import_));
    for (auto it = range.first; it != range.second; ++it)
        if (it->second.raw == &o) {
            openings->erase(it);
            break;
        }
    std::vector<std::shared_ptr<sync::DmabufSignal>> none;
    finish_handed(o, /*failed=*/true, &none);
    o.state = AcquireOpening::State::retired;
}

// The import's teardown (forget_import_state runs before its fds close):
// its openings retire, so no release opens one ahead on a closed number.
void retire_openings_of(const Import &import) {
    std::vector<std::shared_ptr<AcquireOpening>> gone;  // let go after the lock: the last may destroy one
    {
        std::lock_guard lock(openings_mutex);
        for (const auto &[key, listed] : *openings)
            if (listed.raw->import_.get() == &import)
                if (auto o = listed.ref.lock()) gone.push_back(std::move(o));
        for (const auto &o : gone) retire_locked(*o);
    }
    opening_ended->notify_all();
}

void attach_all(const std::vector<std::shared_ptr<sync::DmabufSignal>> &attach, int fd, const char *what) {
    for (const auto &fence : attach)
        if (int failed = fence->attach(fd); failed < 0)
            LOG_DEBUG("%s: the release fence handed over did not attach to dma-buf fd %d (%s); its consumers see "
                      "only the earlier fences", what, fd, std::strerror(-failed));
}

}  // namespace

AcquireOpening::~AcquireOpening() {
    {
        std::lock_guard lock(openings_mutex);
        retire_locked(*this);
    }
    for (cl_event e : waits_) next().clReleaseEvent(e);
}

cl_int open_acquire(const Import &import) {
    const uint64_t access = import.sync_access_flags();
    if (cl_int err = wait_acquire_fences(import, access, "acquire"); err != CL_SUCCESS) return err;
    return sync_start(import, access, "acquire");
}

std::shared_ptr<AcquireOpening> make_acquire_opening(const std::shared_ptr<Import> &import, cl_uint num_events,
                                                     const cl_event *wait_list) {
    static const bool retired_at_teardown = (register_import_state(retire_openings_of), true);
    (void)retired_at_teardown;
    std::vector<cl_event> waits(wait_list, wait_list + (wait_list ? num_events : 0));
    for (cl_event e : waits) next().clRetainEvent(e);
    auto opening = std::make_shared<AcquireOpening>(import, std::move(waits));
    std::lock_guard lock(openings_mutex);
    openings->emplace(dmabuf_key(*import), Listed{opening.get(), opening});
    return opening;
}

void retire_openings(const std::vector<std::shared_ptr<AcquireOpening>> &list) {
    if (list.empty()) return;
    {
        std::lock_guard lock(openings_mutex);
        for (const auto &o : list) retire_locked(*o);
    }
    opening_ended->notify_all();
}

cl_int open_in_step(AcquireOpening &opening) {
    using S = AcquireOpening::State;
    {
        std::unique_lock lock(openings_mutex);
        // A release is at its SYNC START for this acquire: it returns at once
        // unless a fence came in after the release's check, and then the
        // step's own START would wait for that fence too.  Bounded as the
        // step's own fence wait is.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(fence_timeout_ms());
        if (!opening_ended->wait_until(lock, deadline, [&] { return opening.state != S::opening_ahead; })) {
            opening.state = S::done;  // the release's START, when it returns, publishes nothing
            std::vector<std::shared_ptr<sync::DmabufSignal>> none;
            finish_handed(opening, /*failed=*/true, &none);
            lock.unlock();
            opening_ended->notify_all();
            stats().fence_timeouts++;
            LOG_ERROR("acquire: dma-buf fd %d: a release's SYNC START for this acquire still waits in the kernel "
                      "after %d ms (a fence came into the dma-buf after the release looked; "
                      "CLDMABUF_FENCE_TIMEOUT_MS)", opening.import_->fd, fence_timeout_ms());
            return CL_OUT_OF_RESOURCES;
        }
        if (opening.state == S::opened_ahead) {
            opening.state = S::done;
            return CL_SUCCESS;
        }
        if (opening.state == S::pending) opening.state = S::opening;
    }
    const cl_int err = open_acquire(*opening.import_);
    std::vector<std::shared_ptr<sync::DmabufSignal>> attach;
    {
        std::lock_guard lock(openings_mutex);
        if (opening.state == S::opening) opening.state = S::done;
        finish_handed(opening, err != CL_SUCCESS, &attach);
    }
    opening_ended->notify_all();
    // The last acquire ahead of each release to open attaches its fence; after a
    // failed one the releases signal theirs: nothing was attached.
    attach_all(attach, opening.import_->fd, "acquire");
    return err;
}

// How long a release waits for an acquire's step that is at its opening
// while no fence is pending: its fence wait and SYNC START return at once,
// so this is a bound, not a delay.  Handing the fence over instead would
// leave a consumer that looks right after the release a moment with no
// fence to wait for (the e2e stress test saw it 2 rounds in 90).
constexpr auto running_step_wait = std::chrono::milliseconds(100);

namespace {

// An opening a release claimed (pending -> opening_ahead, under the lock),
// with its own dup of the acquire's fd: the START outside the lock never
// meets a number the import's teardown closed (and the kernel reused).
struct Claim {
    std::shared_ptr<AcquireOpening> opening;
    int fd = -1;         // the claim's own dup
    int import_fd = -1;  // the import's number, for the log lines
    uint64_t access = 0;
    bool started = false;
};

// Outside openings_mutex: the zero-timeout look at the fences, then SYNC
// START, on each claim's own fd.  A fence that came in since the release's
// check is seen here and leaves the acquire to its step; one that comes in
// between this look and the START makes the START wait in the kernel, with
// no lock held (the acquire's step waits for it, bounded).
void start_claims(std::vector<Claim> *claims) {
    for (Claim &c : *claims) {
        if (dmabuf_wait_idle(c.fd, (c.access & DMABUF_SYNC_WRITE) != 0, 0) != 0) {
            LOG_DEBUG("release: a fence came into dma-buf fd %d after the release looked; its acquire's step "
                      "opens it and attaches the release's fence", c.import_fd);
        } else {
            stats().syncs++;
            const int err = dmabuf_sync(c.fd, DMABUF_SYNC_START | c.access);
            c.started = err == 0;
            if (err != 0)
                LOG_DEBUG("release: opening the acquire of dma-buf fd %d ahead failed (SYNC START: %s); its step "
                          "does it and attaches the release's fence", c.import_fd, std::strerror(-err));
        }
        kernel().close(c.fd);
    }
}

}  // namespace

bool open_ahead_or_hand_over(const Import &import, std::shared_ptr<sync::DmabufSignal> fence) {
    using S = AcquireOpening::State;
    const uint64_t access = import.sync_access_flags();
    // Every opening this release looked at, let go after the lock (declared
    // before it): the last reference may destroy one, which takes the lock.
    std::vector<std::shared_ptr<AcquireOpening>> held;
    std::unique_lock lock(openings_mutex);
    const auto deadline = std::chrono::steady_clock::now() + running_step_wait;
    bool ahead_failed = false;  // one opening ahead did not start: hand over to what is left
    for (;;) {
        // The acquires ahead: of any import of this dma-buf (its fences are one).
        std::vector<std::shared_ptr<AcquireOpening>> ahead;
        auto range = openings->equal_range(dmabuf_key(import));
        for (auto it = range.first; it != range.second; ++it)
            if (auto o = it->second.ref.lock(); o && unopened(*o)) ahead.push_back(std::move(o));
        held.insert(held.end(), ahead.begin(), ahead.end());
        if (ahead.empty()) return true;
        AheadFacts f;
        f.wait_lists_complete = true;
        for (const auto &o : ahead) {
            // Another release at its START counts as a step at its opening.
            f.step_running |= o->state == S::opening || o->state == S::opening_ahead;
            f.wait_lists_complete = f.wait_lists_complete && o->waits_complete();
        }
        f.fence_pending_now = !fences_signalled_now(import, access);  // a zero-timeout poll: no wait
        // A step at its opening with nothing pending is done in a moment: wait for it, then look again.
        if (f.step_running && !f.fence_pending_now &&
            opening_ended->wait_until(lock, deadline) != std::cv_status::timeout)
            continue;
        if (!ahead_failed && plan_acquire_ahead(f) == AcquireAhead::open_ahead) {
            stats().fence_waits++;
            // Claimed under the lock, each with its own fd (dup does not wait):
            // the acquire's step holds its import (keep_alive) until it
            // retires the opening, so the number is still the import's here.
            std::vector<Claim> claims;
            for (auto &o : ahead) {
                const int fd = kernel().dup(o->import_->fd);
                if (fd < 0) {
                    ahead_failed = true;  // left pending: its step opens it
                    continue;
                }
                o->state = S::opening_ahead;
                claims.push_back(Claim{o, fd, o->import_->fd, o->import_->sync_access_flags()});
            }
            lock.unlock();
            start_claims(&claims);
            lock.lock();
            std::vector<std::shared_ptr<sync::DmabufSignal>> attach;
            for (Claim &c : claims) {
                AcquireOpening &o = *c.opening;
                // Retired meanwhile (its step returned, its import went) or
                // given up by its step: nothing to publish.
                if (o.state != S::opening_ahead) continue;
                o.state = c.started ? S::opened_ahead : S::pending;
                ahead_failed = ahead_failed || !c.started;
                // Other releases' fences handed to it while it was claimed.
                if (c.started) finish_handed(o, /*failed=*/false, &attach);
            }
            opening_ended->notify_all();
            if (!attach.empty()) {
                lock.unlock();
                attach_all(attach, import.fd, "release");
                lock.lock();
            }
            if (!ahead_failed)
                LOG_DEBUG("release: opened the %zu pending acquire(s) of dma-buf fd %d ahead (wait lists complete, "
                          "no fence pending), so its fence goes in now", claims.size(), import.fd);
            continue;  // look again: what is left unopened (none, or the failed ones) decides
        }
        auto h = std::make_shared<HandOver>();
        h->fence = std::move(fence);
        h->remaining = ahead.size();
        for (const auto &o : ahead) o->handed.push_back(h);
        return false;
    }
}

}  // namespace cldmabuf
