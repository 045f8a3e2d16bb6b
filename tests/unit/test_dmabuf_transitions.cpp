// The whole table of one dma-buf's state (layer/handoff/dmabuf_transitions.hpp):
// every state reachable from the empty one with up to two imports (views),
// and up to two openings and hand-overs together, times every event — each
// kind with every id it can name (known ones and one never made) and every
// combination of its facts — with the invariants checked after each
// transition.  The names below (I1 ...) are the ones docs/layer-rules.md,
// "The queue protocol", lists.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "layer/handoff/dmabuf_transitions.hpp"

using namespace cldmabuf;

// Millions of checks: Catch2's REQUIRE (which reports the expression) only on a failure.
#define ENSURE(...)                          \
    do {                                     \
        if (!(__VA_ARGS__)) REQUIRE(__VA_ARGS__); \
    } while (0)

namespace {

using K = DmabufEventKind;
using P = OpeningPhase;

constexpr DmabufId id_bound = 3;  // successors with next_id above this are not explored further
constexpr ViewId views_named[] = {1, 2, 3};  // 3 is never met: events naming it must be refused

std::string key_of(const DmabufState &s) {
    std::string k;
    auto put = [&k](uint64_t v) { k += std::to_string(v) + ","; };
    for (const auto &v : s.views) {
        put(v.id), put(v.both_ways), put(v.cycle.held), put(v.cycle.armed), put(v.bracket);
    }
    k += "|";
    for (const auto &o : s.openings) {
        put(o.id), put(o.view), put(static_cast<int>(o.phase)), put(o.started), put(o.nested_in), put(o.outer_open);
        for (DmabufId h : o.handed) put(h);
        k += ";";
    }
    k += "|";
    for (const auto &h : s.hand_overs) put(h.id), put(h.remaining), put(h.failed);
    put(s.fence_refused), put(static_cast<int>(s.fence_wait)), put(s.next_id);
    return k;
}

std::vector<DmabufEvent> events_for(const DmabufState &s) {
    std::vector<DmabufEvent> out;
    const bool bools[] = {false, true};
    for (ViewId v : views_named) {
        for (bool b : bools) out.push_back({.kind = K::view_met, .view = v, .both_ways = b});
        out.push_back({.kind = K::view_gone, .view = v});
        out.push_back({.kind = K::alias_appeared, .view = v});
        for (bool b : bools) {
            out.push_back({.kind = K::acquire_ran, .view = v, .aliased = b});
            out.push_back({.kind = K::release_decided, .view = v, .aliased = b});
            for (bool ok : bools)
                for (WriteBack d : {WriteBack::direct, WriteBack::scratch})
                    out.push_back({.kind = K::release_ran, .view = v, .ok = ok, .decided = d});
        }
        out.push_back({.kind = K::opening_made, .view = v});
    }
    for (DmabufId id = 1; id <= s.next_id; ++id) {  // next_id: never made yet
        out.push_back({.kind = K::opening_retired, .opening = id});
        out.push_back({.kind = K::step_begins, .opening = id});
        out.push_back({.kind = K::step_gave_up, .opening = id});
        for (bool ok : bools) {
            out.push_back({.kind = K::step_opened, .opening = id, .ok = ok});
            out.push_back({.kind = K::claim_published, .opening = id, .ok = ok});
        }
    }
    // The acquires a release may depend on: all of them (it waits for
    // something the layer cannot see), or each subset of the state's
    // openings, and one naming an id never made.
    std::vector<DmabufId> made;
    for (const auto &o : s.openings) made.push_back(o.id);
    std::vector<std::pair<bool, std::vector<DmabufId>>> depends{{true, {}}, {false, {s.next_id}}};
    for (size_t bits = 0; bits < (size_t{1} << made.size()); ++bits) {
        std::vector<DmabufId> ids;
        for (size_t i = 0; i < made.size(); ++i)
            if (bits & (size_t{1} << i)) ids.push_back(made[i]);
        depends.push_back({false, ids});
    }
    for (const auto &[all, ids] : depends) {
        for (int m = 0; m < 16; ++m) {
            DmabufEvent e{.kind = K::release_looks};
            e.wait_lists_complete = m & 1;
            e.fence_pending_now = m & 2;
            e.waited = m & 4;
            e.claim_failed = m & 8;
            e.depends_on_all = all;
            e.depends = ids;
            out.push_back(e);
        }
        for (const auto &h : s.hand_overs)
            out.push_back({.kind = K::hand_over_narrowed, .depends_on_all = all, .depends = ids, .hand_over = h.id});
        // A release of each view whose own acquire (the view's bracket) the
        // acquires `ids` wait for, waiting for every opening.
        for (const auto &v : s.views)
            for (bool complete : bools) {
                if (all || !v.bracket) continue;
                DmabufEvent e{.kind = K::release_looks, .view = v.id};
                e.wait_lists_complete = complete;  // claims, or hand-overs
                e.depends_on_all = false;
                e.depends = made;
                e.after_bracket = ids;
                // It surely waits for every opening; where its own acquire
                // retired, for the openings `ids` alone.
                e.surely_depends = s.retired_open(v) ? ids : made;
                out.push_back(e);
            }
        out.push_back({.kind = K::hand_over_narrowed, .depends_on_all = all, .depends = ids, .hand_over = s.next_id});
    }
    out.push_back({.kind = K::fence_refused});
    for (bool ok : bools) out.push_back({.kind = K::fence_wait_learned, .ok = ok});
    return out;
}

const DmabufState::HandOver *hand_over(const DmabufState &s, DmabufId id) {
    for (const auto &h : s.hand_overs)
        if (h.id == id) return &h;
    return nullptr;
}

bool contains(const std::vector<DmabufId> &v, DmabufId id) { return std::find(v.begin(), v.end(), id) != v.end(); }

// Whether a release that looks with `e`'s facts may wait for `o`.
bool depended_on(const DmabufEvent &e, const DmabufState::Opening &o) {
    return e.depends_on_all || contains(e.depends, o.id);
}

bool busy(OpeningPhase p) { return p == P::opening || p == P::opening_ahead; }

bool no_actions(const DmabufActions &a) {
    return a.snapshot.empty() && a.attach.empty() && a.abandon.empty() && a.claim.empty() &&
           a.step == StepAnswer::none && a.look == LookAnswer::none && a.finish == Finish::nothing &&
           a.made == 0 && !a.wake;
}

// The state's own bookkeeping (I1, I2, I3, I4).
void check_state(const DmabufState &s) {
    std::set<uint64_t> ids;
    for (const auto &v : s.views) {
        ENSURE(ids.insert(v.id).second);
        ENSURE((!v.cycle.armed || (v.cycle.held && v.both_ways)));  // I3
    }
    std::set<DmabufId> made;
    for (const auto &o : s.openings) {
        ENSURE(made.insert(o.id).second);
        ENSURE(o.id < s.next_id);
        ENSURE(s.view(o.view) != nullptr);                    // I4: an opening lives only with its import
        ENSURE((o.handed.empty() || unopened(o.phase)));     // I2: fences wait only on unopened acquires
        for (DmabufId h : o.handed) ENSURE(hand_over(s, h) != nullptr);
    }
    for (const auto &h : s.hand_overs) {  // I1: a fence waits for exactly the openings it was handed to
        ENSURE(made.insert(h.id).second);
        size_t listing = 0;
        for (const auto &o : s.openings) listing += contains(o.handed, h.id);
        ENSURE(h.remaining >= 1);
        ENSURE(h.remaining == listing);
    }
}

// What one transition may do (I5 ... I17).
void check_transition(const DmabufState &prev, const DmabufEvent &e, const DmabufTransition &t) {
    const DmabufState &next = t.next;
    const DmabufActions &a = t.actions;
    check_state(next);
    if (a.refused) {  // I5: a refused event changes nothing and does nothing
        ENSURE(next == prev);
        ENSURE(no_actions(a));
        return;
    }
    // I6: every fence handed over ends exactly once, attached or abandoned.
    for (const auto &h : prev.hand_overs) {
        const bool gone = hand_over(next, h.id) == nullptr;
        ENSURE(gone == (contains(a.attach, h.id) + contains(a.abandon, h.id) == 1));
    }
    for (DmabufId h : a.attach) ENSURE(hand_over(prev, h));
    for (DmabufId h : a.abandon) ENSURE(hand_over(prev, h));
    // I7: a fence goes in only as the last of its acquires ahead did its
    // SYNC START (never while one of them has not, never after one failed).
    // Or when its release was found to depend on none of those still
    // pending (I16).
    for (DmabufId h : a.attach) {
        ENSURE(!hand_over(prev, h)->failed);
        if (e.kind == K::hand_over_narrowed) {
            ENSURE(h == e.hand_over);
            for (const auto &o : prev.openings)
                if (contains(o.handed, h)) ENSURE((o.phase == P::pending && !depended_on(e, o)));
            continue;
        }
        ENSURE(hand_over(prev, h)->remaining == 1);
        ENSURE(e.ok);
        ENSURE((e.kind == K::step_opened || e.kind == K::claim_published ||
                (e.kind == K::step_begins && a.step == StepAnswer::skip)));
        ENSURE(contains(prev.opening(e.opening)->handed, h));
    }
    // I16: narrowing takes out of a hand-over only pending acquires its
    // release does not depend on; nothing else leaves it.
    if (e.kind == K::hand_over_narrowed)
        for (const auto &o : prev.openings) {
            const auto *after = next.opening(o.id);
            ENSURE(after != nullptr);
            ENSURE(after->phase == o.phase);
            for (DmabufId h : o.handed)
                if (!contains(after->handed, h))
                    ENSURE((h == e.hand_over && o.phase == P::pending && !depended_on(e, o)));
        }
    bool any_unopened = false, step_running = false;
    for (const auto &o : prev.openings) {
        any_unopened |= unopened(o.phase);
        step_running |= o.phase == P::opening || o.phase == P::opening_ahead;
    }
    // I8: a release attaches at once only with no unopened acquire of the
    // dma-buf that it may depend on, and none at its SYNC START; its fence
    // is handed to exactly those (every other unopened acquire waits for it
    // in the dma-buf).
    // Except those nested in the release's own bracket (I17).
    auto nested_here = [&](const DmabufState::Opening &o) {
        const auto *after = next.opening(o.id);
        const auto *v = prev.view(e.view);
        if (!after || after->nested_in == 0 || !v || after->nested_in != v->bracket || o.phase != P::pending ||
            !contains(e.surely_depends, o.id))
            return false;
        const auto *outer = prev.opening(after->nested_in);
        // In the release's own acquire's bracket: it waits for that acquire,
        // or that acquire started and retired (the bracket is open).
        return outer ? contains(e.after_bracket, o.id) && depended_on(e, *outer) : prev.retired_open(*v);
    };
    if (a.look == LookAnswer::attach_now)
        for (const auto &o : prev.openings)
            ENSURE((!(unopened(o.phase) && (depended_on(e, o) || busy(o.phase))) || nested_here(o)));
    if (a.look == LookAnswer::hand_over)
        for (const auto &o : next.openings) {
            const bool ahead = unopened(o.phase) && (depended_on(e, o) || busy(o.phase));
            if (contains(o.handed, a.made)) ENSURE(ahead);
            if (ahead && !contains(o.handed, a.made)) ENSURE(nested_here(*prev.opening(o.id)));
        }
    // I17: an acquire skips its fence wait and SYNC START as nested only
    // once the opening it is nested in started; it is nested only by a
    // release of that opening's view that waits for both, and only if it
    // waits for that opening; an opening counts as started only after its
    // START (or its nested skip).
    for (const auto &o : next.openings) {
        const auto *before = prev.opening(o.id);
        if (o.nested_in != 0 && (!before || before->nested_in != o.nested_in)) {
            ENSURE(e.kind == K::release_looks);
            ENSURE(nested_here(*before));
        }
        if (o.outer_open && !(before && before->outer_open && before->nested_in == o.nested_in)) {
            const auto *outer = prev.opening(o.nested_in);
            const auto *rv = e.kind == K::release_looks ? prev.view(e.view) : nullptr;
            ENSURE(((outer && outer->started) || (!outer && rv && rv->bracket == o.nested_in && prev.retired_open(*rv)) ||
                    ((e.kind == K::step_opened || e.kind == K::claim_published) && e.ok && e.opening == o.nested_in) ||
                    (e.kind == K::step_begins && a.step == StepAnswer::skip && e.opening == o.nested_in)));
        }
        if (o.started && !(before && before->started))
            ENSURE((((e.kind == K::step_opened || e.kind == K::claim_published) && e.ok && e.opening == o.id) ||
                    (e.kind == K::step_begins && e.opening == o.id && a.step == StepAnswer::skip)));
    }
    if (a.step == StepAnswer::skip && prev.opening(e.opening)->phase == P::pending) {
        ENSURE(prev.opening(e.opening)->nested_in != 0);
        ENSURE(prev.opening(e.opening)->outer_open);
    }
    if (e.kind == K::release_looks && !e.depends_on_all && a.look != LookAnswer::none) {
        // Looked at only the acquires it depends on: an unopened one it does
        // not depend on never makes it wait, claim or hand over.
        bool relevant = false;
        for (const auto &o : prev.openings) relevant |= unopened(o.phase) && (depended_on(e, o) || busy(o.phase));
        if (!relevant) ENSURE(a.look == LookAnswer::attach_now);
    }
    // I9: a SYNC START is done ahead only for pending acquires whose wait lists
    // completed, with no fence pending and no step at its opening; only for
    // those the release depends on.
    if (a.look == LookAnswer::claim) {
        ENSURE((e.wait_lists_complete && !e.fence_pending_now && !e.claim_failed && !step_running));
        ENSURE(!a.claim.empty());
        for (DmabufId id : a.claim) {
            ENSURE(prev.opening(id)->phase == P::pending);
            ENSURE(depended_on(e, *prev.opening(id)));
            ENSURE(next.opening(id)->phase == P::opening_ahead);
        }
    } else {
        ENSURE(a.claim.empty());
    }
    if (a.look == LookAnswer::hand_over) {
        ENSURE(any_unopened);
        ENSURE(hand_over(next, a.made) != nullptr);
    }
    // I10: one SYNC START per opening: the step opens only a pending one,
    // skips only one opened ahead (or nested, I17); an opening is pending
    // again only after a claim that did not start.
    for (const auto &o : next.openings) {
        const auto *before = prev.opening(o.id);
        if (!before) {
            ENSURE(e.kind == K::opening_made);
            ENSURE(o.phase == P::pending);
            continue;
        }
        if (o.phase == P::pending && before->phase != P::pending)
            ENSURE((e.kind == K::claim_published && !e.ok && before->phase == P::opening_ahead));
        if (before->phase == P::done) ENSURE(o.phase == P::done);
        if (before->phase == P::opened_ahead) ENSURE((o.phase == P::opened_ahead || o.phase == P::done));
    }
    if (a.step == StepAnswer::open) ENSURE(prev.opening(e.opening)->phase == P::pending);
    if (a.step == StepAnswer::skip)
        ENSURE((prev.opening(e.opening)->phase == P::opened_ahead || prev.opening(e.opening)->outer_open));
    // I11: a retired opening is never findable again; one is retired only by
    // its step or its import's teardown.
    for (const auto &o : prev.openings)
        if (!next.opening(o.id)) ENSURE((e.kind == K::opening_retired || e.kind == K::view_gone));
    // I12: a waiter is woken whenever an opening leaves opening/opening_ahead.
    for (const auto &o : prev.openings) {
        const auto *after = next.opening(o.id);
        const bool was_busy = o.phase == P::opening || o.phase == P::opening_ahead;
        const bool is_busy = after && (after->phase == P::opening || after->phase == P::opening_ahead);
        if (was_busy && !is_busy) ENSURE(a.wake);
    }
    // I13: snapshots only of views that keep bytes, as they arm; a merge
    // only against a snapshot; a scratch only for views copied both ways.
    for (ViewId v : a.snapshot) {
        ENSURE(next.view(v)->both_ways);
        ENSURE(next.view(v)->cycle.armed);
    }
    if (a.write_back == WriteBack::scratch) ENSURE(prev.view(e.view)->both_ways);
    if (a.finish == Finish::merge) ENSURE(prev.view(e.view)->cycle.armed);
    if (a.finish != Finish::nothing) ENSURE((e.ok && e.decided == WriteBack::scratch));
    // I14: a dma-buf that refused a fence is never offered one again.
    // I15: the way the dma-buf's fences are waited for, once learned, stays.
    if (prev.fence_wait != FenceWait::unknown) ENSURE(next.fence_wait == prev.fence_wait);
    if (prev.fence_refused) {
        ENSURE(next.fence_refused);
        if (e.kind == K::release_looks) ENSURE(a.look == LookAnswer::none);
    }
}

}  // namespace

