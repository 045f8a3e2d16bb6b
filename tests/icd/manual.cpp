// Manual mode (README.md, "Manual mode"): nothing completes by itself.  The
// commands whose wait list ended, the destructor callbacks of released
// buffers and (late_callbacks) each event callback wait as steps until the
// scheduler of tests/explore runs one, so a test can enumerate every order in
// which an ICD may do its work; an out-of-order queue's commands run in any
// order their wait lists and barriers allow.  The list is deterministic (queues in the
// order of their first command, then deferred steps oldest first) so that a
// schedule, a list of step numbers, replays.
#include <algorithm>
#include <chrono>
#include <map>
#include <thread>
#include <deque>
#include <string>
#include <vector>

#include "testicd.hpp"

namespace testicd {
namespace {

struct Deferred {
    std::string label;
    std::function<void()> fn;
};

// Under lock(); never destroyed (a layer's threads may call in at exit).
std::deque<Deferred> &deferred() {
    static auto *list = new std::deque<Deferred>;
    return *list;
}
std::vector<const std::function<bool()> *> &waiters() {
    static auto *list = new std::vector<const std::function<bool()> *>;
    return *list;
}

// The threads polling an event's status, each with the event (a reference
// held) and when it last asked.  A thread that stopped asking for longer
// than a polling loop's pause has moved on.
// A thread waits by polling when it asked again and again, for longer than
// a pause of a polling loop, and last asked a moment ago; a gap longer than
// that pause starts over; an entry older than poll_lapse is dropped.
struct Poll {
    cl_event ev;
    std::chrono::steady_clock::time_point first, last;
    unsigned count = 1;
};
// More asks than a bounded look makes: the layer watches a marker for at
// least 64 asks (layer/handoff/marker_watch.cpp) and then goes on by
// itself, which on a loaded machine lasts past poll_pause / 2 and would be
// taken for a wait (the scheduler then lists steps while that thread still
// works: schedules that do not replay).
constexpr unsigned polls_to_wait = 100;
constexpr auto poll_pause = std::chrono::milliseconds(2);
constexpr auto poll_lapse = std::chrono::milliseconds(5);
std::thread::id scheduler;  // asks statuses between steps: never a waiter
std::map<std::thread::id, Poll> &polls() {
    static auto *list = new std::map<std::thread::id, Poll>;
    return *list;
}

struct ReadyCommand {
    cl_command_queue queue;
    size_t index;  // in its queue's pending list
};

std::vector<ReadyCommand> ready_list() {
    std::vector<ReadyCommand> out;
    for (cl_command_queue q : command_queues())
        for (size_t i : ready_commands(q)) out.push_back({q, i});
    return out;
}

size_t queue_index(cl_command_queue q) {
    const auto &all = command_queues();
    return static_cast<size_t>(std::find(all.begin(), all.end(), q) - all.begin());
}

}  // namespace

void defer_step(std::string label, std::function<void()> fn) {
    deferred().push_back({std::move(label), std::move(fn)});
}

void add_waiter(const std::function<bool()> *done) { waiters().push_back(done); }

void remove_waiter(const std::function<bool()> *done) {
    auto &w = waiters();
    w.erase(std::find(w.begin(), w.end(), done));
}

std::string manual_steps() {
    std::lock_guard guard(lock());
    std::string out;
    for (const ReadyCommand &r : ready_list()) {
        const bool any_order = r.queue->properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
        out += "command q" + std::to_string(queue_index(r.queue)) +
               (any_order ? " #" + std::to_string(r.index) : std::string()) + " " +
               hex(command_type(r.queue, r.index)) + "\n";
    }
    for (const Deferred &d : deferred()) out += d.label + "\n";
    return out;
}

cl_int manual_run_step(cl_uint k) {
    Later later;
    {
        std::lock_guard guard(lock());
        const std::vector<ReadyCommand> ready = ready_list();
        if (k < ready.size()) {
            run_command(ready[k].queue, ready[k].index, later);
        } else if (k - ready.size() < deferred().size()) {
            const auto at = deferred().begin() + (k - ready.size());
            later.push_back(std::move(at->fn));
            deferred().erase(at);
        } else {
            return CL_INVALID_VALUE;
        }
    }
    run_later(later);
    // What the step changed may end waits and free drained queues.
    Later freed;
    {
        std::lock_guard guard(lock());
        pump_all(freed);
    }
    run_later(freed);
    return CL_SUCCESS;
}

void note_scheduler_thread() {
    std::lock_guard guard(lock());
    scheduler = std::this_thread::get_id();
}

void note_status_poll(cl_event ev) {
    if (std::this_thread::get_id() == scheduler) return;
    const auto now = std::chrono::steady_clock::now();
    auto it = polls().find(std::this_thread::get_id());
    const bool ended = ev->status <= CL_COMPLETE;
    if (it != polls().end() && (it->second.ev != ev || ended || now - it->second.last > poll_pause)) {
        release_event_under_lock(it->second.ev);
        polls().erase(it);
        it = polls().end();
    }
    if (ended) return;
    if (it == polls().end()) {
        ++ev->refs;
        polls()[std::this_thread::get_id()] = {ev, now, now};
    } else {
        it->second.last = now;
        ++it->second.count;
    }
}

void manual_waiters(cl_ulong out[2]) {
    std::lock_guard guard(lock());
    const auto now = std::chrono::steady_clock::now();
    for (auto it = polls().begin(); it != polls().end();) {
        if (now - it->second.last > poll_lapse) {
            release_event_under_lock(it->second.ev);
            it = polls().erase(it);
        } else {
            ++it;
        }
    }
    out[0] = waiters().size();
    out[1] = static_cast<cl_ulong>(std::count_if(waiters().begin(), waiters().end(), [](auto *done) { return !(*done)(); }));
    for (const auto &[thread, p] : polls()) {
        if (p.count < polls_to_wait || p.last - p.first < poll_pause / 2 || now - p.last > poll_pause) continue;
        ++out[0];
        out[1] += p.ev->status > CL_COMPLETE;
    }
}

}  // namespace testicd
