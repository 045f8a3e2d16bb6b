// The application's user events that have not been given a status yet: an
// external party (a producer thread, another API) still has to complete
// them, and every command waiting on one waits for that party.  The layer
// may do a queued acquire's opening ahead, at its release's enqueue, only
// while there is none (layer/handoff/acquire_opening.hpp): a release fence
// attached then cannot be what that party waits for before it completes the
// event (issue #28 item 2, the fence-honouring producer).
//
// Counted through the layer's clCreateUserEvent and clSetUserEventStatus
// slots; the layer's own user events (host-step gates) go to the ICD
// directly and are not counted.  A user event released without a status
// stays counted (commands waiting on it never run either).
#pragma once

#include <cstddef>

#include "layer/cl_compat.h"

namespace cldmabuf {

cl_event CL_API_CALL create_user_event(cl_context context, cl_int *errcode_ret);
cl_int CL_API_CALL set_user_event_status(cl_event event, cl_int status);

// How many of the application's user events have no status yet.
size_t user_events_pending();

}  // namespace cldmabuf