// The two flags (fence_refused, fence_wait) are set only by their own
// events and read only by release_looks: the table walks the states with
// the flags as they start, checks that no other event changes them, and
// applies to every state with every other setting of the flags the events
// that read or set them.  That is the whole table, without multiplying
// every other event by the six settings.
bool flag_event(DmabufEventKind k) {
    return k == K::release_looks || k == K::fence_refused || k == K::fence_wait_learned;
}

TEST_CASE("dma-buf state: every event from every reachable state keeps the invariants", "[dmabuf-state]") {
    std::unordered_set<std::string> seen;
    std::deque<DmabufState> todo{DmabufState{}};
    seen.insert(key_of(todo.front()));
    size_t transitions = 0, refused = 0, attached = 0, abandoned = 0, claimed = 0, snapshots = 0;
    auto run = [&](const DmabufState &s, const DmabufEvent &e) {
        const DmabufTransition t = dmabuf_step(s, e);
        ++transitions;
        check_transition(s, e, t);
        refused += t.actions.refused;
        attached += t.actions.attach.size();
        abandoned += t.actions.abandon.size();
        claimed += !t.actions.claim.empty();
        snapshots += t.actions.snapshot.size();
        return t;
    };
    size_t states = 0;
    while (!todo.empty()) {
        const DmabufState s = todo.front();
        todo.pop_front();
        check_state(s);
        const std::vector<DmabufEvent> events = events_for(s);
        for (const DmabufEvent &e : events) {
            const DmabufTransition t = run(s, e);
            if (!flag_event(e.kind)) {
                ENSURE(t.next.fence_refused == s.fence_refused);
                ENSURE(t.next.fence_wait == s.fence_wait);
            }
            if (t.next.fence_refused != s.fence_refused || t.next.fence_wait != s.fence_wait) continue;  // below
            if (t.next.next_id > id_bound) continue;  // the table's bound
            if (seen.insert(key_of(t.next)).second) todo.push_back(t.next);
        }
        ++states;
        for (bool refused_flag : {false, true})
            for (FenceWait wait : {FenceWait::unknown, FenceWait::sync_file, FenceWait::poll}) {
                if (!refused_flag && wait == FenceWait::unknown) continue;  // the walk above
                DmabufState v = s;
                v.fence_refused = refused_flag;
                v.fence_wait = wait;
                check_state(v);
                ++states;
                for (const DmabufEvent &e : events)
                    if (flag_event(e.kind)) run(v, e);
            }
    }
    std::printf("dma-buf state table: %zu states, %zu transitions (%zu refused), %zu fences attached, "
                "%zu abandoned, %zu claims, %zu snapshots\n",
                states, transitions, refused, attached, abandoned, claimed, snapshots);
    // The table reaches every kind of outcome, so no invariant above is vacuous.
    CHECK(states > 1000);
    CHECK(attached > 0);
    CHECK(abandoned > 0);
    CHECK(claimed > 0);
    CHECK(snapshots > 0);
}

