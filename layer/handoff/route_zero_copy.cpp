// The zero-copy route (Route::host_ptr, Route::image_from_buffer): the ICD's
// object lies over the dma-buf's mapping, so the device works on the
// dma-buf's own pages.  A handoff moves no bytes: the acquire opens the
// CPU-access bracket (bounded fence wait, DMA_BUF_IOCTL_SYNC START;
// layer/handoff/cpu_access.hpp), the release closes it (END), and the
// application's maps are bracketed the same way (layer/handoff/map_sync.cpp).
#include "layer/handoff/acquire_opening.hpp"
#include "layer/handoff/cpu_access.hpp"
#include "layer/handoff/handoff_route.hpp"

namespace cldmabuf {
namespace {

class ZeroCopyRoute final : public HandoffRoute {
public:
    constexpr ZeroCopyRoute() = default;
    void add_facts(const Import &, bool, HandoffFacts *facts) const override { facts->copy_route_only = false; }

    cl_int open_at_once(const Import &import) const override {
        return sync_start(import, import.sync_access_flags(), "acquire");
    }
    bool takes_opening() const override { return true; }
    cl_int acquire_in_step(Import &import, const AcquireSlot &slot) const override {
        return slot.opening ? open_in_step(*slot.opening) : open_acquire(import);
    }

    cl_int close_at_once(const Import &import, const char *what) const override {
        return end_cpu_access(import, import.sync_access_flags(), what);
    }
    bool release_waits_for_fences() const override { return false; }
    void release_in_step(Import &import, const ReleaseSlot &, cl_int *result, IcdEvents *) const override {
        // END even after an error: the CPU access bracket must close.  A
        // failed END fails the step, as a failed END of an unmap does: the
        // CPU may not see the device's writes.
        const cl_int ended = close_at_once(import, "release");
        if (*result == CL_SUCCESS) *result = ended;
    }

    bool maps_dmabuf() const override { return true; }
};

constexpr ZeroCopyRoute the_zero_copy_route;

}  // namespace

const HandoffRoute &zero_copy_route = the_zero_copy_route;

}  // namespace cldmabuf
