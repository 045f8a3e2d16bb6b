// A queued acquire's opening of the CPU-access bracket on one import: the
// bounded wait for the dma-buf's fences (layer/handoff/acquire_fences.hpp)
// and DMA_BUF_IOCTL_SYNC START, done by its host step when it runs — and the
// release fences that releases enqueued behind it handed over, attached
// right after (issue #28 item 2).
//
// Why a release hands its fence over instead of attaching it: SYNC START
// waits for every fence in the dma-buf in its direction, unbounded
// (drivers/dma-buf/dma-buf.c, __dma_buf_begin_cpu_access); the acquire's
// fence wait would wait for it too.  A release fence attached while the
// acquire has not run holds the acquire until the release ran, which it
// cannot before the acquire: a cycle that only the watchdog breaks
// (CLDMABUF_FENCE_TIMEOUT_MS).  Issue #20 broke it by doing the acquire's
// SYNC START ahead, at the release's enqueue, when no fence was pending
// then; issue #28 found what that costs: an acquire held by a user event
// that a fence-honouring producer completes (it waits for the dma-buf's
// fences before writing, as Mesa does) made the producer wait for the
// release's fence, which waits for the kernel, which waits for the
// producer — 1 s a frame; and the START moved before the producer's
// writes.
//
// The invariant (docs/layer-rules.md, "The queue protocol"): no fence of a
// release is in a dma-buf before the acquire ahead of it on that import has
// run its opening, and no SYNC START is done on behalf of an acquire before
// its step runs (its wait list and every earlier command complete).  So the
// acquire waits only for fences that are not the layer's own, and a
// consumer that looks at the dma-buf between the release's enqueue and the
// acquire's run sees it as the external API still owns it — which it does.
// From the acquire's run on, the release's fence is there: an implicit-sync
// consumer waits for the release (the pipelined fence, kept).
#pragma once

#include <memory>

#include "layer/cl_compat.h"
#include "layer/registry.hpp"
#include "layer/sync/dmabuf_bridge.hpp"

namespace cldmabuf {

class AcquireOpening;

// The fences (bounded) then SYNC START, with one log line on failure: what
// every queued acquire step does on an in-place or copy-route import.
cl_int open_acquire(const Import &import);

// A pending opening of `import` for an acquire step about to be enqueued,
// findable by hand_fence_to_acquire until it is destroyed (with the step's
// work, whether it ran or was dropped).
std::shared_ptr<AcquireOpening> make_acquire_opening(const std::shared_ptr<Import> &import);

// The acquire step's part: open_acquire, then (when it succeeded) attach
// every release fence handed over.  A fence that does not attach is logged
// at debug; its release behaves as one without a fence.
cl_int open_in_step(AcquireOpening &opening);

// A release's part, on the application's thread: `fence` (not attached)
// goes to the newest opening of `import` that has not finished, which
// attaches it after its SYNC START.  False when none is left (every acquire
// of the import ran): the caller attaches it now.
bool hand_fence_to_acquire(const Import &import, std::shared_ptr<sync::DmabufSignal> fence);

}  // namespace cldmabuf