TEST_CASE("dma-buf state: a fence handed to two acquires of two imports goes in after the second opened",
          "[dmabuf-state]") {
    DmabufState s;
    auto step = [&s](DmabufEvent e) {
        DmabufTransition t = dmabuf_step(s, e);
        s = t.next;
        return t.actions;
    };
    step({.kind = K::view_met, .view = 1});
    step({.kind = K::view_met, .view = 2});
    const DmabufId x = step({.kind = K::opening_made, .view = 1}).made;
    const DmabufId y = step({.kind = K::opening_made, .view = 2}).made;
    // A user event holds both acquires: their wait lists are not complete.
    const DmabufActions look = step({.kind = K::release_looks, .wait_lists_complete = false});
    REQUIRE(look.look == LookAnswer::hand_over);
    CHECK(step({.kind = K::step_begins, .opening = x}).step == StepAnswer::open);
    CHECK(step({.kind = K::step_opened, .opening = x, .ok = true}).attach.empty());
    CHECK(step({.kind = K::step_begins, .opening = y}).step == StepAnswer::open);
    CHECK(step({.kind = K::step_opened, .opening = y, .ok = true}).attach == std::vector<DmabufId>{look.made});
}

TEST_CASE("dma-buf state: an import's teardown retires its openings; their fences are abandoned",
          "[dmabuf-state]") {
    DmabufState s;
    auto step = [&s](DmabufEvent e) {
        DmabufTransition t = dmabuf_step(s, e);
        s = t.next;
        return t.actions;
    };
    step({.kind = K::view_met, .view = 1});
    const DmabufId x = step({.kind = K::opening_made, .view = 1}).made;
    const DmabufActions look = step({.kind = K::release_looks, .fence_pending_now = true});
    REQUIRE(look.look == LookAnswer::hand_over);
    CHECK(step({.kind = K::view_gone, .view = 1}).abandon == std::vector<DmabufId>{look.made});
    CHECK(s.opening(x) == nullptr);
    CHECK(s.hand_overs.empty());
    CHECK(step({.kind = K::step_begins, .opening = x}).refused);
}

