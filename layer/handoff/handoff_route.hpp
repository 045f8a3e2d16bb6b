// The three ways an import's handoff reaches its dma-buf, one type each,
// with its own acquire, release, map and unmap steps:
//   - zero-copy (layer/handoff/route_zero_copy.cpp): the ICD's object lies
//     over the dma-buf's mapping; a handoff opens and closes the CPU-access
//     bracket (fence wait, DMA_BUF_IOCTL_SYNC START and END), and so do maps;
//   - copy (layer/handoff/route_copy.cpp): the ICD keeps its own copy; the
//     same bracket around the device copy's upload on acquire and
//     write-back on release (layer/handoff/transfers.hpp); maps are the ICD's;
//   - tiled shadow (layer/handoff/route_tiled_shadow.cpp): the ICD's image
//     lies over (or copies) the layer's linear shadow, which the blitter
//     de-tiles on acquire and re-tiles on release; the CPU never touches
//     the dma-buf.
// layer/handoff/acquire_release.cpp collects the imports, plans the command
// (layer/handoff/plan.hpp) from the facts each route adds, and calls each
// import's route in the order the plan's way has; map_sync.cpp asks whether
// a map is bracketed.  route_of() is the one place that looks at which route
// an import took (Import::route, decided at import, and its tiling).
//
// The routes hold no per-import state: one static object each (two for the
// tiled shadow: over the shadow, or the ICD's copy of it), chosen per import
// per command with no allocation; a step is one virtual call.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/core/icd_ref.hpp"
#include "layer/core/registry.hpp"
#include "layer/handoff/plan.hpp"

namespace cldmabuf {

class AcquireOpening;
class PinnedStaging;
class ReleaseWriteBack;

// What one import's queued acquire carries from its enqueue to its step.
struct AcquireSlot {
    std::shared_ptr<AcquireOpening> opening;  // the step's opening (layer/handoff/acquire_opening.hpp), or none
    std::shared_ptr<PinnedStaging> staging;   // the upload goes through pinned staging (layer/handoff/staging.hpp)
    const void *upload_from = nullptr;        // the direct Write reads this snapshot, not the dma-buf (alias_merge.hpp)
};

// What one import's release carries from its enqueue to its step.
struct ReleaseSlot {
    std::shared_ptr<ReleaseWriteBack> write_back;  // where its Read goes (alias_merge.hpp, decide_release)
    std::shared_ptr<PinnedStaging> staging;        // the write-back goes through pinned staging
};

class HandoffRoute {
public:
    // The plan's facts (layer/handoff/plan.hpp) that depend on this import's route.
    virtual void add_facts(const Import &import, bool acquire, HandoffFacts *facts) const = 0;
    // Whether the command moves bytes between the dma-buf and a device copy
    // (the acquire's upload, the release's write-back): such a command's
    // marker orders those transfers, so it is enqueued even on a quiet queue.
    virtual bool moves_bytes(const Import &, bool /*acquire*/) const { return false; }
    // Before an acquire's facts are asked: what the route makes for an
    // import once and the facts depend on (the copy route's registration).
    virtual void before_acquire_facts(Import &, cl_command_queue) const {}

    // -- Acquire on the fast path (the queue idle, the caller's thread; a
    //    tiled shadow never comes here: its facts send it queued).
    // Opens the CPU-access bracket; its close is close_at_once.
    virtual cl_int open_at_once(const Import &import) const = 0;
    // Then the upload into the device's copy, with no wait list: *done its
    // event, left null where nothing moves.  One log line on failure.
    virtual cl_int upload_at_once(cl_command_queue, const Import &, cl_event *) const { return CL_SUCCESS; }

    // -- Acquire, queued.
    // Whether the step may take an opening (layer/handoff/acquire_opening.hpp):
    // only a step whose every import opens with a fence wait and SYNC START.
    virtual bool takes_opening() const = 0;
    // At the enqueue, before the step: what the step and its device commands need.
    virtual void prepare_acquire(Import &, cl_command_queue, AcquireSlot *) const {}
    // On the layer's worker, after the wait list: the step's own part.
    virtual cl_int acquire_in_step(Import &import, const AcquireSlot &slot) const = 0;
    // The ICD's commands behind the step's gate: *done their event, left
    // null where there is none.
    virtual cl_int acquire_behind_gate(cl_command_queue, const Import &, const AcquireSlot &, cl_event,
                                       cl_event *) const {
        return CL_SUCCESS;
    }

    // -- Release on the fast path (every earlier command finished).
    // The device copy back into the dma-buf (or the write-back's scratch),
    // at once.  One log line on failure.
    virtual cl_int write_back_at_once(cl_command_queue, Import &, const ReleaseSlot &, cl_event) const {
        return CL_SUCCESS;
    }
    // Closes the CPU-access bracket (`what`: the log line's command).
    virtual cl_int close_at_once(const Import &import, const char *what) const = 0;

    // -- Release, queued.
    // At the enqueue (slot->write_back already decided).
    virtual void prepare_release(Import &, cl_command_queue, ReleaseSlot *) const {}
    // The ICD's commands the step waits for (the write-back's Read after
    // `waits`): *done their event, left null where there is none.
    virtual cl_int release_before_step(cl_command_queue, const Import &, const ReleaseSlot &, cl_uint,
                                       const cl_event *, cl_event *) const {
        return CL_SUCCESS;
    }
    // Whether the step waits for the dma-buf's fences (a blitter batch on it does).
    virtual bool release_waits_for_fences() const = 0;
    // On the layer's worker, every earlier command finished: *result is the
    // command's status so far (a failure leaves the dma-buf as it was) and
    // becomes this import's first failure; `still_writing` receives a
    // transfer that outlived its wait.
    virtual void release_in_step(Import &import, const ReleaseSlot &slot, cl_int *result,
                                 IcdEvents *still_writing) const = 0;

    // -- Map and unmap: whether the application's map of the ICD's object
    //    is of the dma-buf's own pages, bracketed with SYNC START and END
    //    (layer/handoff/map_sync.cpp) and refused for writes over a read-only
    //    mapping (layer/handoff/read_only_guard.cpp).  Else the ICD's own.
    virtual bool maps_dmabuf() const = 0;
    // Whether the application's host-access flags are the layer's to hold
    // (the ICD's object was created without them: layer/handoff/host_access.cpp).
    virtual bool holds_host_flags(const Import &) const { return false; }
    // Whether the CPU side of the handoff goes through the dma-buf's mapping
    // (what a failed acquire's shield detaches, failed_acquire_shield.hpp).
    virtual bool through_mapping() const { return true; }

protected:
    ~HandoffRoute() = default;  // the routes are static objects, never deleted through this type
};

// The routes themselves (route_zero_copy.cpp, route_copy.cpp,
// route_tiled_shadow.cpp).  A tiled shadow's ICD object either lies over the
// shadow or, on Route::copy, keeps its own copy of it, filled and written
// back as the copy route's is.
extern const HandoffRoute &zero_copy_route;
extern const HandoffRoute &copy_route;
extern const HandoffRoute &tiled_shadow_route;
extern const HandoffRoute &tiled_shadow_copied_route;

// The route of `import`.  Inline: it is asked several times per import in
// every handoff.
inline const HandoffRoute &route_of(const Import &import) {
    if (import.over_tiled_shadow()) return import.route == Route::copy ? tiled_shadow_copied_route : tiled_shadow_route;
    return import.route == Route::copy ? copy_route : zero_copy_route;
}

}  // namespace cldmabuf
