// The handoff's choices (layer/handoff/plan.hpp) over their whole tables:
// every combination of the facts, checked against the rules as the docs
// state them (docs/layer-rules.md, "The queue protocol"), plus the rows a
// reader would look for first.
#include <catch2/catch_test_macros.hpp>

#include "layer/handoff/plan.hpp"

using namespace cldmabuf;

namespace {

HandoffFacts facts_from_bits(unsigned bits) {
    HandoffFacts f;
    f.acquire = bits & 1;
    f.wait_list = bits & 2;
    f.profiled_event = bits & 4;
    f.queue_failed = bits & 8;
    f.tiled_shadow = bits & 16;
    f.slow_transfer = bits & 32;
    f.large_registered = bits & 64;
    f.quiet = bits & 128;
    f.copy_route_only = bits & 256;
    f.steps_unfinished = bits & 512;
    f.detached = bits & 1024;
    f.written_back = bits & 2048;
    return f;
}

}  // namespace

TEST_CASE("handoff plan: every combination of the facts", "[handoff-plan]") {
    int fast = 0, quiet = 0, unwatched = 0, uploaded = 0;
    for (unsigned bits = 0; bits < 4096; ++bits) {
        const HandoffFacts f = facts_from_bits(bits);
        const HandoffPlan p = plan_handoff(f);
        INFO("facts bits " << bits);
        // Something the caller's thread must not wait for or cannot do: queued.
        const bool must_queue = f.wait_list || f.profiled_event || f.queue_failed || f.tiled_shadow ||
                                f.slow_transfer || f.detached || (f.large_registered && !f.acquire && !f.quiet);
        CHECK((p.way == HandoffWay::queued) == must_queue);
        if (must_queue) {
            CHECK_FALSE(p.note_quiet);
            continue;
        }
        ++fast;
        // The marker goes unasked only on the quiet queue, or for a copy-route
        // acquire while no layer step is unfinished.
        CHECK((p.way == HandoffWay::fast_quiet) == f.quiet);
        const bool copy_acquire = !f.quiet && f.acquire && f.copy_route_only && !f.steps_unfinished;
        CHECK((p.way == HandoffWay::fast_unwatched) == copy_acquire);
        // A copy-route release with nothing to write back waits for the
        // uploads, not the marker, while no layer step is unfinished.
        const bool upload_release =
            !f.quiet && !f.acquire && f.copy_route_only && !f.written_back && !f.steps_unfinished;
        CHECK((p.way == HandoffWay::fast_uploaded) == upload_release);
        CHECK((p.way == HandoffWay::fast_watched) == (!f.quiet && !copy_acquire && !upload_release));
        // The queue is noted idle only when it was known idle (quiet, or the marker said so).
        CHECK(p.note_quiet == (p.way == HandoffWay::fast_quiet || p.way == HandoffWay::fast_watched));
        quiet += p.way == HandoffWay::fast_quiet;
        unwatched += p.way == HandoffWay::fast_unwatched;
        uploaded += p.way == HandoffWay::fast_uploaded;
    }
    CHECK(fast > 0);
    CHECK(quiet > 0);
    CHECK(unwatched > 0);
    CHECK(uploaded > 0);
}

TEST_CASE("handoff plan: the rows that matter", "[handoff-plan]") {
    HandoffFacts f;  // an acquire, no wait list, nothing known
    CHECK(plan_handoff(f).way == HandoffWay::fast_watched);
    f.quiet = true;
    CHECK(plan_handoff(f).way == HandoffWay::fast_quiet);
    f.wait_list = true;  // a user event may hold it: never on the caller's thread
    CHECK(plan_handoff(f).way == HandoffWay::queued);
    HandoffFacts release;
    release.acquire = false;
    release.copy_route_only = true;  // nothing to write back: its uploads are all it waits for
    CHECK(plan_handoff(release).way == HandoffWay::fast_uploaded);
    release.steps_unfinished = true;  // an earlier step's SYNC START or upload may not have run
    CHECK(plan_handoff(release).way == HandoffWay::fast_watched);
    release.steps_unfinished = false;
    release.written_back = true;  // a copy-route release that reads back still asks its marker
    CHECK(plan_handoff(release).way == HandoffWay::fast_watched);
    release.large_registered = true;  // its Read would hold the caller behind a running queue
    CHECK(plan_handoff(release).way == HandoffWay::queued);
    release.quiet = true;  // ... unless the Read is all there is to wait for
    CHECK(plan_handoff(release).way == HandoffWay::fast_quiet);
}