TEST_CASE("dma-buf state: a release's fence goes only to the acquires it depends on; every other one waits for it",
          "[dmabuf-state]") {
    DmabufState s;
    auto step = [&s](DmabufEvent e) {
        DmabufTransition t = dmabuf_step(s, e);
        s = t.next;
        return t.actions;
    };
    step({.kind = K::view_met, .view = 1});
    step({.kind = K::view_met, .view = 2});
    // X's acquire waits for a user event on one queue; Y's is pending on another.
    const DmabufId x = step({.kind = K::opening_made, .view = 1}).made;
    const DmabufId y = step({.kind = K::opening_made, .view = 2}).made;
    // Y's release depends on Y's acquire alone: its fence waits for Y's opening, not X's.
    const DmabufActions look = step({.kind = K::release_looks, .depends_on_all = false, .depends = {y}});
    REQUIRE(look.look == LookAnswer::hand_over);
    CHECK(s.opening(x)->handed.empty());
    CHECK(step({.kind = K::step_begins, .opening = y}).step == StepAnswer::open);
    CHECK(step({.kind = K::step_opened, .opening = y, .ok = true}).attach == std::vector<DmabufId>{look.made});
    // Y's second release, its acquire opened: attached now, X's opening waits for it.
    CHECK(step({.kind = K::release_looks, .depends_on_all = false, .depends = {}}).look == LookAnswer::attach_now);
    // A release that may wait for a user event hands over to X as well.
    CHECK(step({.kind = K::release_looks, .depends_on_all = true}).look == LookAnswer::hand_over);
}

