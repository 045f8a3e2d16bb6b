// The fast path's marker (layer/handoff/acquire_release.cpp): enqueued with
// no wait list, it completes only after every earlier command of the
// queue, so "is the queue idle" is asked of it — briefly, on the caller's
// thread — unless the plan knows the answer (layer/handoff/plan.hpp).
#pragma once

#include "layer/base/cl_compat.h"

namespace cldmabuf {

// The marker's execution status (CL_QUEUED when the ICD does not answer).
cl_int status_of(cl_event marker);

// Enqueues the command's marker; *idle when every earlier command of the
// queue has finished.  `known_idle`: the caller knows it, and the marker is
// neither flushed nor asked.
cl_int enqueue_marker(cl_command_queue queue, bool known_idle, cl_event *marker, bool *idle);

}  // namespace cldmabuf