TEST_CASE("handoff plan: a fast way completes only with its marker idle (or known idle), no fence pending and no "
          "failure read after the marker",
          "[handoff-plan]") {
    const HandoffWay ways[] = {HandoffWay::queued, HandoffWay::fast_quiet, HandoffWay::fast_unwatched,
                               HandoffWay::fast_watched, HandoffWay::fast_uploaded};
    int fast = 0;
    for (HandoffWay way : ways)
        for (unsigned bits = 0; bits < 32; ++bits) {
            MarkerFacts m{bool(bits & 1), bool(bits & 2), bool(bits & 4), bool(bits & 8)};
            m.uploads_done = bits & 16;
            INFO("way " << int(way) << ", marker facts bits " << bits);
            const bool fast_way = way != HandoffWay::queued;
            // quiet, unwatched: idle by the plan; uploaded: its uploads, not the marker
            const bool marker_ok = way == HandoffWay::fast_watched    ? m.idle
                                   : way == HandoffWay::fast_uploaded ? m.uploads_done
                                                                      : true;
            // A failure latched, or an import detached, while the marker was
            // watched: the queued step reports it.
            const bool failed = m.queue_failed || m.detached;
            CHECK(completes_fast(way, m) == (fast_way && marker_ok && m.fences_clear && !failed));
            fast += completes_fast(way, m);
        }
    // quiet and unwatched whatever the marker said (4 each), watched with it idle (2), uploaded with its uploads done (2)
    CHECK(fast == 12);
    // The row the failure fact exists for: the marker idle, nothing pending, a failure latched meanwhile.
    CHECK_FALSE(completes_fast(HandoffWay::fast_watched, MarkerFacts{true, true, true, false}));
    CHECK_FALSE(completes_fast(HandoffWay::fast_quiet, MarkerFacts{true, true, false, true}));
}

TEST_CASE("release fence plan: every combination; never attached while an acquire ahead has not run",
          "[handoff-plan]") {
    for (unsigned bits = 0; bits < 64; ++bits) {
        ReleaseFenceFacts f;
        f.fences_on = bits & 1;
        f.read_only = bits & 2;
        f.tiled_shadow = bits & 4;
        f.refused_before = bits & 8;
        f.earlier_dmabuf_steps = bits & 16;
        f.earlier_acquires = bits & 32;
        INFO("facts bits " << bits);
        const ReleaseFence r = plan_release_fence(f);
        const bool none = !f.fences_on || f.read_only || f.tiled_shadow || f.refused_before || f.earlier_dmabuf_steps;
        CHECK((r == ReleaseFence::none) == none);
        if (!none) CHECK(r == (f.earlier_acquires ? ReleaseFence::with_acquire : ReleaseFence::attach_now));
        if (f.earlier_acquires) CHECK(r != ReleaseFence::attach_now);  // issue #28 item 2
    }
}

TEST_CASE("acquire-ahead plan: opened ahead only with its wait list complete and no fence pending",
          "[handoff-plan]") {
    int ahead = 0;
    for (unsigned bits = 0; bits < 8; ++bits) {
        AheadFacts f;
        f.step_running = bits & 1;
        f.wait_lists_complete = bits & 2;
        f.fence_pending_now = bits & 4;
        INFO("facts bits " << bits);
        const bool safe = !f.step_running && f.wait_lists_complete && !f.fence_pending_now;
        CHECK((plan_acquire_ahead(f) == AcquireAhead::open_ahead) == safe);
        ahead += safe;
    }
    CHECK(ahead == 1);
    // Issue #28 item 2: the acquire held by a user event that a fence-honouring producer completes.
    AheadFacts held;
    held.wait_lists_complete = false;
    CHECK(plan_acquire_ahead(held) == AcquireAhead::hand_over);
}