TEST_CASE("dma-buf state: a hand-over narrowed to the acquires its release depends on attaches once none is left",
          "[dmabuf-state]") {
    DmabufState s;
    auto step = [&s](DmabufEvent e) {
        DmabufTransition t = dmabuf_step(s, e);
        s = t.next;
        return t.actions;
    };
    step({.kind = K::view_met, .view = 1});
    step({.kind = K::view_met, .view = 2});
    const DmabufId x = step({.kind = K::opening_made, .view = 1}).made;
    const DmabufId y = step({.kind = K::opening_made, .view = 2}).made;
    // X's release waits for a user event: its fence goes to both.
    const DmabufActions look = step({.kind = K::release_looks});
    REQUIRE(look.look == LookAnswer::hand_over);
    CHECK(step({.kind = K::step_begins, .opening = x}).step == StepAnswer::open);
    CHECK(step({.kind = K::step_opened, .opening = x, .ok = true}).attach.empty());
    // The user event completed: the release depends on X's acquire alone,
    // which opened; Y's (pending, not depended on) leaves it, the fence goes in.
    const DmabufActions narrowed =
        step({.kind = K::hand_over_narrowed, .depends_on_all = false, .depends = {x}, .hand_over = look.made});
    CHECK(narrowed.attach == std::vector<DmabufId>{look.made});
    CHECK(s.opening(y)->handed.empty());
    CHECK(s.hand_overs.empty());
}

