#include "layer/handoff/acquire_opening.hpp"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/core/dmabuf_aliases.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/handoff/cpu_access.hpp"
#include "layer/handoff/plan.hpp"
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

    // pending: neither side has begun; opened_ahead: a release did it, the
    // step skips it; opening: the step is at it; done: the step finished it.
    enum class State { pending, opened_ahead, opening, done };
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

// Every opening not yet destroyed, by dma-buf (every import of it: a release
// fence in the dma-buf holds any of their SYNC STARTs).  Leaked on purpose
// (steps may still be destroyed by ICD threads at exit).
std::mutex openings_mutex;
std::condition_variable *opening_ended = new std::condition_variable;  // a step finished its opening
auto *openings = new std::unordered_multimap<DmabufKey, AcquireOpening *, DmabufKeyHash>;

bool unopened(const AcquireOpening &o) {
    return o.state == AcquireOpening::State::pending || o.state == AcquireOpening::State::opening;
}

// One opening of the hand-over finished (under openings_mutex): the fence to
// attach now if it was the last and none failed, else null.
std::shared_ptr<sync::DmabufSignal> finish_hand_over(HandOver &h, bool failed) {
    h.failed = h.failed || failed;
    if (--h.remaining != 0 || h.failed) return nullptr;
    return h.fence;
}

}  // namespace

AcquireOpening::~AcquireOpening() {
    {
        std::lock_guard lock(openings_mutex);
        auto range = openings->equal_range(dmabuf_key(*import_));
        for (auto it = range.first; it != range.second; ++it)
            if (it->second == this) {
                openings->erase(it);
                break;
            }
        // A step dropped without running: the fences handed to it are never
        // attached; their releases signal them, which retires them.
        for (const auto &h : handed) finish_hand_over(*h, /*failed=*/true);
        handed.clear();
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
    std::vector<cl_event> waits(wait_list, wait_list + (wait_list ? num_events : 0));
    for (cl_event e : waits) next().clRetainEvent(e);
    auto opening = std::make_shared<AcquireOpening>(import, std::move(waits));
    std::lock_guard lock(openings_mutex);
    openings->emplace(dmabuf_key(*import), opening.get());
    return opening;
}

cl_int open_in_step(AcquireOpening &opening) {
    {
        std::lock_guard lock(openings_mutex);
        if (opening.state == AcquireOpening::State::opened_ahead) {
            opening.state = AcquireOpening::State::done;
            return CL_SUCCESS;
        }
        opening.state = AcquireOpening::State::opening;
    }
    const cl_int err = open_acquire(*opening.import_);
    std::vector<std::shared_ptr<sync::DmabufSignal>> attach;
    {
        std::lock_guard lock(openings_mutex);
        opening.state = AcquireOpening::State::done;
        for (const auto &h : opening.handed)
            if (auto fence = finish_hand_over(*h, err != CL_SUCCESS)) attach.push_back(std::move(fence));
        opening.handed.clear();
    }
    opening_ended->notify_all();
    // The last acquire ahead of each release to open attaches its fence; after a
    // failed one the releases signal theirs: nothing was attached.
    for (const auto &fence : attach)
        if (int failed = fence->attach(opening.import_->fd); failed < 0)
            LOG_DEBUG("acquire: the release fence handed over did not attach to dma-buf fd %d (%s); its "
                      "consumers see only the earlier fences", opening.import_->fd, std::strerror(-failed));
    return err;
}

// How long a release waits for an acquire's step that is at its opening
// while no fence is pending: its fence wait and SYNC START return at once,
// so this is a bound, not a delay.  Handing the fence over instead would
// leave a consumer that looks right after the release a moment with no
// fence to wait for (the e2e stress test saw it 2 rounds in 90).
constexpr auto running_step_wait = std::chrono::milliseconds(100);

bool open_ahead_or_hand_over(const Import &import, std::shared_ptr<sync::DmabufSignal> fence) {
    const uint64_t access = import.sync_access_flags();
    // Held across the STARTs: they return at once (nothing pending), and the
    // steps must not begin their own meanwhile.
    std::unique_lock lock(openings_mutex);
    const auto deadline = std::chrono::steady_clock::now() + running_step_wait;
    for (;;) {
        // The acquires ahead: of any import of this dma-buf (its fences are one).
        std::vector<AcquireOpening *> ahead;
        auto range = openings->equal_range(dmabuf_key(import));
        for (auto it = range.first; it != range.second; ++it)
            if (unopened(*it->second)) ahead.push_back(it->second);
        if (ahead.empty()) return true;
        AheadFacts f;
        f.wait_lists_complete = true;
        for (const AcquireOpening *o : ahead) {
            f.step_running |= o->state == AcquireOpening::State::opening;
            f.wait_lists_complete = f.wait_lists_complete && o->waits_complete();
        }
        f.fence_pending_now = !fences_signalled_now(import, access);
        // A step at its opening with nothing pending is done in a moment: wait for it, then look again.
        if (f.step_running && !f.fence_pending_now &&
            opening_ended->wait_until(lock, deadline) != std::cv_status::timeout)
            continue;
        if (plan_acquire_ahead(f) == AcquireAhead::open_ahead) {
            stats().fence_waits++;
            // Each acquire's own START (its import's fd and direction): one
            // that fails is left to its step, which then takes the fence.
            std::vector<AcquireOpening *> left;
            for (AcquireOpening *o : ahead) {
                stats().syncs++;
                const Import &own = *o->import_;
                if (int err = dmabuf_sync(own.fd, DMABUF_SYNC_START | own.sync_access_flags()); err == 0) {
                    o->state = AcquireOpening::State::opened_ahead;
                } else {
                    LOG_DEBUG("release: opening the acquire of dma-buf fd %d ahead failed (SYNC START: %s); its "
                              "step does it and attaches the release's fence", own.fd, std::strerror(-err));
                    left.push_back(o);
                }
            }
            if (left.empty()) {
                LOG_DEBUG("release: opened the %zu pending acquire(s) of dma-buf fd %d ahead (wait lists complete, "
                          "no fence pending), so its fence goes in now", ahead.size(), import.fd);
                return true;
            }
            ahead.swap(left);
        }
        auto h = std::make_shared<HandOver>();
        h->fence = std::move(fence);
        h->remaining = ahead.size();
        for (AcquireOpening *o : ahead) o->handed.push_back(h);
        return false;
    }
}

}  // namespace cldmabuf
