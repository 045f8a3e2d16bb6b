#include "layer/core/step_events.hpp"

#include <mutex>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/core/worker.hpp"

namespace cldmabuf {
namespace {

void release_once(StepEvents *events) {
    if (events->released.exchange(true)) return;
    next().clReleaseEvent(events->gate);
    next().clReleaseEvent(events->marker);
}

void drop_owner(StepEvents *events) {
    if (events->owners.fetch_sub(1) == 1) delete events;
}

void CL_CALLBACK on_barrier_complete(cl_event, cl_int, void *data) {
    auto *events = static_cast<StepEvents *>(data);
    // Not released inside the ICD's callback: on the queue's worker.
    post_to_worker(events->queue, [events] {
        release_once(events);
        drop_owner(events);
    });
}

struct Watched {
    StepEvents *events;
    cl_event barrier;  // the layer's reference
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

// The job's owner goes with the events.  Where the ICD never calls the
// barrier's callback the other owner stays and the small record is left:
// an ICD that does call it late must still find it.
void let_go(const Watched &w) {
    release_once(w.events);
    drop_owner(w.events);
    next().clReleaseEvent(w.barrier);
}

}  // namespace

bool release_events_on_barrier(StepEvents *events, cl_event barrier) {
    if (next().clSetEventCallback(barrier, CL_COMPLETE, on_barrier_complete, events) == CL_SUCCESS) return true;
    events->owners = 1;
    return false;
}

void drop_job_owner(StepEvents *events) { drop_owner(events); }

// Never released here, even when the barrier has ended: the gate was just
// set, and PoCL's device thread may still be at it (see above); the next
// sweep, a later call of the application's, comes after.
void release_events_when_ended(StepEvents *events, cl_event barrier) {
    std::lock_guard lock(watched_mutex);
    watched->push_back(Watched{events, barrier});
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
    for (const Watched &w : all) {
        if (barrier_ended(w.barrier)) let_go(w);
        else still.push_back(w);
    }
    if (still.empty()) return;
    std::lock_guard lock(watched_mutex);
    watched->insert(watched->end(), still.begin(), still.end());
    watched_count.fetch_add(still.size(), std::memory_order_release);
}

}  // namespace cldmabuf
