#include "layer/handoff/dmabuf_transitions.hpp"

#include <algorithm>

#include "layer/handoff/plan.hpp"

namespace cldmabuf {

bool unopened(OpeningPhase p) {
    return p == OpeningPhase::pending || p == OpeningPhase::opening_ahead || p == OpeningPhase::opening;
}

const DmabufState::View *DmabufState::view(ViewId id) const {
    for (const auto &v : views)
        if (v.id == id) return &v;
    return nullptr;
}

const DmabufState::Opening *DmabufState::opening(DmabufId id) const {
    for (const auto &o : openings)
        if (o.id == id) return &o;
    return nullptr;
}

namespace {

using DS = DmabufState;

DS::View *state_view(DS &s, ViewId id) { return const_cast<DS::View *>(s.view(id)); }
DS::Opening *state_opening(DS &s, DmabufId id) { return const_cast<DS::Opening *>(s.opening(id)); }

// One opening finished with the fences handed to it (`failed`: it did not
// start, or it retired): each hand-over it completes is attached, or
// abandoned when any of its openings failed.
void finish_handed_over(DS &s, DS::Opening &o, bool failed, DmabufActions &a) {
    for (DmabufId h : o.handed) {
        auto it = std::find_if(s.hand_overs.begin(), s.hand_overs.end(), [h](const auto &x) { return x.id == h; });
        if (it == s.hand_overs.end()) continue;
        it->failed = it->failed || failed;
        if (--it->remaining != 0) continue;
        (it->failed ? a.abandon : a.attach).push_back(h);
        s.hand_overs.erase(it);
    }
    o.handed.clear();
}

// The outer opening `outer` started (true) or will not (false): the
// openings nested in it skip their opening, or open as any other.
void outer_settled(DS &s, DmabufId outer, bool started) {
    for (auto &o : s.openings) {
        if (o.nested_in != outer || o.outer_open) continue;
        if (started)
            o.outer_open = true;
        else
            o.nested_in = 0;
    }
}

void retire_opening(DS &s, DmabufId id, DmabufActions &a) {
    auto it = std::find_if(s.openings.begin(), s.openings.end(), [id](const auto &o) { return o.id == id; });
    if (it == s.openings.end()) return;
    if (!it->started) outer_settled(s, id, false);
    // Started, its bracket stays open until its release looks; else its
    // release, if one comes, has no acquire of its own left to close.
    for (auto &v : s.views)
        if (v.bracket == id && !(it->phase == OpeningPhase::done && it->started)) v.bracket = 0;
    a.wake = a.wake || it->phase == OpeningPhase::opening || it->phase == OpeningPhase::opening_ahead;
    finish_handed_over(s, *it, /*failed=*/true, a);
    s.openings.erase(it);
}

void step_view_cycle(DS::View &v, CycleEvent e, DmabufActions &a) {
    const CycleStep s = cycle_step(v.cycle, e);
    if (s.take_snapshot && v.both_ways) a.snapshot.push_back(v.id);
    v.cycle = s.next;
    if (!v.both_ways) v.cycle.armed = false;  // only a view that is uploaded and written back keeps bytes
}

// Whether a release with these facts may wait for opening `o`.
bool depended_on(const DmabufEvent &e, const DS::Opening &o) {
    return e.depends_on_all || std::find(e.depends.begin(), e.depends.end(), o.id) != e.depends.end();
}

// A release with a fence, looking at the unopened acquires of the dma-buf
// (through any view).  Those it may wait for are ahead of it: a fence in the
// dma-buf before they did SYNC START would hold them, a cycle.  Those at
// their START right now are counted ahead too: the fence would make that
// START wait in the kernel, unbounded.  Every other unopened acquire is
// after it or beside it: the fence goes in now and that acquire's fence wait
// orders it after the release.
//
// A pending acquire the release surely waits for that itself waits for the
// release's own acquire (the release's view's bracket) runs inside that
// bracket: nested, it takes no hand-over (its START would wait for this
// fence, a cycle; handed over, the writes between the release's own
// acquire and it would run unfenced) and skips its opening.  Where that
// own acquire already started and retired, every pending acquire the
// release surely waits for runs inside the bracket (after that START,
// before the release's END), and nests the same way.
void look_ahead(DS &s, const DmabufEvent &e, DmabufActions &a) {
    std::vector<DS::Opening *> ahead;
    AheadFacts f;
    f.wait_lists_complete = e.wait_lists_complete;
    f.fence_pending_now = e.fence_pending_now;
    DS::View *v = state_view(s, e.view);
    const DS::Opening *own = v && v->bracket ? s.opening(v->bracket) : nullptr;
    if (own && (!depended_on(e, *own) || (own->phase == OpeningPhase::done && !own->started))) own = nullptr;
    const bool own_retired_open = v && s.retired_open(*v);
    // The bracket stays the view's until the release's answer is final (it
    // may wait for a step or claim, then look again).
    auto closes = [v](LookAnswer answer) {
        if (v && (answer == LookAnswer::attach_now || answer == LookAnswer::hand_over)) v->bracket = 0;
    };
    auto surely = [&e](DmabufId id) {
        return std::find(e.surely_depends.begin(), e.surely_depends.end(), id) != e.surely_depends.end();
    };
    for (auto &o : s.openings) {
        if (!unopened(o.phase)) continue;
        const bool busy = o.phase == OpeningPhase::opening || o.phase == OpeningPhase::opening_ahead;
        if (!busy && !depended_on(e, o)) continue;
        if (own && &o != own && o.phase == OpeningPhase::pending && (o.nested_in == 0 || o.nested_in == own->id) &&
            surely(o.id) &&
            std::find(e.after_bracket.begin(), e.after_bracket.end(), o.id) != e.after_bracket.end()) {
            o.nested_in = own->id;
            o.outer_open = own->started;
            continue;
        }
        if (own_retired_open && o.phase == OpeningPhase::pending && (o.nested_in == 0 || o.nested_in == v->bracket) &&
            surely(o.id)) {
            o.nested_in = v->bracket;
            o.outer_open = true;
            continue;
        }
        ahead.push_back(&o);
        // Another release at its START counts as a step at its opening.
        f.step_running |= busy;
    }
    if (ahead.empty()) {
        a.look = LookAnswer::attach_now;
        closes(a.look);
        return;
    }
    // A step at its opening with nothing pending is done in a moment: the
    // release waits (bounded) for it and looks again.
    if (f.step_running && !f.fence_pending_now && !e.waited) {
        a.look = LookAnswer::wait_for_step;
        return;
    }
    bool claimable = !e.claim_failed && plan_acquire_ahead(f) == AcquireAhead::open_ahead;
    for (auto *o : ahead) claimable = claimable && o->phase == OpeningPhase::pending;
    if (claimable) {
        for (auto *o : ahead) {
            o->phase = OpeningPhase::opening_ahead;
            a.claim.push_back(o->id);
        }
        a.look = LookAnswer::claim;
        return;
    }
    DS::HandOver h;
    h.id = s.next_id++;
    h.remaining = static_cast<uint32_t>(ahead.size());
    for (auto *o : ahead) o->handed.push_back(h.id);
    s.hand_overs.push_back(h);
    a.look = LookAnswer::hand_over;
    a.made = h.id;
    closes(a.look);
}

// A hand-over whose release no longer waits for what the layer cannot see:
// the pending acquires it does not depend on leave it (they had not begun,
// so the fence in the dma-buf orders them after the release); when none is
// left, the fence goes in now.  Those at their START stay in it.
void narrow_hand_over(DS &s, const DmabufEvent &e, DmabufActions &a) {
    auto it =
        std::find_if(s.hand_overs.begin(), s.hand_overs.end(), [&](const auto &x) { return x.id == e.hand_over; });
    for (auto &o : s.openings) {
        if (o.phase != OpeningPhase::pending || depended_on(e, o)) continue;
        auto h = std::find(o.handed.begin(), o.handed.end(), e.hand_over);
        if (h == o.handed.end()) continue;
        o.handed.erase(h);
        --it->remaining;
    }
    if (it->remaining != 0) return;
    (it->failed ? a.abandon : a.attach).push_back(it->id);
    s.hand_overs.erase(it);
}

// One state, one form: whether a finished opening started matters only
// while an opening is nested in it or it is a view's bracket, and a failed
// one is no bracket.
void normalize(DS &s) {
    // A bracket whose opening failed is closed by nothing: no acquire nests in it.
    for (auto &v : s.views)
        if (const DS::Opening *o = v.bracket ? s.opening(v.bracket) : nullptr;
            o && o->phase == OpeningPhase::done && !o->started)
            v.bracket = 0;
    for (auto &o : s.openings) {
        if (o.phase != OpeningPhase::done || !o.started) continue;
        const bool nests = std::any_of(s.openings.begin(), s.openings.end(),
                                       [&](const auto &x) { return x.nested_in == o.id; });
        const bool bracket =
            std::any_of(s.views.begin(), s.views.end(), [&](const auto &v) { return v.bracket == o.id; });
        const bool named = nests || bracket;
        if (!named) o.started = false;
    }
}

DmabufTransition step_unnormalized(const DmabufState &state, const DmabufEvent &e);

}  // namespace

DmabufTransition dmabuf_step(const DmabufState &state, const DmabufEvent &e) {
    DmabufTransition t = step_unnormalized(state, e);
    if (!t.actions.refused) normalize(t.next);
    return t;
}

namespace {

DmabufTransition step_unnormalized(const DmabufState &state, const DmabufEvent &e) {
    DmabufTransition t{state, {}};
    DS &s = t.next;
    DmabufActions &a = t.actions;
    auto refuse = [&] {
        t.next = state;
        t.actions = DmabufActions{};
        t.actions.refused = true;
        return t;
    };
    using K = DmabufEventKind;
    using P = OpeningPhase;
    switch (e.kind) {
    case K::view_met:
        // Kept in id order: one state has one form, whatever order the imports came in.
        if (!s.view(e.view))
            s.views.insert(std::upper_bound(s.views.begin(), s.views.end(), e.view,
                                            [](ViewId id, const DS::View &v) { return id < v.id; }),
                           DS::View{e.view, e.both_ways, {}});
        return t;
    case K::view_gone: {
        if (!s.view(e.view)) return refuse();
        std::vector<DmabufId> gone;
        for (const auto &o : s.openings)
            if (o.view == e.view) gone.push_back(o.id);
        for (DmabufId id : gone) retire_opening(s, id, a);
        s.views.erase(std::find_if(s.views.begin(), s.views.end(), [&](const auto &v) { return v.id == e.view; }));
        return t;
    }
    case K::alias_appeared:
        // An import held while alone keeps what its acquire uploaded, which
        // the dma-buf still holds: nothing else wrote it while held.
        for (auto &v : s.views)
            if (v.id != e.view) step_view_cycle(v, CycleEvent::alias_appeared, a);
        return t;
    case K::acquire_ran: {
        DS::View *v = state_view(s, e.view);
        if (!v) return refuse();
        step_view_cycle(*v, e.aliased ? CycleEvent::acquire_ran_aliased : CycleEvent::acquire_ran_alone, a);
        return t;
    }
    case K::release_decided: {
        const DS::View *v = s.view(e.view);
        if (!v) return refuse();
        a.write_back = v->both_ways ? decide_write_back(e.aliased, v->cycle.armed) : WriteBack::direct;
        return t;
    }
    case K::release_ran: {
        DS::View *v = state_view(s, e.view);
        if (!v) return refuse();
        a.finish = v->both_ways ? finish_write_back(e.decided, v->cycle, e.ok) : Finish::nothing;
        step_view_cycle(*v, CycleEvent::release_ran, a);
        return t;
    }
    case K::opening_made:
        if (!s.view(e.view)) return refuse();
        a.made = s.next_id++;
        s.openings.push_back({a.made, e.view, P::pending, {}});
        state_view(s, e.view)->bracket = a.made;
        return t;
    case K::opening_retired:
        if (!s.opening(e.opening)) return refuse();
        retire_opening(s, e.opening, a);
        return t;
    case K::step_begins: {
        DS::Opening *o = state_opening(s, e.opening);
        if (!o) return refuse();
        if (o->phase == P::pending && o->nested_in != 0 && o->outer_open) {
            // Inside the outer bracket: no fence wait, no START; the fences
            // handed to it go in now.
            o->phase = P::done;
            o->started = true;
            finish_handed_over(s, *o, /*failed=*/false, a);
            outer_settled(s, o->id, true);
            a.step = StepAnswer::skip;
            return t;
        }
        // Not nested, or not pending any more: opened as any other.
        o->nested_in = 0;
        o->outer_open = false;
        switch (o->phase) {
        case P::pending: o->phase = P::opening; a.step = StepAnswer::open; return t;
        case P::opened_ahead: o->phase = P::done; a.step = StepAnswer::skip; return t;
        case P::opening_ahead: a.step = StepAnswer::wait_for_claim; return t;
        case P::opening:
        case P::done: return refuse();
        }
        return refuse();
    }
    case K::step_gave_up: {
        DS::Opening *o = state_opening(s, e.opening);
        if (!o || o->phase != P::opening_ahead) return refuse();
        // The release's START, when it returns, publishes nothing.
        o->phase = P::done;
        finish_handed_over(s, *o, /*failed=*/true, a);
        outer_settled(s, o->id, false);
        a.wake = true;
        return t;
    }
    case K::step_opened: {
        DS::Opening *o = state_opening(s, e.opening);
        if (!o || o->phase != P::opening) return refuse();
        o->phase = P::done;
        o->started = e.ok;
        finish_handed_over(s, *o, !e.ok, a);
        outer_settled(s, o->id, e.ok);
        a.wake = true;
        return t;
    }
    case K::release_looks:
        if (s.fence_refused) {
            a.look = LookAnswer::none;  // no fence is tried on this dma-buf again
            return t;
        }
        look_ahead(s, e, a);
        return t;
    case K::hand_over_narrowed:
        if (e.depends_on_all || std::none_of(s.hand_overs.begin(), s.hand_overs.end(),
                                             [&](const auto &h) { return h.id == e.hand_over; }))
            return refuse();
        narrow_hand_over(s, e, a);
        return t;
    case K::claim_published: {
        DS::Opening *o = state_opening(s, e.opening);
        // Retired meanwhile, or given up by its step: nothing to publish.
        if (!o || o->phase != P::opening_ahead) return refuse();
        o->phase = e.ok ? P::opened_ahead : P::pending;
        o->started = e.ok;
        // Other releases' fences handed to it while it was claimed: attached
        // once every opening they wait for started.  A claim that did not
        // start leaves them to the step.
        if (e.ok) finish_handed_over(s, *o, /*failed=*/false, a);
        if (e.ok) outer_settled(s, o->id, true);
        a.wake = true;
        return t;
    }
    case K::fence_refused:
        s.fence_refused = true;
        return t;
    case K::fence_wait_learned:
        // Steps of the dma-buf may run on several queues' workers: the first answer stays.
        if (s.fence_wait == FenceWait::unknown) s.fence_wait = e.ok ? FenceWait::sync_file : FenceWait::poll;
        return t;
    }
    return refuse();
}

}  // namespace

}  // namespace cldmabuf
