// Running a blitter batch: submit, bounded wait for its out-fence, stats.
// Written once for every batch the layer makes (copies, de-tile, re-tile),
// and the host step that puts a copy's batch in queue order
// (docs/blitter.md, "Queue ordering and events").
#pragma once

#include <cstdint>
#include <functional>

#include "layer/base/cl_compat.h"
#include "layer/i915/blt_engine.hpp"

namespace cldmabuf {

// Where a batch's bytes are counted in stats.
enum class BlitKind { copy, detile, retile };

// Builds and submits one batch on `ctx` (nullptr: the engine's own
// context): 0 and *fence (a sync_file the caller of the function owns), or
// -errno.  in_fence >= 0: a sync_file the batch waits for on the GPU
// (I915_EXEC_FENCE_IN; it stays the caller's).
using BlitSubmit = std::function<int(const i915::BltContext *ctx, int in_fence, int *fence)>;

// Submits on the engine's own GEM context, waits for the out-fence within
// CLDMABUF_FENCE_TIMEOUT_MS (then cancels the context's batches), closes it
// and counts `bytes` under `kind`.  CL_SUCCESS, or after one LOG_ERROR line
// naming `what`: CL_OUT_OF_HOST_MEMORY (submission -ENOMEM),
// CL_OUT_OF_RESOURCES (any other refusal, a fence that did not signal in
// time, a batch that failed).  Never waits unbounded.
cl_int submit_and_wait(const char *what, BlitKind kind, uint64_t bytes, const BlitSubmit &submit);

// Enqueues `submit` as a host step of `queue`, on the queue's own GEM
// context (layer/blit/queue_context.hpp): it runs once the wait list
// and every earlier command completed; the step's event (type `type`)
// completes when the batch's out-fence signalled, or fails with
// submit_and_wait's status.  `what` names the call in log lines; `bytes`
// is counted in stats().blt_bytes.  Unless CLDMABUF_BLT_SEMAPHORE_FENCES=off
// the copy takes a semaphore wait enqueued right before it as its FENCE_IN
// and offers its batch fence to a signal enqueued right after it, where
// nothing came between (layer/blit/fence_chain.hpp).
cl_int enqueue_blit(cl_command_queue queue, cl_mem src, cl_mem dst, cl_command_type type, cl_uint num_events,
                    const cl_event *wait_list, cl_event *event, const char *what, uint64_t bytes,
                    BlitSubmit submit);

}  // namespace cldmabuf
