// clEnqueueAcquire/ReleaseVA_APIMediaSurfacesINTEL on the layer's VA images:
// the extension's checks and acquired state, then acquire = the surface's
// vaSyncSurface (the decoder or VPP is done with it; skipped when the
// context was created with CL_CONTEXT_INTEROP_USER_SYNC = CL_TRUE) + the
// import's own acquire (bounded implicit-fence wait, DMA_BUF_IOCTL_SYNC
// START, or the copy route's write), release = the import's release.  The
// events carry the extension's command types.
#include <string>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/handoff/acquire_release.hpp"
#include "layer/queue/epoch.hpp"
#include "layer/base/log.hpp"
#include "layer/core/registry.hpp"
#include "layer/va/entry_points.hpp"
#include "layer/va/forwarding.hpp"
#include "layer/va/libva.hpp"
#include "layer/va/shared_objects.hpp"
#include "layer/icd/devices.hpp"

namespace cldmabuf::va {
namespace {

cl_int refuse_surfaces(cl_int err, const char *what, const std::string &why) {
    LOG_ERROR("%s: %s", what, why.c_str());
    return err;
}

// The images behind `mems`, checked against the queue's context.
cl_int collect_surfaces(cl_context context, cl_uint n, const cl_mem *mems, std::vector<std::shared_ptr<VaImage>> *out,
               const char *what) {
    for (cl_uint i = 0; i < n; ++i) {
        std::shared_ptr<VaImage> image = find_image(mems[i]);
        if (!image)
            return refuse_surfaces(CL_INVALID_MEM_OBJECT, what,
                          "mem_objects[" + std::to_string(i) + "] was not created from a VA-API surface");
        if (image->context != context)
            return refuse_surfaces(CL_INVALID_CONTEXT, what,
                          "mem_objects[" + std::to_string(i) + "] belongs to another context than the queue");
        out->push_back(std::move(image));
    }
    return CL_SUCCESS;
}

// vaSyncSurface on each distinct surface, bounded by CLDMABUF_FENCE_TIMEOUT_MS
// where libva and the driver have vaSyncSurface2.
cl_int sync_surfaces(const std::vector<std::shared_ptr<VaImage>> &images, const char *what) {
    const Libva *api = libva();
    if (!api) return refuse_surfaces(CL_INVALID_OPERATION, what, "libva cannot be loaded");
    std::vector<VASurfaceID> done;
    for (const auto &image : images) {
        bool seen = false;
        for (VASurfaceID s : done) seen |= s == image->surface;
        if (seen) continue;
        done.push_back(image->surface);
        VAStatus st = kVaUnimplemented;
        if (api->sync_surface2)
            st = api->sync_surface2(image->display, image->surface, uint64_t(fence_timeout_ms()) * 1000000u);
        if (st == kVaUnimplemented) st = api->sync_surface(image->display, image->surface);
        if (st != kVaSuccess)
            return refuse_surfaces(st == kVaTimedOut ? CL_OUT_OF_RESOURCES : CL_INVALID_VA_API_MEDIA_SURFACE_INTEL, what,
                          "vaSyncSurface of surface " + std::to_string(image->surface) + " failed: " +
                              status_text(*api, st));
    }
    return CL_SUCCESS;
}

template <bool Acquire>
cl_int va_handoff(cl_command_queue queue, cl_uint n, const cl_mem *mems, cl_uint num_events, const cl_event *wait_list,
               cl_event *event) {
    static constexpr const char *what =
        Acquire ? "clEnqueueAcquireVA_APIMediaSurfacesINTEL" : "clEnqueueReleaseVA_APIMediaSurfacesINTEL";
    const cl_context context = queue ? queue_context(queue) : nullptr;
    if (!context) return refuse_surfaces(CL_INVALID_COMMAND_QUEUE, what, "invalid command queue");
    VaContext shared;
    if (!find_context(context, &shared)) {
        const cl_platform_id platform = context_platform(context);
        if (icd_has_va(platform)) {
            using Fn = cl_int(CL_API_CALL *)(cl_command_queue, cl_uint, const cl_mem *, cl_uint, const cl_event *,
                                             cl_event *);
            if (auto icd = reinterpret_cast<Fn>(icd_function(platform, what)))
                return icd(queue, n, mems, num_events, wait_list, event);
        }
        return refuse_surfaces(CL_INVALID_CONTEXT, what, "the queue's context was not created with CL_CONTEXT_VA_API_DISPLAY_INTEL");
    }
    if ((n == 0) != (mems == nullptr)) return refuse_surfaces(CL_INVALID_VALUE, what, "num_objects and mem_objects disagree");
    if ((num_events == 0) != (wait_list == nullptr))
        return refuse_surfaces(CL_INVALID_EVENT_WAIT_LIST, what, "num_events_in_wait_list and event_wait_list disagree");
    std::vector<std::shared_ptr<VaImage>> images;
    if (cl_int err = collect_surfaces(context, n, mems, &images, what); err != CL_SUCCESS) return err;
    // The state is claimed first, under one lock (two threads acquiring the
    // same surface: one gets the error), and given back if the step fails.
    if (!flip_acquired(images, Acquire)) {
        size_t i = 0;
        while (i < images.size() && images[i]->acquired != Acquire) ++i;
        return refuse_surfaces(Acquire ? CL_VA_API_MEDIA_SURFACE_ALREADY_ACQUIRED_INTEL
                              : CL_VA_API_MEDIA_SURFACE_NOT_ACQUIRED_INTEL,
                      what, "mem_objects[" + std::to_string(i) + "] is " + (Acquire ? "already" : "not") +
                                " acquired");
    }
    cl_int err = Acquire && !shared.user_sync ? sync_surfaces(images, what) : CL_SUCCESS;
    cl_event ev = nullptr;
    CountedCommand counted;  // a command of the queue (layer/queue/epoch.hpp), as the KHR entry counts it
    if (err == CL_SUCCESS) {
        if (n == 0)  // nothing to hand over: the command is a marker
            err = next().clEnqueueMarkerWithWaitList(queue, num_events, wait_list, event ? &ev : nullptr);
        else if (Acquire)
            err = enqueue_acquire_external_mem_objects(queue, n, mems, num_events, wait_list, event ? &ev : nullptr);
        else
            err = enqueue_release_external_mem_objects(queue, n, mems, num_events, wait_list, event ? &ev : nullptr);
    }
    if (err != CL_SUCCESS) {
        flip_acquired(images, !Acquire);
        return err;
    }
    if (event) {
        event_types().add(ev, Acquire ? CL_COMMAND_ACQUIRE_VA_API_MEDIA_SURFACES_INTEL
                                      : CL_COMMAND_RELEASE_VA_API_MEDIA_SURFACES_INTEL);
        *event = ev;
    }
    return CL_SUCCESS;
}

}  // namespace

cl_int CL_API_CALL enqueue_acquire_media_surfaces(cl_command_queue queue, cl_uint n, const cl_mem *mems,
                                                  cl_uint num_events, const cl_event *wait_list, cl_event *event) {
    return va_handoff<true>(queue, n, mems, num_events, wait_list, event);
}

cl_int CL_API_CALL enqueue_release_media_surfaces(cl_command_queue queue, cl_uint n, const cl_mem *mems,
                                                  cl_uint num_events, const cl_event *wait_list, cl_event *event) {
    return va_handoff<false>(queue, n, mems, num_events, wait_list, event);
}

}  // namespace cldmabuf::va
