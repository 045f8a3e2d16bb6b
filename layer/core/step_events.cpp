#include "layer/core/step_events.hpp"

#include <memory>
#include <mutex>
#include <unordered_set>
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

// The callbacks' own records (release_events_on_barrier), held here while
// registered.  Where the ICD never calls a callback (a terminated barrier on
// PoCL 3.1 and 5.0) its record stays, 64 bytes with its events already
// released by the sweep: an ICD that calls it late must still find it.
// Held here, not dropped, so that what stays is counted and in reach.
// Leaked on purpose, as `watched` below.
std::mutex callback_records_mutex;
auto *callback_records = new std::unordered_set<std::shared_ptr<StepEvents> *>;

// `data` is the callback's own shared_ptr (release_events_on_barrier):
// adopted back here; the worker's job holds it until the events are released.
void CL_CALLBACK on_barrier_complete(cl_event, cl_int, void *data) {
    auto *record = static_cast<std::shared_ptr<StepEvents> *>(data);
    {
        std::lock_guard lock(callback_records_mutex);
        callback_records->erase(record);
    }
    std::shared_ptr<StepEvents> events = std::move(*std::unique_ptr<std::shared_ptr<StepEvents>>(record));
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

// The job's owner goes with `w`.  Where the ICD never calls the barrier's
// callback, the callback's shared_ptr stays and the small record is left:
// an ICD that does call it late must still find it.
void let_go(Watched &w) {
    release_once(*w.events);
    w.barrier.reset();
}

}  // namespace

bool release_events_on_barrier(const std::shared_ptr<StepEvents> &events, cl_event barrier) {
    auto held = std::make_unique<std::shared_ptr<StepEvents>>(events);
    {
        // In the set before the ICD may call the callback (at once, on another thread).
        std::lock_guard lock(callback_records_mutex);
        callback_records->insert(held.get());
    }
    if (next().clSetEventCallback(barrier, CL_COMPLETE, on_barrier_complete, held.get()) != CL_SUCCESS) {
        std::lock_guard lock(callback_records_mutex);
        callback_records->erase(held.get());
        return false;
    }
    held.release();  // the callback's now
    return true;
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
