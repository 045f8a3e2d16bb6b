#include "layer/core/step_events.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/core/worker.hpp"

namespace cldmabuf {
namespace {

void release_once(StepEvents &events) {
    if (events.released.exchange(true)) return;
    events.gate.reset();
    events.marker.reset();
}

// The barrier callbacks' records (release_events_on_barrier), by token: the
// callback's user data is the token, not a pointer, so a record can go as
// soon as the barrier is known to have ended, whichever of the callback and
// the sweep saw it first.  A callback that comes after the sweep let its
// record go (a terminated barrier on an ICD that does call such callbacks,
// late) finds no record and does nothing; where the ICD never calls it
// (PoCL 3.1 and 5.0) nothing of it stays.  Tokens are unique among the live
// records (a 32-bit target wraps after 2^32 steps, far beyond any step's
// life).  Leaked on purpose, as `watched` below.
std::mutex callback_records_mutex;
auto *callback_records = new std::unordered_map<uintptr_t, std::shared_ptr<StepEvents>>;
uintptr_t last_token = 0;  // under callback_records_mutex

std::shared_ptr<StepEvents> take_record(uintptr_t token) {
    std::lock_guard lock(callback_records_mutex);
    auto it = callback_records->find(token);
    if (it == callback_records->end()) return nullptr;
    std::shared_ptr<StepEvents> events = std::move(it->second);
    callback_records->erase(it);
    return events;
}

void CL_CALLBACK on_barrier_complete(cl_event, cl_int, void *data) {
    std::shared_ptr<StepEvents> events = take_record(reinterpret_cast<uintptr_t>(data));
    if (!events) return;  // the sweep saw the barrier end first
    // Not released inside the ICD's callback: on the queue's worker.
    const cl_command_queue queue = events->queue;
    post_to_worker(queue, [events = std::move(events)] { release_once(*events); });
}

struct Watched {
    std::shared_ptr<StepEvents> events;
    IcdEvent barrier;
};

// Leaked on purpose: a sweep may come from an application's late call at exit.
std::mutex watched_mutex;
auto *watched = new std::vector<Watched>;
std::atomic<size_t> watched_count{0};

bool barrier_ended(cl_event barrier) {
    cl_int status = CL_QUEUED;
    // An event the ICD no longer answers for cannot be waited on: let it go.
    if (next().clGetEventInfo(barrier, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) !=
        CL_SUCCESS)
        return true;
    return status <= CL_COMPLETE;
}

// The barrier ended: its events go, and its callback's record with them
// (the callback, if it still comes, finds none).
void let_go(Watched &w) {
    release_once(*w.events);
    if (w.events->callback_token != 0) take_record(w.events->callback_token);
    w.barrier.reset();
}

}  // namespace

bool release_events_on_barrier(const std::shared_ptr<StepEvents> &events, cl_event barrier) {
    uintptr_t token = 0;
    {
        // In the map before the ICD may call the callback (at once, on another thread).
        std::lock_guard lock(callback_records_mutex);
        do token = ++last_token; while (token == 0 || callback_records->count(token));
        callback_records->emplace(token, events);
    }
    events->callback_token = token;  // before the job can hand the events to the sweep
    if (next().clSetEventCallback(barrier, CL_COMPLETE, on_barrier_complete, reinterpret_cast<void *>(token)) !=
        CL_SUCCESS) {
        events->callback_token = 0;
        take_record(token);
        return false;
    }
    return true;
}

size_t step_callback_records() {
    std::lock_guard lock(callback_records_mutex);
    return callback_records->size();
}

// Never released here, even when the barrier has ended: the gate was just
// set, and PoCL's device thread may still be at it (see above); the next
// sweep, a later call of the application's, comes after.
void release_events_when_ended(std::shared_ptr<StepEvents> events, IcdEvent barrier) {
    std::lock_guard lock(watched_mutex);
    watched->push_back(Watched{std::move(events), std::move(barrier)});
    watched_count.fetch_add(1, std::memory_order_release);
}

void sweep_step_events() {
    if (watched_count.load(std::memory_order_acquire) == 0) return;
    std::vector<Watched> all;
    {
        std::lock_guard lock(watched_mutex);
        all.swap(*watched);
        watched_count.store(0, std::memory_order_release);
    }
    std::vector<Watched> still;
    for (Watched &w : all) {
        if (barrier_ended(w.barrier.get())) let_go(w);
        else still.push_back(std::move(w));
    }
    if (still.empty()) return;
    std::lock_guard lock(watched_mutex);
    for (Watched &w : still) watched->push_back(std::move(w));
    watched_count.fetch_add(still.size(), std::memory_order_release);
}

}  // namespace cldmabuf
