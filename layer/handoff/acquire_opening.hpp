// A queued acquire's opening of the CPU-access bracket on one import: the
// bounded wait for the dma-buf's fences (layer/handoff/acquire_fences.hpp)
// and DMA_BUF_IOCTL_SYNC START.  Its host step does it when it runs, unless
// a release enqueued behind it did it first (issue #20, the pipelined
// acquire + kernel + release).
//
// Why a release opens it ahead: SYNC START waits for every fence in the
// dma-buf in its direction, unbounded (drivers/dma-buf/dma-buf.c,
// __dma_buf_begin_cpu_access: dma_resv_wait_timeout(..., MAX_SCHEDULE_TIMEOUT);
// i915's begin_cpu_access waits too; the virtual Gen9 models it).  Whatever
// the step waited on before, a START that runs after the release put its
// fence into the dma-buf waits for that fence, which only the release's own
// step, queued behind the acquire, signals: the acquire would hang until the
// watchdog let the fence go (CLDMABUF_FENCE_TIMEOUT_MS), and consumers with
// it.  So a release that wants to attach its fence while such an acquire has
// not run does the acquire's opening first, on the application's thread,
// but only when it cannot wait: no fence of the dma-buf is pending now (a
// zero-timeout poll), so the acquire's fences (those submitted before it,
// and any since) are done and the START returns at once.  The acquire's step
// then runs later in queue order and skips it.  Otherwise (a producer fence
// still pending, the step already opening) the release attaches nothing, as
// before.
//
// What the acquire then no longer waits for: fences added after the release
// was enqueued (they come after the release's own fence in the dma-buf; the
// acquire promised to wait for work submitted before it).  What moves
// earlier: the SYNC START, from the step's run to the release's enqueue,
// before the acquire's wait list completed.  The bracket still opens after
// every fence it must follow and before the device's access (the kernel
// waits for the acquire's step); the wait list orders OpenCL commands, which
// the step still follows.
#pragma once

#include <memory>

#include "layer/cl_compat.h"
#include "layer/registry.hpp"

namespace cldmabuf {

class AcquireOpening;

// The fences (bounded) then SYNC START, with one log line on failure: what
// every queued acquire step does on an in-place or copy-route import.
cl_int open_acquire(const Import &import);

// A pending opening of `import` for an acquire step about to be enqueued,
// findable by open_acquires_ahead until it is destroyed (with the step's
// work, whether it ran or was dropped).
std::shared_ptr<AcquireOpening> make_acquire_opening(const std::shared_ptr<Import> &import);

// The acquire step's part: open_acquire, unless a release did it ahead.
cl_int open_in_step(AcquireOpening &opening);

// A release's part, on the application's thread before it attaches its
// fence: every pending opening of `import` is done (by its step) or done
// now, ahead.  False, with nothing changed for the openings it could not
// do, when one is running in its step, or the dma-buf has a fence pending
// now, or the START fails (the step then tries it itself).
bool open_acquires_ahead(const Import &import);

}  // namespace cldmabuf
