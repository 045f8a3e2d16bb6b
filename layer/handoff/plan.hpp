// The handoff's choices as pure functions of named facts: which
// way an acquire or release goes, and what a queued release does with its
// fence.  Each fact is asked once at the command's enqueue, those a failure
// changes once more after the marker (layer/handoff/acquire_release.cpp
// gathers them); the functions hold no
// state and call nothing, so tests/unit/test_handoff_plan.cpp walks their
// whole tables.  The invariant behind each fast way is written next to it
// in plan.cpp and in docs/layer-rules.md, "The queue protocol".
#pragma once

#include <cstdint>

namespace cldmabuf {

struct HandoffFacts {
    bool acquire = true;
    bool wait_list = false;          // the command has a wait list
    bool profiled_event = false;     // an event is asked on a profiling queue (the step's timestamps)
    bool queue_failed = false;       // a layer step of the queue failed and clFinish has not reported it
    bool tiled_shadow = false;       // an import is a tiled shadow (the blitter de-/re-tiles it)
    bool slow_transfer = false;      // a copy-route import above the fast limit that is an image or unregistered
    bool large_registered = false;   // a copy-route buffer above the fast limit, registered (layer/handoff/staging)
    bool quiet = false;              // the quiet record matches (layer/queue/quiet.hpp) and no layer step is unfinished
    bool copy_route_only = false;    // every import is on the copy route, none a tiled shadow
    bool written_back = false;       // release: an import the device may have written (its copy is read back)
    bool steps_unfinished = false;   // a layer step of any queue has not finished its work
    bool detached = false;           // an acquire of an import a failed acquire detached (failed_acquire_shield)
};

enum class HandoffWay {
    queued,           // a host step: marker, worker, gate, barrier
    fast_quiet,       // at once, the marker not watched: the queue is known idle
    fast_unwatched,   // at once, the marker not watched: a copy-route acquire, no layer step unfinished
    fast_watched,     // at once if the marker, watched briefly, completes and no fence is pending
    fast_uploaded,    // at once once the imports' uploads completed: a copy-route release with no write-back
};

struct HandoffPlan {
    HandoffWay way = HandoffWay::queued;
    // When the fast way completes: the queue had nothing unfinished at the
    // word read after the command's begin (layer/queue/quiet.hpp).
    bool note_quiet = false;
};

HandoffPlan plan_handoff(const HandoffFacts &facts);

// What a fast way learns once its marker was enqueued and, watched, seen
// complete.  The failure facts are HandoffFacts' two read again then: an
// earlier step of the queue latches its failure and detaches its dma-bufs
// before it opens its gate, so a marker seen complete after it orders them.
struct MarkerFacts {
    bool idle = false;          // the marker completed (or was not watched: the plan knows the answer)
    bool fences_clear = false;  // no fence pending on the imports (a release asks none: true)
    bool queue_failed = false;  // as HandoffFacts::queue_failed, read after the marker
    bool detached = false;      // as HandoffFacts::detached, read after the marker
    bool uploads_done = false;  // fast_uploaded: every upload of the imports completed (waited for, bounded)
};

// A fast way, once its marker was enqueued: whether the command completes
// at once (its syscalls on the caller's thread) or becomes a queued step
// over that marker.
bool completes_fast(HandoffWay way, const MarkerFacts &facts);

// What a queued release does with its fence for one import (layer/handoff/release_fences.hpp).
struct ReleaseFenceFacts {
    bool fences_on = false;          // CLDMABUF_EXPLICIT_FENCES and a fence source (sw_sync or vgem)
    bool read_only = false;          // CL_MEM_READ_ONLY: the device wrote nothing
    bool tiled_shadow = false;       // the re-tile is a blitter execbuffer that would wait for it
    bool refused_before = false;     // the dma-buf refused IMPORT_SYNC_FILE once
    bool earlier_dmabuf_steps = false;  // an unfinished layer step on it waits for the dma-buf's fences
    bool earlier_acquires = false;      // an unfinished acquire on it has not run its opening
};

enum class ReleaseFence {
    none,          // attach nothing: the release behaves as one without explicit fences
    attach_now,    // into the dma-buf at the release's enqueue
    with_acquire,  // an acquire ahead has not run its opening: plan_acquire_ahead decides
};

ReleaseFence plan_release_fence(const ReleaseFenceFacts &facts);

// A release fence and the acquires ahead of it on one import that have not
// run their opening (fence wait + SYNC START; layer/handoff/acquire_opening.hpp).
struct AheadFacts {
    bool step_running = false;         // an acquire's step is at its opening now
    bool wait_lists_complete = false;  // every such acquire's wait list has completed
    bool fence_pending_now = false;    // a fence of the dma-buf is pending (a zero-timeout poll)
};

enum class AcquireAhead {
    open_ahead,  // do their SYNC START now, then attach the fence now (the pipelined fence, at once)
    hand_over,   // the newest acquire attaches it right after its own SYNC START
};

AcquireAhead plan_acquire_ahead(const AheadFacts &facts);

}  // namespace cldmabuf
