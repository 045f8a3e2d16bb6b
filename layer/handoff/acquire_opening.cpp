#include "layer/handoff/acquire_opening.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/core/dmabuf_aliases.hpp"
#include "layer/handoff/dmabuf_state.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/handoff/cpu_access.hpp"
#include "layer/handoff/plan.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/base/owned_fd.hpp"
#include "layer/base/stats.hpp"

namespace cldmabuf {

// A queued acquire's opening: its phase and the fences handed to it are the
// dma-buf's state (layer/handoff/dmabuf_transitions.hpp); this handle is
// what its step holds, and what a release claims to START it ahead.
class AcquireOpening {
public:
    AcquireOpening(std::shared_ptr<Import> import, IcdEvents waits)
        : import_(std::move(import)), waits_(std::move(waits)) {}
    ~AcquireOpening();
    AcquireOpening(const AcquireOpening &) = delete;
    AcquireOpening &operator=(const AcquireOpening &) = delete;

    std::shared_ptr<Import> import_;
    IcdEvents waits_;  // the acquire's wait list
    std::shared_ptr<DmabufRecord> record_;
    DmabufId id_ = 0;
    uint64_t serial_ = 0;  // its name in the commands' records (layer/core/command_dependencies.hpp)
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

using Fences = std::vector<std::shared_ptr<sync::DmabufSignal>>;

void attach_all(const Fences &attach, int fd, const char *what) {
    for (const auto &fence : attach)
        if (int failed = fence->attach(fd); failed < 0)
            LOG_DEBUG("%s: the release fence handed over did not attach to dma-buf fd %d (%s); its consumers see "
                      "only the earlier fences", what, fd, std::strerror(-failed));
}

// Retired: no longer findable; the fences handed to it are abandoned to
// their releases, which signal them.  Idempotent (a retired id is refused).
void retire(AcquireOpening &o) {
    opening_gone(o.serial_);
    std::lock_guard lock(o.record_->mutex);
    o.record_->apply(DmabufEvent{.kind = DmabufEventKind::opening_retired, .opening = o.id_});
}

thread_local OpeningsMadeHere *openings_made_here = nullptr;

}  // namespace

OpeningsMadeHere::OpeningsMadeHere() : outer_(openings_made_here) { openings_made_here = this; }
OpeningsMadeHere::~OpeningsMadeHere() { openings_made_here = outer_; }

AcquireOpening::~AcquireOpening() {
    if (record_) retire(*this);
}

cl_int open_acquire(const Import &import) {
    const uint64_t access = import.sync_access_flags();
    if (cl_int err = wait_acquire_fences(import, access, "acquire"); err != CL_SUCCESS) return err;
    return sync_start(import, access, "acquire");
}

std::shared_ptr<AcquireOpening> make_acquire_opening(const std::shared_ptr<Import> &import, cl_uint num_events,
                                                     const cl_event *wait_list) {
    IcdEvents waits;
    if (wait_list) waits.retain_all({wait_list, num_events});
    auto opening = std::make_shared<AcquireOpening>(import, std::move(waits));
    opening->serial_ = new_opening_serial();
    if (openings_made_here) openings_made_here->add(opening->serial_);
    auto record = dmabuf_record(*import);
    std::lock_guard lock(record->mutex);
    opening->id_ = record->apply(DmabufEvent{.kind = DmabufEventKind::opening_made, .view = view_id(*import)}).made;
    opening->record_ = record;
    record->openings[opening->id_] = opening;
    return opening;
}

void retire_openings(const std::vector<std::shared_ptr<AcquireOpening>> &list) {
    for (const auto &o : list) retire(*o);
}

cl_int open_in_step(AcquireOpening &opening) {
    DmabufRecord &record = *opening.record_;
    const DmabufEvent begins{.kind = DmabufEventKind::step_begins, .opening = opening.id_};
    {
        std::unique_lock lock(record.mutex);
        // A release is at its SYNC START for this acquire: it returns at once
        // unless a fence came in after the release's check, and then the
        // step's own START would wait for that fence too.  Bounded as the
        // step's own fence wait is.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(fence_timeout_ms());
        Fences nested;  // skipped inside an open bracket: the fences handed to it go in now
        DmabufActions a = record.apply(begins, &nested);
        while (a.step == StepAnswer::wait_for_claim) {
            if (record.changed.wait_until(lock, deadline) == std::cv_status::timeout) {
                // The release's START, when it returns, publishes nothing.
                record.apply(DmabufEvent{.kind = DmabufEventKind::step_gave_up, .opening = opening.id_});
                lock.unlock();
                stats().fence_timeouts++;
                LOG_ERROR("acquire: dma-buf fd %d: a release's SYNC START for this acquire still waits in the "
                          "kernel after %d ms (a fence came into the dma-buf after the release looked; "
                          "CLDMABUF_FENCE_TIMEOUT_MS)", opening.import_->fd, fence_timeout_ms());
                return CL_OUT_OF_RESOURCES;
            }
            a = record.apply(begins);
        }
        // Opened ahead by a release, or nested in an open bracket; or
        // retired (its import torn down): the step opens it as one without
        // an opening would.
        if (a.step == StepAnswer::skip) {
            lock.unlock();
            attach_all(nested, opening.import_->fd, "acquire");
            return CL_SUCCESS;
        }
        if (a.step != StepAnswer::open) {
            lock.unlock();
            return open_acquire(*opening.import_);
        }
    }
    const cl_int err = open_acquire(*opening.import_);
    Fences attach;
    {
        std::lock_guard lock(record.mutex);
        record.apply(DmabufEvent{.kind = DmabufEventKind::step_opened, .opening = opening.id_, .ok = err == CL_SUCCESS},
                     &attach);
    }
    // The last acquire ahead of each release to open attaches its fence; after a
    // failed one the releases signal theirs: nothing was attached.
    attach_all(attach, opening.import_->fd, "acquire");
    return err;
}

namespace {

bool waits_for(const MayWaitFor &waits, uint64_t serial) {
    return std::find(waits.openings.begin(), waits.openings.end(), serial) != waits.openings.end();
}

// Under the record's lock: the hand-over `id` of a release that may wait for
// a user event, kept with what the release waits for and its own dup of the
// import's fd (the fence goes in through it once narrowed, whatever became
// of the import).  No dup, no narrowing: the hand-over stays as it is.
void narrow_hand_overs();
void keep_wide(DmabufRecord &record, DmabufId id, const Import &import, const MayWaitFor &waits) {
    static const bool listening = (on_user_event_ended(narrow_hand_overs), true);
    (void)listening;
    const int fd = kernel().dup(import.fd);
    if (fd < 0) return;
    record.wide[id] = std::make_unique<WideHandOver>(waits, fd);
}

// The application ended a user event: each hand-over whose release waited
// for one and now waits only for the layer's own commands keeps only the
// pending acquires it waits for; with none left its fence goes in now.
void narrow_in(DmabufRecord &record) {
    std::vector<std::shared_ptr<AcquireOpening>> held;  // let go after the lock: the last reference retires
    std::vector<std::pair<Fences, std::unique_ptr<WideHandOver>>> attach;
    {
        std::lock_guard lock(record.mutex);
        for (auto it = record.wide.begin(); it != record.wide.end();) {
            if (it->second->waits.everything()) {
                ++it;
                continue;
            }
            DmabufEvent e{.kind = DmabufEventKind::hand_over_narrowed, .depends_on_all = false, .hand_over = it->first};
            for (const auto &o : record.state.openings) {
                if (!unopened(o.phase)) continue;
                auto h = record.openings.find(o.id);
                auto handle = h == record.openings.end() ? nullptr : h->second.lock();
                if (!handle || waits_for(it->second->waits, handle->serial_)) e.depends.push_back(o.id);
                if (handle) held.push_back(std::move(handle));
            }
            std::unique_ptr<WideHandOver> wide = std::move(it->second);
            it = record.wide.erase(it);
            Fences fences;
            record.apply(e, &fences);
            if (!fences.empty()) attach.emplace_back(std::move(fences), std::move(wide));
        }
    }
    for (const auto &[fences, wide] : attach) attach_all(fences, wide->fd, "user event");
}

void narrow_hand_overs() { for_each_dmabuf_record(narrow_in); }

}  // namespace

// A release waits for an acquire's step that is at its opening while no
// fence is pending: its fence wait and SYNC START return at once, so the
// wait is as long as the step's thread takes to be scheduled.  Handing the
// fence over instead leaves a consumer that looks right after the release a
// moment with no fence to wait for, and on a slow or loaded machine (a VM
// under TCG) a thread can wait its turn for longer than any short bound.
// So the bound is the step's own (CLDMABUF_FENCE_TIMEOUT_MS), and
// the release looks again every slice: a fence that comes into the dma-buf
// meanwhile makes the step's wait a real one, and the release hands over.
constexpr auto running_step_look_again = std::chrono::milliseconds(5);

namespace {

// An opening a release claimed (pending -> opening_ahead, under the lock),
// with its own dup of the acquire's fd: the START outside the lock never
// meets a number the import's teardown closed (and the kernel reused).
struct Claim {
    std::shared_ptr<AcquireOpening> opening;
    OwnedFd fd;          // the claim's own dup
    int import_fd = -1;  // the import's number, for the log lines
    uint64_t access = 0;
    bool started = false;
};

// Outside the record's lock: the zero-timeout look at the fences, then SYNC
// START, on each claim's own fd.  A fence that came in since the release's
// check is seen here and leaves the acquire to its step; one that comes in
// between this look and the START makes the START wait in the kernel, with
// no lock held (the acquire's step waits for it, bounded).
void start_claims(std::vector<Claim> *claims) {
    for (Claim &c : *claims) {
        if (dmabuf_wait_idle(c.fd.get(), (c.access & DMABUF_SYNC_WRITE) != 0, 0) != 0) {
            LOG_DEBUG("release: a fence came into dma-buf fd %d after the release looked; its acquire's step "
                      "opens it and attaches the release's fence", c.import_fd);
        } else {
            stats().syncs++;
            const int err = dmabuf_sync(c.fd.get(), DMABUF_SYNC_START | c.access);
            c.started = err == 0;
            if (err != 0)
                LOG_DEBUG("release: opening the acquire of dma-buf fd %d ahead failed (SYNC START: %s); its step "
                          "does it and attaches the release's fence", c.import_fd, std::strerror(-err));
        }
        c.fd.reset();  // here, outside the record's lock
    }
}

}  // namespace

bool open_ahead_or_hand_over(const Import &import, std::shared_ptr<sync::DmabufSignal> fence,
                             const MayWaitFor &waits, bool own_bracket) {
    const ViewId own_view = own_bracket ? view_id(import) : 0;
    const uint64_t access = import.sync_access_flags();
    // Asked before the lock (a status query per event the layer cannot see through).
    const bool everything = waits.everything();
    auto record = dmabuf_record(import);
    // Every opening this release looked at, let go after the lock (declared
    // before it): the last reference may destroy one, which takes the lock.
    std::vector<std::shared_ptr<AcquireOpening>> held;
    std::unique_lock lock(record->mutex);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(fence_timeout_ms());
    bool claim_failed = false;  // one opening this release claimed did not start: hand over to what is left
    for (;;) {
        // The facts the state does not hold: the unopened acquires' wait
        // lists (a status query each) and the dma-buf's fences (a
        // zero-timeout poll): neither waits.
        DmabufEvent look{.kind = DmabufEventKind::release_looks, .view = own_view, .claim_failed = claim_failed};
        look.wait_lists_complete = true;
        look.depends_on_all = everything;
        // The release's own acquire (its view's bracket), for the acquires nested in it.
        const DmabufState::View *view = own_bracket ? record->state.view(own_view) : nullptr;
        std::shared_ptr<AcquireOpening> own;
        if (view && view->bracket)
            if (auto it = record->openings.find(view->bracket); it != record->openings.end()) own = it->second.lock();
        bool ahead = false;
        for (const auto &o : record->state.openings) {
            if (!unopened(o.phase)) continue;
            ahead = true;
            auto it = record->openings.find(o.id);
            auto handle = it == record->openings.end() ? nullptr : it->second.lock();
            // An opening whose handle is going (its step dropped) counts as one the release waits for.
            if (handle && waits_for(waits, handle->serial_)) look.surely_depends.push_back(o.id);
            if (everything || !handle || waits_for(waits, handle->serial_)) {
                look.depends.push_back(o.id);
                look.wait_lists_complete = look.wait_lists_complete && handle && handle->waits_complete();
                if (own && handle && handle != own && opening_waits_for(handle->serial_, own->serial_))
                    look.after_bracket.push_back(o.id);
            }
            if (handle) held.push_back(std::move(handle));
        }
        if (own) held.push_back(std::move(own));
        // With no acquire ahead the state answers attach_now whatever the fences say: not asked.
        look.fence_pending_now = ahead && !fences_signalled_now(import, access);
        look.waited = std::chrono::steady_clock::now() >= deadline;
        const DmabufActions a = record->apply(look);
        switch (a.look) {
        case LookAnswer::none:  // the dma-buf refused a fence: the caller's attach finds out
        case LookAnswer::attach_now: return true;
        case LookAnswer::wait_for_step:
            // A step at its opening with nothing pending is done in a moment: wait for it, then look again.
            record->changed.wait_until(lock,
                                       std::min(deadline, std::chrono::steady_clock::now() + running_step_look_again));
            continue;
        case LookAnswer::hand_over:
            if (look.waited)
                LOG_DEBUG("release: an acquire of dma-buf fd %d stayed at its opening for %d ms with no fence "
                          "pending; its release fence is handed to it (CLDMABUF_FENCE_TIMEOUT_MS)",
                          import.fd, fence_timeout_ms());
            record->fences[a.made] = std::move(fence);
            // Waiting for a user event (not for a command the layer cannot see
            // into): narrowed once the application ended it.
            if (everything && !waits.opaque) keep_wide(*record, a.made, import, waits);
            return false;
        case LookAnswer::claim: break;
        }
        stats().fence_waits++;
        // Claimed under the lock, each with its own fd (dup does not wait):
        // the acquire's step holds its import (keep_alive) until it retires
        // the opening, so the number is still the import's here.
        std::vector<Claim> claims;
        Fences attach;
        for (DmabufId id : a.claim) {
            auto it = record->openings.find(id);
            auto o = it == record->openings.end() ? nullptr : it->second.lock();
            OwnedFd fd(o ? kernel().dup(o->import_->fd) : -1);
            if (!fd) {  // left pending: its step opens it
                record->apply(DmabufEvent{.kind = DmabufEventKind::claim_published, .opening = id, .ok = false});
                claim_failed = true;
                continue;
            }
            claims.push_back(Claim{o, std::move(fd), o->import_->fd, o->import_->sync_access_flags()});
        }
        lock.unlock();
        start_claims(&claims);
        lock.lock();
        for (Claim &c : claims) {
            // Retired meanwhile (its step returned, its import went) or given
            // up by its step: the state refuses the publication.  Other
            // releases' fences handed to it while it was claimed come back to attach.
            record->apply(
                DmabufEvent{.kind = DmabufEventKind::claim_published, .opening = c.opening->id_, .ok = c.started},
                &attach);
            claim_failed = claim_failed || !c.started;
        }
        if (!attach.empty()) {
            lock.unlock();
            attach_all(attach, import.fd, "release");
            lock.lock();
        }
        if (!claim_failed)
            LOG_DEBUG("release: opened the %zu pending acquire(s) of dma-buf fd %d ahead (wait lists complete, "
                      "no fence pending), so its fence goes in now", claims.size(), import.fd);
        for (Claim &c : claims) held.push_back(std::move(c.opening));
        // Look again: what is left unopened (none, or the failed ones) decides.
    }
}

}  // namespace cldmabuf
