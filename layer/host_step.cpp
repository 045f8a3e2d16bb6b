#include "layer/host_step.hpp"

#include <mutex>
#include <unordered_set>

#include "layer/dispatch.hpp"
#include "layer/log.hpp"
#include "layer/registry.hpp"
#include "layer/worker.hpp"

namespace cldmabuf {
namespace {

struct PendingStep {
    std::function<cl_int(cl_int)> work;
    cl_event marker = nullptr;
    cl_event gate = nullptr;
    std::vector<cl_mem> keep_alive;
    cl_event reported = nullptr;  // the step's event as the application holds it (retained)
};

void release_all(const std::vector<cl_mem> &mems) {
    for (cl_mem m : mems) next().clReleaseMemObject(m);
}

// Steps whose marker callback has not fired yet: a step runs exactly once,
// even if an ICD delivered a CL_COMPLETE callback twice.
std::mutex pending_mutex;
std::unordered_set<PendingStep *> *pending_steps = new std::unordered_set<PendingStep *>;

bool claim(PendingStep *pending) {
    std::lock_guard lock(pending_mutex);
    return pending_steps->erase(pending) == 1;
}

void CL_CALLBACK on_marker_complete(cl_event, cl_int status, void *user_data) {
    auto *pending = static_cast<PendingStep *>(user_data);
    if (!claim(pending)) return;
    // Never block in an ICD callback thread: hand the work to our worker.
    post_to_worker([pending, status] {
        cl_int result = pending->work(status < 0 ? status : CL_SUCCESS);
        // Record the failure before opening the gate, so that a waiter woken
        // by the gate already sees it.  The gate itself always completes.
        if (result != CL_SUCCESS && pending->reported) event_types().set_failed(pending->reported, result);
        next().clSetUserEventStatus(pending->gate, CL_COMPLETE);
        if (pending->reported) {
            release_layer_event(pending->reported);
            next().clReleaseEvent(pending->reported);
        }
        // The gate is released by the barrier's callback, not here.
        release_all(pending->keep_alive);
        delete pending;
    });
}

// PoCL 3.1 takes no reference on a user event that a command waits on, and
// its device thread still touches the gate after clSetUserEventStatus
// returns; so the gate lives until the barrier that waits on it completed.
// The marker is kept as long: releasing it while PoCL's device thread is
// still finishing it crashed PoCL 3.1 under MALLOC_PERTURB_.
struct StepEvents {
    cl_event marker;
    cl_event gate;
};
void CL_CALLBACK release_step_events(cl_event, cl_int, void *data) {
    auto *events = static_cast<StepEvents *>(data);
    post_to_worker([events] {
        next().clReleaseEvent(events->gate);
        next().clReleaseEvent(events->marker);
        delete events;
    });
}

}  // namespace

cl_int check_wait_list(cl_uint num_events, const cl_event *wait_list) {
    if ((num_events > 0) != (wait_list != nullptr)) return CL_INVALID_EVENT_WAIT_LIST;
    for (cl_uint i = 0; i < num_events; ++i) {
        cl_int status = CL_COMPLETE;
        if (next().clGetEventInfo(wait_list[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                                  nullptr) != CL_SUCCESS)
            return CL_INVALID_EVENT_WAIT_LIST;
        // An event that already failed: the step could never run (and some
        // ICDs never complete a command that waits on one).
        if (status < 0 || event_types().failed(wait_list[i], &status))
            return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    }
    return CL_SUCCESS;
}

cl_int enqueue_host_step(HostStep step, cl_event *event) {
    cl_context context = nullptr;
    cl_int err = next().clGetCommandQueueInfo(step.queue, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr);
    if (err != CL_SUCCESS) return CL_INVALID_COMMAND_QUEUE;
    if (cl_int failed = check_wait_list(step.num_events, step.wait_list); failed != CL_SUCCESS) return failed;

    cl_event marker = nullptr;
    err = next().clEnqueueMarkerWithWaitList(step.queue, step.num_events, step.wait_list, &marker);
    if (err != CL_SUCCESS) return err;  // the ICD validated the wait list
    cl_event gate = next().clCreateUserEvent(context, &err);
    if (!gate) {
        next().clReleaseEvent(marker);
        return err;
    }

    std::vector<cl_event> after{gate};
    if (step.device_commands) {
        err = step.device_commands(gate, &after);
        if (err != CL_SUCCESS) {
            // Open the gate so the commands already behind it can retire.  It
            // is not released: they may still reference it (see release_step_events).
            next().clSetUserEventStatus(gate, CL_COMPLETE);
            next().clReleaseEvent(marker);
            for (size_t i = 1; i < after.size(); ++i) next().clReleaseEvent(after[i]);
            return err;
        }
    }
    cl_event barrier = nullptr;
    err = next().clEnqueueBarrierWithWaitList(step.queue, static_cast<cl_uint>(after.size()), after.data(),
                                              &barrier);
    for (size_t i = 1; i < after.size(); ++i) next().clReleaseEvent(after[i]);
    if (err != CL_SUCCESS) {
        next().clSetUserEventStatus(gate, CL_COMPLETE);  // kept: device commands may wait on it
        next().clReleaseEvent(marker);
        return err;
    }

    for (cl_mem m : step.keep_alive) next().clRetainMemObject(m);
    auto *pending = new PendingStep{std::move(step.work), marker, gate, std::move(step.keep_alive), nullptr};
    if (event) {
        // Registered before the work can run, so a failure has an entry to land in.
        event_types().add(barrier, step.type);
        next().clRetainEvent(barrier);
        pending->reported = barrier;
    }
    auto *step_events = new StepEvents{marker, gate};
    if (next().clSetEventCallback(barrier, CL_COMPLETE, release_step_events, step_events) != CL_SUCCESS)
        delete step_events;  // never released then: a leak beats a use-after-free
    {
        std::lock_guard lock(pending_mutex);
        pending_steps->insert(pending);
    }
    err = next().clSetEventCallback(marker, CL_COMPLETE, on_marker_complete, pending);
    if (err != CL_SUCCESS) {
        claim(pending);
        // Open the gate (the barrier's callback releases it); the command
        // itself is reported as not enqueued.
        next().clSetUserEventStatus(gate, CL_COMPLETE);
        if (pending->reported) {
            event_types().remove(barrier);
            next().clReleaseEvent(barrier);
        }
        next().clReleaseEvent(barrier);
        release_all(pending->keep_alive);
        delete pending;
        return err;
    }
    // The marker must reach the device for its callback to fire even if the
    // application only waits on the step's event later.
    next().clFlush(step.queue);

    if (event) {
        *event = barrier;
    } else {
        next().clReleaseEvent(barrier);
    }
    return CL_SUCCESS;
}

}  // namespace cldmabuf
