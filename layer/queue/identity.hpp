// A queue's context and device, the two questions every acquire and release
// asks of it before anything else (layer/handoff/acquire_release.cpp,
// collect).  Remembered for the one queue asked last, since a program's
// handoffs go to one queue in turn: two ICD calls saved per command (on
// rusticl under the VM lane's TCG about 4 us each, a quarter of what a
// quiet handoff costs over its floor).
//
// Forgotten whenever that handle is released through the layer or handed
// out again by a create: an ICD may reuse a released queue's handle for a
// new queue, and the layer sees both (layer/core/events.cpp).
#pragma once

#include "layer/base/cl_compat.h"

namespace cldmabuf {

// CL_SUCCESS with both filled, or the ICD's error for an invalid queue.
cl_int queue_context_and_device(cl_command_queue queue, cl_context *context, cl_device_id *device);

// The handle is being released or was just created: ask the ICD next time.
void forget_queue_identity(cl_command_queue queue);

}  // namespace cldmabuf
