// The tiled shadow (an X/Y-tiled image import, layer/blit/tiled_shadow.hpp):
// the ICD's image lies over the layer's linear shadow (or, on the copy
// route, the ICD copies that shadow), which the blitter fills from the
// dma-buf on acquire (de-tile) and writes back on release when the image
// is writable (re-tile).  The CPU never touches the dma-buf, so there is no
// DMA_BUF_IOCTL_SYNC and no opening; the blitter's batches wait for the
// dma-buf's fences themselves (implicit sync), so every handoff is queued.
// The application's maps are of the ICD's image, not of the dma-buf.
#include "layer/blit/tiled_shadow.hpp"
#include "layer/handoff/handoff_route.hpp"
#include "layer/handoff/transfers.hpp"

namespace cldmabuf {
namespace {

class TiledShadowRoute final : public HandoffRoute {
public:
    explicit constexpr TiledShadowRoute(bool device_copy) : device_copy_(device_copy) {}
    void add_facts(const Import &, bool, HandoffFacts *facts) const override {
        facts->tiled_shadow = true;  // queued: the blitter's batches wait for the dma-buf's fences
        facts->copy_route_only = false;
    }

    bool moves_bytes(const Import &, bool) const override { return true; }  // the de-tile, the shadow's copy
    // Never on the fast path (add_facts).
    cl_int open_at_once(const Import &) const override { return CL_INVALID_OPERATION; }
    cl_int close_at_once(const Import &, const char *) const override { return CL_SUCCESS; }

    // Its de-tile is a blitter execbuffer on the dma-buf, which waits for
    // every fence: the step stays one that waits on them.
    bool takes_opening() const override { return false; }
    void prepare_acquire(Import &import, cl_command_queue queue, AcquireSlot *slot) const override {
        if (device_copy_) prepare_upload(import, queue, slot);
    }
    cl_int acquire_in_step(Import &import, const AcquireSlot &slot) const override {
        const cl_int err = detile(import);
        return err == CL_SUCCESS && device_copy_ ? upload_in_step(import, slot) : err;
    }
    cl_int acquire_behind_gate(cl_command_queue queue, const Import &import, const AcquireSlot &slot, cl_event gate,
                               cl_event *done) const override {
        return device_copy_ ? upload_behind_gate(queue, import, slot, gate, done) : CL_SUCCESS;
    }

    void prepare_release(Import &import, cl_command_queue queue, ReleaseSlot *slot) const override {
        if (device_copy_) prepare_write_back(import, queue, slot);
    }
    cl_int release_before_step(cl_command_queue queue, const Import &import, const ReleaseSlot &slot, cl_uint n,
                               const cl_event *waits, cl_event *done) const override {
        return device_copy_ ? write_back_before_step(queue, import, slot, n, waits, done) : CL_SUCCESS;
    }
    // The re-tile is a blitter execbuffer on the dma-buf, which waits for its fences (implicit sync).
    bool release_waits_for_fences() const override { return true; }
    void release_in_step(Import &import, const ReleaseSlot &slot, cl_int *result,
                         IcdEvents *still_writing) const override {
        if (device_copy_) write_back_in_step(import, slot, result, still_writing);
        // After a failed command the shadow may be half written: leave the dma-buf as it was.
        if (*result == CL_SUCCESS && !(import.flags & CL_MEM_READ_ONLY)) *result = retile(import);
    }

    bool maps_dmabuf() const override { return false; }
    bool through_mapping() const override { return false; }

private:
    bool device_copy_;
};

constexpr TiledShadowRoute the_tiled_shadow_in_place{false};
constexpr TiledShadowRoute the_tiled_shadow_copied{true};

}  // namespace

const HandoffRoute &tiled_shadow_route = the_tiled_shadow_in_place;
const HandoffRoute &tiled_shadow_copied_route = the_tiled_shadow_copied;

}  // namespace cldmabuf
