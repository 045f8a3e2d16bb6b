#include "layer/handoff/marker_watch.hpp"

#include <chrono>
#include <thread>

#include "layer/core/dispatch.hpp"

namespace cldmabuf {
namespace {
// How long the application's thread may watch a marker the device already
// holds.  An ICD completes a marker asynchronously even on an idle queue
// (PoCL 3.1: within a microsecond; yielding, 600 of 600 within this bound
// at load 7 on 2 cores), so "is the queue idle" needs a short look.  Past
// the bound the command takes the queued path: an ICD that reports a marker
// behind a running kernel as CL_SUBMITTED costs the caller at most this.
// At least idle_looks looks as well: on a slow machine (the VM lane's TCG)
// the ICD's thread is slower by the same factor as each look.
constexpr auto idle_look = std::chrono::microseconds(50);
constexpr int idle_looks = 64;

}  // namespace

cl_int status_of(cl_event marker) {
    cl_int status = CL_QUEUED;
    if (next().clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) !=
        CL_SUCCESS)
        return CL_QUEUED;
    return status;
}

// Enqueues the command's marker; *idle when every earlier command of the
// queue has finished.  `known_idle` (the quiet queue, or a copy-route
// acquire that needs no idle queue): the caller knows it, and the marker is
// neither flushed nor asked.  Otherwise a marker still CL_QUEUED after a
// flush waits for earlier commands (PoCL submits a command to its device
// once its dependencies completed): no waiting for it here.  One
// CL_SUBMITTED or CL_RUNNING is watched for up to idle_look and idle_looks.
cl_int enqueue_marker(cl_command_queue queue, bool known_idle, cl_event *marker, bool *idle) {
    if (cl_int err = next().clEnqueueMarkerWithWaitList(queue, 0, nullptr, marker); err != CL_SUCCESS) return err;
    if (known_idle) {
        *idle = true;
        return CL_SUCCESS;
    }
    cl_int status = status_of(*marker);
    if (status == CL_QUEUED) {
        next().clFlush(queue);
        status = status_of(*marker);
    }
    if (status == CL_SUBMITTED || status == CL_RUNNING) {
        const auto deadline = std::chrono::steady_clock::now() + idle_look;
        // Yield between looks: on a loaded machine the ICD's own thread
        // needs the core this thread would spin on.
        int looks = 0;
        do {
            std::this_thread::yield();
            status = status_of(*marker);
        } while ((status == CL_SUBMITTED || status == CL_RUNNING) &&
                 (++looks < idle_looks || std::chrono::steady_clock::now() < deadline));
    }
    *idle = status == CL_COMPLETE;
    return CL_SUCCESS;
}

}  // namespace cldmabuf
