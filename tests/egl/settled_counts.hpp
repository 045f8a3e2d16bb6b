// Leak counts for the EGL fault sweep: the process's open fds and its
// file-backed mappings, each taken once the layer's host-step workers are
// idle and the count has stopped moving (Mesa's and the ICD's own threads open
// and close files of their own a moment after the call that freed them).
// The same rules as tests/e2e/layer_probe.cpp, without the e2e fixture.
#pragma once

#include <CL/cl.h>

namespace egltest {

int settled_fds(cl_platform_id platform);
// File-backed mappings other than loaded code (a dma-buf mapping is one).
int settled_mappings(cl_platform_id platform);

}  // namespace egltest
