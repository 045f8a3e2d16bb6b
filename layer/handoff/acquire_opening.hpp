// A queued acquire's opening of the CPU-access bracket on one import: the
// bounded wait for the dma-buf's fences (wait_acquire_fences, layer/handoff/cpu_access.hpp)
// and DMA_BUF_IOCTL_SYNC START, done by its host step when it runs — and the
// release fences that releases enqueued behind it handed over, attached
// right after.
//
// Why: SYNC START waits for every fence in the dma-buf in its direction,
// unbounded (drivers/dma-buf/dma-buf.c, __dma_buf_begin_cpu_access); the
// acquire's fence wait would wait for it too.  A release fence attached
// while the acquire has not opened holds the acquire until the release ran,
// which it cannot before the acquire: a cycle only the watchdog breaks.
// "Ahead" is any acquire of the dma-buf, through any of its imports: two
// imports of one dma-buf share its fences, so one import's release fence
// holds the other's START just the same (layer/core/dmabuf_aliases.hpp).  So
// a release whose dma-buf has acquires ahead that have not opened either
//   - opens them ahead, on the application's thread, then attaches now (the
//     pipelined fence at once: a compositor that takes the dma-buf right
//     after the release waits for it), when that is safe; or
//   - hands its fence to all of them: the last to finish its SYNC START
//     attaches it (none does if one of them failed or was dropped).
// Safe (layer/handoff/plan.hpp, plan_acquire_ahead) means: no step is at
// its opening, the acquires' wait lists have completed, and no fence of the
// dma-buf is pending.  The wait lists matter: an acquire held by a user event
// that a fence-honouring producer completes (it waits for the dma-buf's
// fences before writing, as Mesa does) would, opened ahead, make the
// producer wait for the release's fence, which waits for the kernel, which
// waits for the producer (the fence's bound, a second a frame), and its
// START would come before the producer's writes.
//
// The invariant (docs/layer-rules.md, "The queue protocol"): no fence of a
// release is in a dma-buf before every acquire of that dma-buf ahead of it
// (through any import) has done its SYNC START, and no SYNC START is done
// ahead for an acquire whose wait list has not completed.  A consumer that looks at the dma-buf between a
// handed-over release's enqueue and its acquire's run sees it as the
// external API still owns it — which it does.
#pragma once

#include <memory>
#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/core/command_dependencies.hpp"
#include "layer/core/registry.hpp"
#include "layer/sync/dmabuf_bridge.hpp"

namespace cldmabuf {

class AcquireOpening;

// The fences (bounded) then SYNC START, with one log line on failure: what
// every queued acquire step does on an in-place or copy-route import.
cl_int open_acquire(const Import &import);

// A pending opening of `import` for an acquire step about to be enqueued
// with that wait list (its events are retained while the opening lives),
// findable by the releases of every import of its dma-buf until it is
// retired: by retire_openings when its step's work returns, by the import's
// teardown (forget_import_state, before its fds close), or when destroyed
// (the step dropped without running).
std::shared_ptr<AcquireOpening> make_acquire_opening(const std::shared_ptr<Import> &import, cl_uint num_events,
                                                     const cl_event *wait_list);

// The step's work returned (whatever it did, early or not): its openings are
// no longer findable and hold no fd; the fences handed to those that did not
// open are left to their releases, which signal them.  Called before the
// step lets go of its memory objects.
void retire_openings(const std::vector<std::shared_ptr<AcquireOpening>> &openings);

// The acquire step's part: open_acquire unless a release did it ahead,
// then (when it succeeded) attach every release fence handed over for which
// it was the last acquire ahead to open.  A fence that does not attach is
// logged at debug; its release behaves as one without a fence.  While a
// release is at its START for this acquire (outside every lock) the step
// waits for it, bounded by CLDMABUF_FENCE_TIMEOUT_MS, and fails at the
// bound (CL_OUT_OF_RESOURCES, one log line) as its own fence wait would.
cl_int open_in_step(AcquireOpening &opening);

// The openings the acquire entry's call makes on this thread while this
// lives, which its command's record names (layer/core/command_dependencies.hpp).
class OpeningsMadeHere {
public:
    OpeningsMadeHere();
    ~OpeningsMadeHere();
    OpeningsMadeHere(const OpeningsMadeHere &) = delete;
    OpeningsMadeHere &operator=(const OpeningsMadeHere &) = delete;
    const std::vector<uint64_t> &serials() const { return serials_; }
    void add(uint64_t serial) { serials_.push_back(serial); }

private:
    std::vector<uint64_t> serials_;
    OpeningsMadeHere *outer_;
};

// A release's part, on the application's thread, for `fence` (not attached
// yet), the release being a command that may wait for `waits`: every
// acquire of `import`'s dma-buf (through any import) that has not opened and
// that the release may wait for is opened ahead now (then true: the caller
// attaches the fence now), or the fence goes to all of them (false: the
// last to open attaches it).  True as well when no such acquire is left:
// the unopened acquires the release does not wait for then wait for its
// fence.  A hand-over made while the release may wait for a user event
// narrows to the acquires it waits for once the application ended that
// event (on_user_event_ended).  Decided under the
// openings' lock; the openings to open ahead are claimed there (each with
// its own dup of the acquire's fd) and their SYNC STARTs done after the lock
// is dropped: a fence that comes in between the look and the START makes
// that START wait in the kernel, and nothing else waits behind it.
// Without `waits`: a release that may wait for every acquire.
// `own_bracket` false: the fence is not a release of `import` (the cover of
// the writes ahead of one, layer/handoff/release_fences.cpp): it closes no
// bracket and nests no acquire.
bool open_ahead_or_hand_over(const Import &import, std::shared_ptr<sync::DmabufSignal> fence,
                             const MayWaitFor &waits = MayWaitFor{.opaque = true}, bool own_bracket = true);

}  // namespace cldmabuf
