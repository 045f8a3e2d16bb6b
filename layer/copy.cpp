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
//
// Images (CopyImage, CopyImageToBuffer, CopyBufferToImage) are not imported
// yet, so they are not overridden: once image imports exist, hook them in
// install_copy_overrides below through BltEngine::submit_copy_2d with the
// image's tiling and pitch (ImageCopy).
#include <cerrno>
#include <cstring>
#include <memory>

#include "layer/dispatch.hpp"
#include "layer/ext/dmabuf.hpp"
#include "layer/host_step.hpp"
#include "layer/i915/blt_copy.hpp"
#include "layer/kernel_ops.hpp"
#include "layer/log.hpp"
#include "layer/registry.hpp"
#include "layer/stats.hpp"

namespace cldmabuf {
namespace {

using i915::BltEngine;
using i915::BltImport;
using i915::CopySide;

// What an eligible copy needs at submission time.
struct Target {
    BltEngine *engine = nullptr;
    BltImport src, dst;
    CopySide src_side, dst_side;
    bool same_storage = false;  // both sides inside the same import
};

cl_int errno_status(int err) {
    return err == -ENOMEM ? CL_OUT_OF_HOST_MEMORY : CL_OUT_OF_RESOURCES;
}

// Why the pair (src, dst) cannot take the blitter, or nullptr with *t filled.
// *status receives an argument error the spec names (context/queue), which
// the caller returns instead of copying.
const char *classify(cl_command_queue queue, cl_mem src_mem, cl_mem dst_mem, const std::shared_ptr<Import> &src,
                     size_t src_base, const std::shared_ptr<Import> &dst, size_t dst_base, Target *t,
                     cl_int *status) {
    *status = CL_SUCCESS;
    if (!src || !dst) return "import mixed with a plain cl_mem";
    if (src->strategy != ImportStrategy::zero_copy || dst->strategy != ImportStrategy::zero_copy)
        return "device-copy import";
    BltEngine *engine = BltEngine::instance();
    if (!engine) return "no Gen9 blitter (none found or CLDMABUF_BLT=off)";

    cl_context ctx = nullptr;
    cl_device_id device = nullptr;
    if (next().clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, nullptr) != CL_SUCCESS ||
        next().clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, nullptr) != CL_SUCCESS) {
        *status = CL_INVALID_COMMAND_QUEUE;
        return "invalid command queue";
    }
    if (src->context != ctx || dst->context != ctx) {
        *status = CL_INVALID_CONTEXT;
        return "context mismatch";
    }
    if (const char *why = i915::blt_device_mismatch(device)) return why;

    // Sub-buffers: their own size, and an origin the device accepts (else
    // the ICD reports CL_MISALIGNED_SUB_BUFFER_OFFSET).
    auto side = [&](cl_mem mem, const Import &imp, size_t base, CopySide *out) -> bool {
        out->base = base;
        if (mem == imp.mem) {
            out->size = imp.size;
            return true;
        }
        size_t size = 0;
        cl_uint align_bits = 0;
        if (next().clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, nullptr) != CL_SUCCESS) return false;
        if (next().clGetDeviceInfo(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits,
                                   nullptr) != CL_SUCCESS)
            return false;
        const size_t align = align_bits / 8;
        if (align > 1 && base % align != 0) return false;
        out->size = size;
        return true;
    };
    if (!side(src_mem, *src, src_base, &t->src_side) || !side(dst_mem, *dst, dst_base, &t->dst_side))
        return "sub-buffer the ICD must judge (size or alignment)";

    if (i915::blt_import_of(*src, *engine, &t->src) != 0 || i915::blt_import_of(*dst, *engine, &t->dst) != 0)
        return "GEM import failed";
    t->engine = engine;
    t->same_storage = src.get() == dst.get();
    return nullptr;
}

// Submit, wait for the out-fence (bounded), close it.  Runs on the worker.
cl_int run_blit(BltEngine *engine, const char *what, uint64_t bytes,
                const std::function<int(int *fence)> &submit) {
    int fence = -1;
    if (int r = submit(&fence); r != 0) {
        LOG_ERROR("%s: blitter submission failed: %s", what, std::strerror(-r));
        return errno_status(r);
    }
    stats().fence_waits++;
    const int w = BltEngine::wait_fence(fence, fence_timeout_ms());
    kernel().close(fence);
    if (w == 0) {
        stats().fence_timeouts++;
        LOG_ERROR("%s: blitter fence did not signal within %d ms (CLDMABUF_FENCE_TIMEOUT_MS)", what,
                  fence_timeout_ms());
        return CL_OUT_OF_RESOURCES;
    }
    if (w < 0) {
        LOG_ERROR("%s: blitter batch failed: %s", what, std::strerror(-w));
        return CL_OUT_OF_RESOURCES;
    }
    (void)engine;
    stats().blt_copies++;
    stats().blt_bytes += bytes;
    return CL_SUCCESS;
}

