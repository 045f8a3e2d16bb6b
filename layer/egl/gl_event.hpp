// cl_khr_gl_event for GL-sharing contexts the layer serves:
// clCreateEventFromGLsyncKHR returns an event (a user event of the ICD, so
// it goes in any wait list, e.g. of clEnqueueAcquireGLObjects) that completes
// when the GL sync object signals.  One waiter thread watches all pending
// syncs with glClientWaitSync in a private GLES context per producer context
// (created sharing the producer's objects: a GLsync belongs to its share
// group), bounded by CLDMABUF_FENCE_TIMEOUT_MS: a sync that does not signal
// in time fails the event (CL_OUT_OF_RESOURCES, through the layer's event
// table) instead of hanging its waiters.
#pragma once

#include <string>

#include "layer/base/cl_compat.h"
#include "layer/egl/egl_api.hpp"

namespace cldmabuf {

// The event, or nullptr with *code and *why (CL_INVALID_GL_OBJECT for a sync
// that the producer's current context says is not one).
cl_event gl_sync_event(const EglApi &egl, cl_context context, EGLDisplay dpy, EGLContext producer, GLsync sync,
                       cl_int *code, std::string *why);

}  // namespace cldmabuf
