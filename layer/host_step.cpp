#include "layer/host_step.hpp"

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
};

void release_all(const std::vector<cl_mem> &mems) {
    for (cl_mem m : mems) next().clReleaseMemObject(m);
}

void CL_CALLBACK on_marker_complete(cl_event, cl_int status, void *user_data) {
    auto *pending = static_cast<PendingStep *>(user_data);
    // Never block in an ICD callback thread: hand the work to our worker.
    post_to_worker([pending, status] {
        cl_int result = pending->work(status < 0 ? status : CL_SUCCESS);
        next().clSetUserEventStatus(pending->gate, result == CL_SUCCESS ? CL_COMPLETE : result);
        next().clReleaseEvent(pending->gate);
        next().clReleaseEvent(pending->marker);
        release_all(pending->keep_alive);
        delete pending;
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
        if (status < 0) return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
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
            // Nothing was enqueued behind the gate that can run: open it with an error.
            next().clSetUserEventStatus(gate, err);
            next().clReleaseEvent(gate);
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
        next().clSetUserEventStatus(gate, err);
        next().clReleaseEvent(gate);
        next().clReleaseEvent(marker);
        return err;
    }

    for (cl_mem m : step.keep_alive) next().clRetainMemObject(m);
    auto *pending = new PendingStep{std::move(step.work), marker, gate, std::move(step.keep_alive)};
    err = next().clSetEventCallback(marker, CL_COMPLETE, on_marker_complete, pending);
    if (err != CL_SUCCESS) {
        next().clSetUserEventStatus(gate, err);
        next().clReleaseEvent(gate);
        next().clReleaseEvent(marker);
        next().clReleaseEvent(barrier);
        release_all(pending->keep_alive);
        delete pending;
        return err;
    }
    // The marker must reach the device for its callback to fire even if the
    // application only waits on the step's event later.
    next().clFlush(step.queue);

    if (event) {
        if (step.type) event_types().add(barrier, step.type);
        *event = barrier;
    } else {
        next().clReleaseEvent(barrier);
    }
    return CL_SUCCESS;
}

}  // namespace cldmabuf
