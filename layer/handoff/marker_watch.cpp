#include "layer/handoff/marker_watch.hpp"

#include <chrono>
#include <thread>

#include "layer/core/dispatch.hpp"
#include "layer/icd/profile.hpp"

namespace cldmabuf {

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
// CL_SUBMITTED or CL_RUNNING is watched within the platform's marker timing
// (its profile, layer/icd/profile.hpp: why those bounds), asked only then.
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
        const MarkerTiming timing = profile_marker_timing(queue_platform(queue));
        const auto deadline = std::chrono::steady_clock::now() + timing.look;
        // Yield between looks: on a loaded machine the ICD's own thread
        // needs the core this thread would spin on.
        int looks = 0;
        do {
            std::this_thread::yield();
            status = status_of(*marker);
        } while ((status == CL_SUBMITTED || status == CL_RUNNING) &&
                 (++looks < timing.looks || std::chrono::steady_clock::now() < deadline));
    }
    *idle = status == CL_COMPLETE;
    return CL_SUCCESS;
}

}  // namespace cldmabuf
