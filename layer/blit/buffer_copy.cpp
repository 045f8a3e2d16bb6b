// Copies between imports on the Gen9 blitter (docs/blitter.md, "Layer
// integration" and "Queue ordering and events").
//
// clEnqueueCopyBuffer / clEnqueueCopyBufferRect between two zero-copy imports
// (or sub-buffers of imports) of the queue's context run as one
// XY_SRC_COPY_BLT batch on the BCS ring, stitched into the queue as a host
// step: the batch is submitted once every earlier command and the wait list
// completed, and the step (whose event the application gets) completes when
// the batch's out-fence signalled.  Everything else goes to the ICD
// unchanged; programs that never import pay one relaxed load per copy.
// The image copies are in layer/blit/image_copy.cpp; which copies take the
// blitter is eligibility.hpp's call, running the batch submit.hpp's.
#include "layer/blit/copy_overrides.hpp"

#include "layer/blit/eligibility.hpp"
#include "layer/blit/fence_chain.hpp"
#include "layer/blit/owned_sides.hpp"
#include "layer/blit/submit.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/queue/epoch.hpp"
#include "layer/i915/blit_plan.hpp"
#include "layer/base/stats.hpp"

namespace cldmabuf {

cl_int CL_API_CALL enqueue_copy_buffer(cl_command_queue queue, cl_mem src, cl_mem dst, size_t src_offset,
                                       size_t dst_offset, size_t size, cl_uint num_events, const cl_event *wait_list,
                                       cl_event *event) {
    auto pass = [&] {
        break_fence_chain(queue);
        CountedCommand counted;  // in flight until the ICD has it (layer/queue/epoch.hpp)
        return next().clEnqueueCopyBuffer(queue, src, dst, src_offset, dst_offset, size, num_events, wait_list,
                                          event);
    };
    OwnedCopy owned;
    if (cl_int err = owned_copy_sides(queue, src, dst, num_events, wait_list, "clEnqueueCopyBuffer", &owned);
        err != CL_SUCCESS)
        return err;
    if (!owned.any) return pass();
    if (cl_int err = check_owned_copy_buffer(owned, src_offset, dst_offset, size); err != CL_SUCCESS) return err;
    BltTarget t;
    cl_int status;
    if (!take_blitter(queue, src, MemKind::buffer, dst, MemKind::buffer, &t, &status))
        return status != CL_SUCCESS ? status : pass();
    // The spec is not uniform about size 0 across versions: the ICD decides.
    if (size == 0) {
        stats().count_fallback("zero-size copy (ICD decides)");
        return pass();
    }

    const uint64_t so = t.src_side.base + src_offset, dof = t.dst_side.base + dst_offset;
    return enqueue_blit(queue, src, dst, CL_COMMAND_COPY_BUFFER, num_events, wait_list, event,
                        "clEnqueueCopyBuffer", size, [t, so, dof, size](const i915::BltContext *ctx, int in_fence, int *fence) {
                            return t.engine->submit_copy_buffer(t.src, t.dst, so, dof, size, fence, in_fence, ctx);
                        });
}

cl_int CL_API_CALL enqueue_copy_buffer_rect(cl_command_queue queue, cl_mem src, cl_mem dst, const size_t *src_origin,
                                            const size_t *dst_origin, const size_t *region, size_t src_row_pitch,
                                            size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch,
                                            cl_uint num_events, const cl_event *wait_list, cl_event *event) {
    auto pass = [&] {
        break_fence_chain(queue);
        CountedCommand counted;  // in flight until the ICD has it (layer/queue/epoch.hpp)
        return next().clEnqueueCopyBufferRect(queue, src, dst, src_origin, dst_origin, region, src_row_pitch,
                                              src_slice_pitch, dst_row_pitch, dst_slice_pitch, num_events,
                                              wait_list, event);
    };
    OwnedCopy owned;
    if (cl_int err = owned_copy_sides(queue, src, dst, num_events, wait_list, "clEnqueueCopyBufferRect", &owned);
        err != CL_SUCCESS)
        return err;
    if (!owned.any) return pass();
    RectArgs r;
    if (cl_int err = check_owned_copy_rect(owned, src == dst, src_origin, dst_origin, region, src_row_pitch,
                                           src_slice_pitch, dst_row_pitch, dst_slice_pitch, &r);
        err != CL_SUCCESS)
        return err;
    BltTarget t;
    cl_int status;
    if (!take_blitter(queue, src, MemKind::buffer, dst, MemKind::buffer, &t, &status))
        return status != CL_SUCCESS ? status : pass();

    i915::RectCopy rc;
    rc.src_base = t.src_side.base, rc.dst_base = t.dst_side.base;
    rc.src_x = r.src_origin[0], rc.src_y = r.src_origin[1], rc.src_z = r.src_origin[2];
    rc.dst_x = r.dst_origin[0], rc.dst_y = r.dst_origin[1], rc.dst_z = r.dst_origin[2];
    rc.width = r.region[0], rc.height = r.region[1], rc.depth = r.region[2];
    rc.src_row_pitch = r.src_row_pitch, rc.src_slice_pitch = r.src_slice_pitch;
    rc.dst_row_pitch = r.dst_row_pitch, rc.dst_slice_pitch = r.dst_slice_pitch;
    // Plan once here so that a request the blitter cannot express (pitches
    // past the limits in both directions, offsets past the GPU range) still
    // goes to the ICD rather than failing at run time.
    {
        thread_local i915::BlitPlan plan;
        if (i915::plan_copy_rect(rc, &plan) != 0) {
            stats().count_fallback("rect the blitter cannot express");
            return pass();
        }
    }
    const uint64_t bytes = r.region[0] * r.region[1] * r.region[2];
    return enqueue_blit(queue, src, dst, CL_COMMAND_COPY_BUFFER_RECT, num_events, wait_list, event,
                        "clEnqueueCopyBufferRect", bytes, [t, rc](const i915::BltContext *ctx, int in_fence, int *fence) {
                            return t.engine->submit_copy_rect(t.src, t.dst, rc, fence, in_fence, ctx);
                        });
}

}  // namespace cldmabuf
