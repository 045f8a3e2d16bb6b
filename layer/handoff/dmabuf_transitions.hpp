// What the handoff knows about one dma-buf, and what each event does to it,
// as one pure function: (state, event) -> (state, actions).  No OpenCL, no
// kernel call, no lock: layer/handoff/dmabuf_state.hpp keeps one
// DmabufState per dma-buf under that dma-buf's own lock and carries the
// actions out (a snapshot, a SYNC START ahead, a fence attached), outside the
// lock where they can wait in the kernel.  tests/unit/test_dmabuf_transitions.cpp
// walks the whole table: every reachable state of two imports and two
// openings or hand-overs, every event, the invariants after each.
//
// Why one state for the dma-buf and not one per import: two imports of one
// dma-buf are one memory and one reservation object.  A release fence that
// one import's release puts in holds every import's SYNC START; the bytes one
// import's release writes back are what the other's device copy was
// uploaded from.  So the acquires ahead of a release (openings), the fences
// handed to them, and each import's copy cycle (held, snapshot kept) are read
// and written together, in one place.
//
// The parts:
// - views: the imports of the dma-buf the handoff has met, each with its
//   copy cycle (layer/handoff/copy_cycle.hpp): its last acquire ran and its
//   release has not (held), and whether a snapshot of what it uploaded is
//   kept (armed).  A view goes with its import's teardown.
// - openings: queued acquires of any view that have not finished their
//   fence wait and SYNC START (layer/handoff/acquire_opening.hpp), each in
//   one phase; a retired opening is removed.
// - hand-overs: release fences given to the acquires ahead of their release
//   that had not opened, attached by the last of them to open, never if one
//   of them failed or was retired.  Only the acquires the release depends on
//   (the facts of release_looks) take its fence, and those at their SYNC
//   START at that moment; every other unopened acquire waits for the fence
//   attached at once (docs/layer-rules.md, "One state per dma-buf": where a
//   release's fence may go).
// - fence_refused: the dma-buf refused IMPORT_SYNC_FILE once; no release
//   fence is tried again.
// - fence_wait: how an acquire waits for the dma-buf's fences, learned at
//   the first wait that decides it (an exported sync_file, or the poll where
//   the kernel has no DMA_BUF_IOCTL_EXPORT_SYNC_FILE); the first answer stays.
#pragma once

#include <cstdint>
#include <vector>

#include "layer/handoff/copy_cycle.hpp"

namespace cldmabuf {

// How an acquire waits for the dma-buf's fences (layer/handoff/cpu_access.hpp).
enum class FenceWait { unknown, sync_file, poll };

using ViewId = uint64_t;  // an import of the dma-buf (its address in the layer)
using DmabufId = uint32_t;  // an opening or a hand-over, unique within its dma-buf

enum class OpeningPhase {
    pending,        // neither its step nor a release has begun
    opening_ahead,  // a release claimed it and is at its fence look and SYNC START, outside the lock
    opened_ahead,   // that release did it; the step skips it (as it skips a nested one)
    opening,        // its step is at it
    done,           // its step finished it (or gave up waiting for the release's claim)
};
bool unopened(OpeningPhase phase);  // pending, opening_ahead or opening: a fence attached now would hold it

struct DmabufState {
    struct View {
        ViewId id = 0;
        bool both_ways = false;  // copy route, uploaded and written back: it keeps snapshots when aliased
        CycleState cycle;
        // Its latest opening whose release has not looked yet: the bracket
        // that release closes (0: none, or its release looked).
        // An id no opening has any more: that opening did its SYNC START and
        // retired (its step returned), and the bracket is still open
        // (DmabufState::retired_open); one that failed or retired unopened
        // clears it.
        DmabufId bracket = 0;
        bool operator==(const View &o) const = default;
    };
    struct Opening {
        DmabufId id = 0;
        ViewId view = 0;
        OpeningPhase phase = OpeningPhase::pending;
        std::vector<DmabufId> handed;  // hand-overs it is one of the acquires ahead of
        bool started = false;          // its SYNC START was done (by its step or ahead)
        // Nested in another view's open bracket (that opening's id): its
        // acquire waits for that opening and a release that closes that
        // bracket waits for it, so when it runs the dma-buf is in an open
        // CPU-access bracket with the fences that release put there; it skips
        // its fence wait and SYNC START once the outer one started.
        DmabufId nested_in = 0;
        bool outer_open = false;  // the opening it is nested in started
        bool operator==(const Opening &o) const = default;
    };
    struct HandOver {
        DmabufId id = 0;
        uint32_t remaining = 0;  // openings still to finish
        bool failed = false;     // one of them failed or was retired: never attached
        bool operator==(const HandOver &o) const = default;
    };
    std::vector<View> views;
    std::vector<Opening> openings;
    std::vector<HandOver> hand_overs;
    bool fence_refused = false;
    FenceWait fence_wait = FenceWait::unknown;
    DmabufId next_id = 1;
    bool operator==(const DmabufState &o) const = default;