TEST_CASE("dma-buf state: an acquire nested in a release's own open bracket skips its opening; the release's fence "
          "waits only for its own",
          "[dmabuf-state]") {
    DmabufState s;
    auto step = [&s](DmabufEvent e) {
        DmabufTransition t = dmabuf_step(s, e);
        s = t.next;
        return t.actions;
    };
    step({.kind = K::view_met, .view = 1});  // X
    step({.kind = K::view_met, .view = 2});  // Y
    // One in-order queue: acquire Y (behind a user event), write, acquire X, write, release Y, release X.
    const DmabufId y = step({.kind = K::opening_made, .view = 2}).made;
    const DmabufId x = step({.kind = K::opening_made, .view = 1}).made;
    const DmabufActions rel_y = step({.kind = K::release_looks,
                                      .view = 2,
                                      .depends_on_all = false,
                                      .depends = {y, x},
                                      .after_bracket = {x},
                                      .surely_depends = {y, x}});
    REQUIRE(rel_y.look == LookAnswer::hand_over);
    CHECK(s.opening(y)->handed == std::vector<DmabufId>{rel_y.made});
    CHECK(s.opening(x)->handed.empty());
    CHECK(s.opening(x)->nested_in == y);
    const DmabufActions rel_x =
        step({.kind = K::release_looks, .view = 1, .depends_on_all = false, .depends = {y, x}});
    REQUIRE(rel_x.look == LookAnswer::hand_over);
    // Y's acquire opens: Y's fence goes in before Y's write runs.
    CHECK(step({.kind = K::step_begins, .opening = y}).step == StepAnswer::open);
    CHECK(step({.kind = K::step_opened, .opening = y, .ok = true}).attach == std::vector<DmabufId>{rel_y.made});
    // X's acquire runs inside Y's bracket: no fence wait, no START; X's fence goes in.
    const DmabufActions x_step = step({.kind = K::step_begins, .opening = x});
    CHECK(x_step.step == StepAnswer::skip);
    CHECK(x_step.attach == std::vector<DmabufId>{rel_x.made});
}

