// The copy route's uploads as events: the ICD's Write that refreshes an
// import's device copy from its dma-buf, enqueued by the acquire (at once on
// the fast path, behind the step's gate on the queued one).
//
// Why: a copy-route import the device only reads (CL_MEM_READ_ONLY) has
// nothing written back at release, and its dma-buf's pages were read by
// that upload alone: the device's kernels read their own copy.  So the
// release's SYNC END needs the upload done, not the kernels that follow it.
// Asked this way, a camera's frame (acquire, kernel, release, clFinish) no
// longer waits for the kernel in a host step, whose marker callback and user
// event gate cost NVIDIA about 10 ms per frame (docs/benchmarks.md, "NVIDIA").
//
// An import keeps its last upload's event (retained) until the next acquire,
// its acquire's failure (layer/handoff/acquire_release.cpp,
// shield_after_failure) or its teardown; an acquire whose upload runs inside its step (pinned
// staging, a registered transfer) keeps none: that step has finished before
// a release may ask (the release's way requires no unfinished layer step).
#pragma once

#include <memory>
#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/core/registry.hpp"

namespace cldmabuf {

// The acquire's upload of `import`, enqueued: `upload` is retained.
void note_upload_enqueued(const Import &import, cl_event upload);
// An acquire of `import` whose upload (if any) is not an event of its own.
void forget_upload(const Import &import);

// Whether every upload the imports keep has completed, flushing `queue` and
// waiting for them on the caller's thread at most about as long as the
// bytes take at a slow pageable rate (uploads_wait_bound); false after that,
// or when one failed (the queued step then reports the failure).
bool uploads_done_within_bound(cl_command_queue queue, const std::vector<std::shared_ptr<Import>> &list);

}  // namespace cldmabuf