    const View *view(ViewId id) const;
    // `v`'s bracket is open while its opening has retired after its START.
    bool retired_open(const View &v) const { return v.bracket != 0 && !opening(v.bracket); }
    const Opening *opening(DmabufId id) const;
};

enum class DmabufEventKind {
    view_met,         // the handoff meets `view` (both_ways given); nothing if known
    view_gone,        // `view`'s teardown: its view goes, its openings retire
    alias_appeared,   // another import of the dma-buf was made: every other held view keeps its snapshot now
    acquire_ran,      // `view`'s acquire uploaded (copy route, both ways); `aliased`: another live import
    release_decided,  // `view`'s release is enqueued: where its Read goes (answer: write_back)
    release_ran,      // `view`'s release finished (`decided`, `ok`): answer finish
    opening_made,     // an acquire step of `view` is enqueued: answer opening (its id)
    opening_retired,  // `opening`'s step returned or was dropped: it is no longer findable
    step_begins,      // `opening`'s step is at it: answer step
    step_gave_up,     // `opening`'s step waited for a release's claim past the bound
    step_opened,      // `opening`'s step did its fence wait and SYNC START (`ok`)
    release_looks,    // a release with a fence looks at the acquires ahead: answer look
    hand_over_narrowed,  // `hand_over`'s release depends now only on `depends` (a user event it waited for ended)
    claim_published,  // a release's SYNC START ahead for `opening` returned (`ok`: it started)
    fence_refused,    // the dma-buf refused IMPORT_SYNC_FILE
    fence_wait_learned,  // a fence wait decided the way (`ok`: an exported sync_file; else the poll)
};

struct DmabufEvent {
    DmabufEventKind kind = DmabufEventKind::view_met;
    ViewId view = 0;
    DmabufId opening = 0;
    bool both_ways = false;  // view_met
    bool aliased = false;    // acquire_ran, release_decided: another live import of the dma-buf now
    bool ok = true;          // release_ran, step_opened, claim_published, fence_wait_learned
    WriteBack decided = WriteBack::direct;  // release_ran
    // release_looks: facts the release read outside the state.
    bool wait_lists_complete = false;  // every unopened acquire's wait list completed
    bool fence_pending_now = false;    // a fence of the dma-buf is pending (a zero-timeout poll)
    bool waited = false;               // the release's bounded wait for a running step is over
    bool claim_failed = false;         // an opening this release claimed did not start: hand over now
    // release_looks, hand_over_narrowed: the unopened acquires the release
    // may depend on (wait for, through its wait list's closure or its
    // in-order queue).  depends_on_all: it may wait for something the layer
    // cannot see (a user event, an event it did not make), which another
    // thread or a callback may end after any acquire: every one counts.
    bool depends_on_all = true;
    std::vector<DmabufId> depends = {};
    DmabufId hand_over = 0;  // hand_over_narrowed
    // release_looks: `view` is the releasing import (its bracket is the one
    // this release closes; 0: none); `after_bracket` the openings whose
    // acquire waits for that bracket's opening.
    std::vector<DmabufId> after_bracket = {};
    // release_looks: the unopened acquires the release surely waits for
    // (those of `depends` the layer saw in its wait lists' closure or ahead
    // on its in-order queue), whether or not depends_on_all.  Only these
    // nest in its bracket: an acquire that skipped its START must run
    // before the release's END.
    std::vector<DmabufId> surely_depends = {};
};

enum class StepAnswer { none, open, skip, wait_for_claim };
enum class LookAnswer { none, attach_now, wait_for_step, claim, hand_over };

struct DmabufActions {
    // The views whose bytes are kept now (they are what their acquire uploaded).
    std::vector<ViewId> snapshot;
    // Hand-overs complete (or narrowed to no acquire): their fence goes into the dma-buf now.
    std::vector<DmabufId> attach;
    // Hand-overs that never attach (an opening failed or retired): their
    // release signals the fence; the state forgets it.
    std::vector<DmabufId> abandon;
    // Openings a release claimed (pending -> opening_ahead): it does their
    // SYNC START outside the lock, then publishes each (claim_published).
    std::vector<DmabufId> claim;
    StepAnswer step = StepAnswer::none;
    LookAnswer look = LookAnswer::none;
    WriteBack write_back = WriteBack::direct;
    Finish finish = Finish::nothing;
    DmabufId made = 0;          // opening_made: the opening; release_looks + hand_over: the hand-over
    bool wake = false;          // an opening left opening or opening_ahead: waiters look again
    bool refused = false;       // the event does not apply to this state (unknown id, wrong phase): nothing changed
};

struct DmabufTransition {
    DmabufState next;
    DmabufActions actions;
};

DmabufTransition dmabuf_step(const DmabufState &state, const DmabufEvent &event);

}  // namespace cldmabuf