TEST_CASE("dma-buf state: an acquire nested in a bracket that never opened opens as any other", "[dmabuf-state]") {
    DmabufState s;
    auto step = [&s](DmabufEvent e) {
        DmabufTransition t = dmabuf_step(s, e);
        s = t.next;
        return t.actions;
    };
    step({.kind = K::view_met, .view = 1});
    step({.kind = K::view_met, .view = 2});
    const DmabufId y = step({.kind = K::opening_made, .view = 2}).made;
    const DmabufId x = step({.kind = K::opening_made, .view = 1}).made;
    step({.kind = K::release_looks,
          .view = 2,
          .depends_on_all = false,
          .depends = {y, x},
          .after_bracket = {x},
          .surely_depends = {y, x}});
    CHECK(step({.kind = K::step_begins, .opening = y}).step == StepAnswer::open);
    CHECK(step({.kind = K::step_opened, .opening = y, .ok = false}).abandon.size() == 1);
    CHECK(s.opening(x)->nested_in == 0);
    CHECK(step({.kind = K::step_begins, .opening = x}).step == StepAnswer::open);
}

TEST_CASE("dma-buf state: an acquire the release surely waits for nests in its bracket after that bracket's acquire "
          "retired; one it may wait for only through a user event does not",
          "[dmabuf-state]") {
    DmabufState s;
    auto step = [&s](DmabufEvent e) {
        DmabufTransition t = dmabuf_step(s, e);
        s = t.next;
        return t.actions;
    };
    step({.kind = K::view_met, .view = 1});  // X
    step({.kind = K::view_met, .view = 2});  // Y
    // One in-order queue: acquire Y (nothing to wait for), write, acquire X (behind a user event), write,
    // release Y.  Y's acquire opens and its step returns before Y's release looks.
    const DmabufId y = step({.kind = K::opening_made, .view = 2}).made;
    CHECK(step({.kind = K::step_begins, .opening = y}).step == StepAnswer::open);
    step({.kind = K::step_opened, .opening = y, .ok = true});
    step({.kind = K::opening_retired, .opening = y});
    CHECK(s.view(2)->bracket == y);
    CHECK(s.retired_open(*s.view(2)));
    const DmabufId x = step({.kind = K::opening_made, .view = 1}).made;
    SECTION("surely waited for: nested, the fence goes in now, X skips its opening") {
        const DmabufActions rel_y = step({.kind = K::release_looks,
                                          .view = 2,
                                          .depends_on_all = true,
                                          .depends = {x},
                                          .surely_depends = {x}});
        CHECK(rel_y.look == LookAnswer::attach_now);
        CHECK(s.opening(x)->nested_in == y);
        CHECK(s.view(2)->bracket == 0);
        CHECK(step({.kind = K::step_begins, .opening = x}).step == StepAnswer::skip);
    }
    SECTION("waited for only through a user event (another queue): handed over, not nested") {
        const DmabufActions rel_y =
            step({.kind = K::release_looks, .view = 2, .depends_on_all = true, .depends = {x}});
        CHECK(rel_y.look == LookAnswer::hand_over);
        CHECK(s.opening(x)->nested_in == 0);
        CHECK(step({.kind = K::step_begins, .opening = x}).step == StepAnswer::open);
    }
}
