// The copy route (Route::copy): the ICD keeps its own copy of the object
// (devices that do not share host memory, or an ICD that copies what it is
// given).  The acquire opens the CPU-access bracket on the dma-buf as the
// zero-copy route does, then uploads the dma-buf's bytes into the device's
// copy; the release writes the copy back, then closes the bracket
// (layer/handoff/transfers.hpp: direct, registered or through pinned
// staging; an aliased import merges, layer/handoff/alias_merge.hpp).  Maps
// are the ICD's own, of its copy; the application's CL_MEM_HOST_* flags on
// a buffer are the layer's to hold (layer/handoff/host_access.cpp).
#include "layer/handoff/acquire_opening.hpp"
#include "layer/handoff/cpu_access.hpp"
#include "layer/handoff/handoff_route.hpp"
#include "layer/handoff/staging.hpp"
#include "layer/handoff/transfers.hpp"

namespace cldmabuf {
namespace {

class CopyRoute final : public HandoffRoute {
public:
    constexpr CopyRoute() = default;
    void add_facts(const Import &import, bool acquire, HandoffFacts *facts) const override {
        // A release moves only what it writes back: a device-read-only
        // import's transfer size says nothing of it.
        const bool moves = acquire || copied_out(import);
        facts->slow_transfer |= moves && slow_transfer(import);
        facts->large_registered |= moves && large_registered_transfer(import);
        facts->written_back |= !acquire && copied_out(import);
    }
    bool moves_bytes(const Import &import, bool acquire) const override {
        return acquire ? copied_in(import) : copied_out(import);
    }

    // A large buffer's registration (layer/handoff/staging.hpp), made or
    // taken back from the parked one before the facts: registered, its
    // acquire is the fast path's at any size; unregistered it is a slow
    // transfer, queued.  A producer's pool hands out each frame as a new
    // import, so every acquire of it is a first one.  Invariant: the
    // registration is another mapping of the same pages and an ICD buffer
    // no command uses; made earlier it changes no byte a command sees, only
    // the way the plan takes (explorer scenarios c-registered and p).
    void before_acquire_facts(Import &import, cl_command_queue queue) const override {
        if (!import.is_image && copied_in(import) && copy_bytes(import) > fast_copy_limit() &&
            !registered_mapping(import))
            (void)staging_for(import, queue);
    }

    cl_int open_at_once(const Import &import) const override {
        return sync_start(import, import.sync_access_flags(), "acquire");
    }
    cl_int upload_at_once(cl_command_queue queue, const Import &import, cl_event *done) const override {
        return cldmabuf::upload_at_once(queue, import, done);
    }

    bool takes_opening() const override { return true; }
    void prepare_acquire(Import &import, cl_command_queue queue, AcquireSlot *slot) const override {
        prepare_upload(import, queue, slot);
    }
    cl_int acquire_in_step(Import &import, const AcquireSlot &slot) const override {
        const cl_int err = slot.opening ? open_in_step(*slot.opening) : open_acquire(import);
        return err == CL_SUCCESS ? upload_in_step(import, slot) : err;
    }
    cl_int acquire_behind_gate(cl_command_queue queue, const Import &import, const AcquireSlot &slot, cl_event gate,
                               cl_event *done) const override {
        return upload_behind_gate(queue, import, slot, gate, done);
    }

    cl_int write_back_at_once(cl_command_queue queue, Import &import, const ReleaseSlot &slot,
                              cl_event marker) const override {
        return cldmabuf::write_back_at_once(queue, import, slot, marker);
    }
    cl_int close_at_once(const Import &import, const char *what) const override {
        return end_cpu_access(import, import.sync_access_flags(), what);
    }

    void prepare_release(Import &import, cl_command_queue queue, ReleaseSlot *slot) const override {
        prepare_write_back(import, queue, slot);
    }
    cl_int release_before_step(cl_command_queue queue, const Import &import, const ReleaseSlot &slot, cl_uint n,
                               const cl_event *waits, cl_event *done) const override {
        return write_back_before_step(queue, import, slot, n, waits, done);
    }
    bool release_waits_for_fences() const override { return false; }
    void release_in_step(Import &import, const ReleaseSlot &slot, cl_int *result,
                         IcdEvents *still_writing) const override {
        write_back_in_step(import, slot, result, still_writing);
        // END even after an error: the CPU access bracket must close.
        const cl_int ended = close_at_once(import, "release");
        if (*result == CL_SUCCESS) *result = ended;
    }

    bool maps_dmabuf() const override { return false; }
    bool holds_host_flags(const Import &import) const override { return !import.is_image; }
};

constexpr CopyRoute the_copy_route;

}  // namespace

const HandoffRoute &copy_route = the_copy_route;

}  // namespace cldmabuf
