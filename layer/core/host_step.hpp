// A host-side step inside a command queue.
//
// Acquire, release, map synchronisation and blitter copies all need host work
// (kernel fence waits, DMA_BUF_IOCTL_SYNC, execbuffer) that runs after every
// earlier command of the queue and every event of the wait list, and before
// every later command.  The ICD knows nothing of that work, so it is stitched
// into the queue with standard commands:
//
//   marker(wait list) --callback--> worker: work() --> user event U
//   barrier(U) <-- later commands wait here
//
// The barrier's event is the step's event; its CL_EVENT_COMMAND_TYPE is
// reported as `type` by the layer.  work() returns CL_SUCCESS or a negative
// status that becomes the step's error status: in the layer's side table
// always, and in the user event U (so in the ICD's barrier and the commands
// behind it) where the ICD handles failed user events (layer/core/failed_events.hpp).
// Each command queue has its own worker thread (layer/core/worker.hpp): steps of
// one queue run in order, a step stuck on a fence never delays another queue.
#pragma once

#include <functional>
#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/core/icd_ref.hpp"

namespace cldmabuf {

struct HostStep {
    cl_command_queue queue = nullptr;
    cl_uint num_events = 0;
    const cl_event *wait_list = nullptr;
    cl_command_type type = 0;  // reported for the returned event (0: leave the ICD's)
    // Runs on the queue's worker once the marker completed; `prior_status`
    // is negative when an earlier command or a waited event failed, or (side-
    // table mode) when an earlier layer step of the queue failed and no
    // clFinish has reported it yet.
    std::function<cl_int(cl_int prior_status)> work;
    // Commands the ICD runs after work() and before the barrier, e.g. the
    // device copy of an import without shared memory.  They receive the
    // user event to wait on and append their own events to `after`.
    std::function<cl_int(cl_event gate, std::vector<cl_event> *after)> device_commands;
    // Side-table mode only (layer/core/failed_events.hpp), when work() failed: runs
    // on the worker before the gate opens, while the ICD's commands behind
    // the step have not started (a failed acquire takes its dma-bufs away
    // from them, layer/handoff/failed_acquire_shield.hpp).
    std::function<void()> before_open_after_failure;
    // Memory objects the work touches: retained until it finished, so that an
    // application releasing them right after enqueueing cannot pull the
    // dma-buf (and its fd) away from under the worker.
    std::vector<cl_mem> keep_alive;
    // What the work waits for on those objects' dma-bufs when it runs; a
    // release asks before it puts its fence into one (host_steps_unfinished_on).
    enum class Waits {
        // Their fences as they are when it runs: a poll, DMA_BUF_IOCTL_SYNC
        // START (which waits for every fence, unbounded), a blitter
        // execbuffer on the dma-buf (implicit sync), a tiled shadow's
        // de-/re-tile.  A release fence attached before would hold it until
        // the fence timeout.  Every step but the two below.
        dmabuf_fences,
        // A queued acquire with an opening (fence wait + SYNC START) that
        // attaches the fences of releases enqueued behind it once it ran
        // (layer/handoff/acquire_opening.hpp).
        openable_acquire,
        // Nothing of the dma-buf's: a release (SYNC END, a CPU write-back,
        // signalling its fence).  Not counted per object: a later release
        // may put its fence in while one is unfinished (counted, the next
        // release on that dma-buf would attach nothing until the earlier
        // release's work returned, although its step had signalled its fence
        // and a consumer had read the bytes; the next consumer would read
        // stale bytes).
        nothing,
    };
    Waits waits = Waits::dmabuf_fences;
    // A marker the caller already enqueued (the handoff's fast path tried it
    // and found something to wait for): the step takes its reference and
    // enqueues none of its own, unless the step has a wait list, which that
    // marker was enqueued before: then it is released and the step's own
    // marker waits for the list.
    IcdEvent marker;
};

// CL_INVALID_EVENT_WAIT_LIST for a count/list mismatch or an invalid event,
// CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST when an event already failed.
cl_int check_wait_list(cl_uint num_events, const cl_event *wait_list);

// Whether the queue records profiling timestamps (a step's event then
// answers with its own, layer/core/step_times.hpp).
bool profiling_queue(cl_command_queue queue);
// Whether the queue runs its commands out of order (an unanswered query: in order).
bool out_of_order_queue(cl_command_queue queue);

// The steps enqueued earlier that list `mem` in keep_alive and have not
// finished their work yet (their marker has not completed, or the work
// runs), counted by what they wait for.
struct UnfinishedSteps {
    size_t dmabuf_fences = 0;
    size_t openable_acquires = 0;
};
UnfinishedSteps host_steps_unfinished_on(cl_mem mem);
// Whether any queue has a step enqueued whose work has not finished.
bool host_steps_unfinished();

// Enqueues the step.  On success *event (if non-NULL) receives the step's event.
cl_int enqueue_host_step(HostStep step, cl_event *event);

// The steps of `queue` (of every queue: nullptr) whose marker the ICD
// terminated (a failed event in its wait list, a command ahead that failed)
// and whose callback has not come are run now, on their workers, with that
// status, as the callback would have (PoCL 3.1 and 5.0 never call it): the
// work sees the failure, the keep_alive objects and the counts go, the gate
// opens.  A callback that comes later finds the step claimed.  Waits for
// those runs, bounded (they may queue behind a step at its fence wait).
// Called where the layer already intercepts the application: clFinish,
// clWaitForEvents, clSetUserEventStatus with a failure, clReleaseCommandQueue,
// a status query that answers a failure.  Also releases the events of
// steps whose barrier ended without its callback (layer/core/step_events.hpp).
void resolve_terminated_steps(cl_command_queue queue);

// With CLDMABUF_DEBUG=finish-waits-steps (else it returns at once) a
// clFinish of `queue` first waits
// here, on the caller's thread, for the queue's polled steps
// (layer/core/step_poll.hpp) to run, polling their markers itself, so that
// the ICD's clFinish is entered with no user event of the queue open.  Why
// it may matter: on NVIDIA half of the polled steps' markers complete only
// about 20 ms late, which would be the case if NVIDIA's clFinish, entered
// while a user event is open, wakes late (tests/nvidia/step_latency_probe.c,
// poll-thr against poll-wait, tells).  Not measured on NVIDIA, hence a
// debug word.  Bounded by the fence bound + 1 s; past it the ICD's
// clFinish waits as before.
void wait_for_polled_steps(cl_command_queue queue);

}  // namespace cldmabuf