cl_int enqueue_step(cl_command_queue queue, cl_mem src, cl_mem dst, cl_command_type type, cl_uint num_events,
                    const cl_event *wait_list, cl_event *event, std::function<cl_int(cl_int)> work) {
    HostStep step;
    step.queue = queue;
    step.num_events = num_events;
    step.wait_list = wait_list;
    step.type = type;
    step.keep_alive.push_back(src);
    if (dst != src) step.keep_alive.push_back(dst);
    step.work = std::move(work);
    return enqueue_host_step(std::move(step), event);
}

// Whether a copy between src and dst goes to the blitter (true, *t filled),
// to the ICD (false, *status CL_SUCCESS; a fallback of an import is counted),
// or is refused with the spec's error (false, *status).  Plain buffers cost
// two map lookups while imports exist, nothing otherwise.
bool take_blitter(cl_command_queue queue, cl_mem src, cl_mem dst, Target *t, cl_int *status) {
    *status = CL_SUCCESS;
    if (imports().empty()) return false;
    size_t src_base = 0, dst_base = 0;
    auto si = imports().find(src, &src_base);
    auto di = imports().find(dst, &dst_base);
    if (!si && !di) return false;  // plain buffers
    if (const char *why = classify(queue, src, dst, si, src_base, di, dst_base, t, status)) {
        if (*status == CL_SUCCESS) stats().count_fallback(why);
        return false;
    }
    return true;
}

cl_int CL_API_CALL copy_buffer(cl_command_queue queue, cl_mem src, cl_mem dst, size_t src_offset,
                               size_t dst_offset, size_t size, cl_uint num_events, const cl_event *wait_list,
                               cl_event *event) {
    auto pass = [&] {
        return next().clEnqueueCopyBuffer(queue, src, dst, src_offset, dst_offset, size, num_events, wait_list,
                                          event);
    };
    Target t;
    cl_int status;
    if (!take_blitter(queue, src, dst, &t, &status)) return status != CL_SUCCESS ? status : pass();
    // The spec is not uniform about size 0 across versions: the ICD decides.
    if (size == 0) {
        stats().count_fallback("zero-size copy (ICD decides)");
        return pass();
    }
    if (cl_int err = i915::check_copy_buffer(t.src_side, t.dst_side, t.same_storage, src_offset, dst_offset, size);
        err != CL_SUCCESS)
        return err;

    const uint64_t so = t.src_side.base + src_offset, dof = t.dst_side.base + dst_offset;
    return enqueue_step(queue, src, dst, CL_COMMAND_COPY_BUFFER, num_events, wait_list, event,
                        [t, so, dof, size](cl_int prior) -> cl_int {
                            if (prior < 0) return prior;
                            return run_blit(t.engine, "clEnqueueCopyBuffer", size, [&](int *fence) {
                                return t.engine->submit_copy_buffer(t.src, t.dst, so, dof, size, fence);
                            });
                        });
}

cl_int CL_API_CALL copy_buffer_rect(cl_command_queue queue, cl_mem src, cl_mem dst, const size_t *src_origin,
                                    const size_t *dst_origin, const size_t *region, size_t src_row_pitch,
                                    size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch,
                                    cl_uint num_events, const cl_event *wait_list, cl_event *event) {
    auto pass = [&] {
        return next().clEnqueueCopyBufferRect(queue, src, dst, src_origin, dst_origin, region, src_row_pitch,
                                              src_slice_pitch, dst_row_pitch, dst_slice_pitch, num_events,
                                              wait_list, event);
    };
    Target t;
    cl_int status;
    if (!take_blitter(queue, src, dst, &t, &status)) return status != CL_SUCCESS ? status : pass();
    i915::RectArgs r;
    if (cl_int err = i915::normalize_rect(src_origin, dst_origin, region, src_row_pitch, src_slice_pitch,
                                          dst_row_pitch, dst_slice_pitch, t.src_side, t.dst_side, &r);
        err != CL_SUCCESS)
        return err;
    if (src == dst && r.src_row_pitch != r.dst_row_pitch && r.src_slice_pitch != r.dst_slice_pitch)
        return CL_INVALID_VALUE;  // the spec's same-object pitch rule
    if (t.same_storage && i915::rects_overlap(r, t.src_side, t.dst_side)) return CL_MEM_COPY_OVERLAP;

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
    return enqueue_step(queue, src, dst, CL_COMMAND_COPY_BUFFER_RECT, num_events, wait_list, event,
                        [t, rc, bytes](cl_int prior) -> cl_int {
                            if (prior < 0) return prior;
                            return run_blit(t.engine, "clEnqueueCopyBufferRect", bytes, [&](int *fence) {
                                return t.engine->submit_copy_rect(t.src, t.dst, rc, fence);
                            });
                        });
}

}  // namespace

void install_copy_overrides(cl_icd_dispatch &table) {
    table.clEnqueueCopyBuffer = copy_buffer;
    table.clEnqueueCopyBufferRect = copy_buffer_rect;
    // Not yet: clEnqueueCopyImage, clEnqueueCopyImageToBuffer,
    // clEnqueueCopyBufferToImage (no image imports; see the header comment).
}

}  // namespace cldmabuf
