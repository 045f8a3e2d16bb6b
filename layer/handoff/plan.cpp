#include "layer/handoff/plan.hpp"

namespace cldmabuf {

HandoffPlan plan_handoff(const HandoffFacts &f) {
    // Queued whenever there is something the caller's thread must not wait
    // for or cannot do: a wait list (its events may be user events), a
    // blitter de-/re-tile, a transfer too large to hold the caller for, a
    // failure the queue owes (the step carries its semantics), a profiling
    // event (the step's own timestamps).
    // (And an import a failed acquire detached: the step maps it again once
    // the queues behind the failure are drained.)
    if (f.wait_list || f.tiled_shadow || f.slow_transfer || f.queue_failed || f.profiled_event || f.detached)
        return {};
    // A large registered release holds the caller for its Read: only when
    // that Read is all there is to wait for (the quiet queue).
    if (f.large_registered && !f.acquire && !f.quiet) return {};
    // Fast, quiet.  Invariant: no application command began or ended since
    // the queue was last seen idle (the word, layer/queue/epoch.hpp) and no
    // layer step is unfinished, so every earlier command of the queue is
    // complete: the marker need not be asked.
    if (f.quiet) return {HandoffWay::fast_quiet, true};
    // Fast, uploaded (a copy-route release with nothing to write back).
    // Invariant: the device read only its own copy; the dma-buf's pages
    // were read by the imports' uploads alone, so SYNC END follows them,
    // not the kernels behind them, and no layer step is unfinished (an
    // earlier step's SYNC START or in-step upload is done).  The release's
    // event is its marker, after every earlier command.  The queue is not
    // known idle, so nothing is noted.
    if (!f.acquire && f.copy_route_only && !f.written_back && !f.steps_unfinished)
        return {HandoffWay::fast_uploaded, false};
    // Fast, unwatched (copy-route acquire).  Invariant: the device reads only
    // its own copy, refreshed by the ICD's Write, which runs in queue order
    // after every earlier command; what must come before the SYNC START are
    // the layer's own earlier steps, and none is unfinished.  The queue is
    // not known idle, so nothing is noted.
    if (f.acquire && f.copy_route_only && !f.steps_unfinished) return {HandoffWay::fast_unwatched, false};
    // Fast if the marker says so.  Invariant: the marker completes only after
    // every earlier command of the queue.
    return {HandoffWay::fast_watched, true};
}

bool completes_fast(HandoffWay way, const MarkerFacts &m) {
    // Invariant: a fast way completes only with no failure latched on its
    // queue and no import detached, as read after the marker.  A failure
    // latched while the marker was watched (or between the plan's reads and
    // the marker) is the queued step's to report; the command would
    // otherwise succeed, its kernels run on detached pages and its release
    // write nothing back.
    if (m.queue_failed || m.detached) return false;
    switch (way) {
    case HandoffWay::queued: return false;
    case HandoffWay::fast_quiet:
    case HandoffWay::fast_unwatched: return m.fences_clear;  // the marker is idle by the plan's invariant
    case HandoffWay::fast_watched: return m.idle && m.fences_clear;
    case HandoffWay::fast_uploaded: return m.uploads_done && m.fences_clear;
    }
    return false;
}

ReleaseFence plan_release_fence(const ReleaseFenceFacts &f) {
    if (!f.fences_on || f.read_only || f.tiled_shadow || f.refused_before) return ReleaseFence::none;
    // A map, a blitter copy, a tiled shadow's step or an acquire without an
    // opening would wait for the fence when it runs: until the timeout.
    if (f.earlier_dmabuf_steps) return ReleaseFence::none;
    if (f.earlier_acquires) return ReleaseFence::with_acquire;
    return ReleaseFence::attach_now;
}

AcquireAhead plan_acquire_ahead(const AheadFacts &f) {
    // Invariant: a release fence is in the dma-buf before
    // the acquire ahead of it ran only if that acquire's SYNC START is done
    // (else the START would wait for the fence: a cycle), and the START is
    // done ahead only when every event of that acquire's wait list has
    // completed and no fence of the dma-buf is pending: the START then
    // returns at once, after every producer's write, and a producer that
    // completes the acquire's user event (honouring implicit sync, as Mesa
    // does) never finds the release's fence in its way.  What is left out:
    // an acquire held only by an earlier command of its queue that waits for
    // such a producer of the same dma-buf (the layer does not read the wait
    // lists of the commands it passes through); docs/layer-rules.md.
    if (f.step_running || !f.wait_lists_complete || f.fence_pending_now)
        return AcquireAhead::hand_over;
    return AcquireAhead::open_ahead;
}

}  // namespace cldmabuf
