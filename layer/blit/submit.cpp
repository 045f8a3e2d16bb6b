#include "layer/blit/submit.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include "layer/blit/fence_chain.hpp"
#include "layer/blit/queue_context.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/core/host_step.hpp"
#include "layer/i915/blt_engine.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/base/owned_fd.hpp"
#include "layer/base/stats.hpp"

namespace cldmabuf {
namespace {

cl_int errno_status(int err) { return err == -ENOMEM ? CL_OUT_OF_HOST_MEMORY : CL_OUT_OF_RESOURCES; }

void count_done(BlitKind kind, uint64_t bytes) {
    switch (kind) {
    case BlitKind::copy:
        stats().blt_copies++;
        stats().blt_bytes += bytes;
        break;
    case BlitKind::detile: stats().detile_bytes += bytes; break;
    case BlitKind::retile: stats().retile_bytes += bytes; break;
    }
}

}  // namespace

namespace {

// How long a cancelled batch may take to end: i915 preempts the context
// (preempt timeout, 640 ms by default) and resets the engine when that fails.
constexpr int kCancelGraceMs = 2000;

// Submits one batch: where it goes (`ctx` of the queue's holder, or the
// engine's own context without one) and what cancels it.
struct Submitter {
    const BlitSubmit &submit;
    QueueBltContext *queue_ctx = nullptr;

    int operator()(int in_fence, int *fence) const {
        if (!queue_ctx) return submit(nullptr, in_fence, fence);
        i915::BltContext ctx;
        if (int r = queue_ctx->get(&ctx); r != 0) return r;
        return submit(&ctx, in_fence, fence);
    }
    // Destroys the batch's context, so the kernel cancels what is left on
    // it: the queue's own batches, or the engine's own context's.
    int cancel() const {
        if (queue_ctx) return queue_ctx->cancel();
        i915::BltEngine *engine = i915::BltEngine::instance();
        return engine ? engine->cancel_outstanding() : -ENODEV;
    }
};

// A batch that outlasted the fence bound: cancel it, so that the step's gate
// opens only once the batch can no longer write (docs/blitter.md, "The
// invariant").  1 when it finished after all, -errno when it ended with an
// error (-EIO: cancelled), 0 when it could not be ended.  No lock is held
// across the grace wait.
int cancel_overdue(const char *what, int fence, const Submitter &submitter) {
    const int c = submitter.cancel();
    if (c != 0) {
        LOG_ERROR("%s: blitter fence did not signal within %d ms (CLDMABUF_FENCE_TIMEOUT_MS) and the batch cannot "
                  "be cancelled (%s): the step fails while the batch may still write",
                  what, fence_timeout_ms(), std::strerror(-c));
        return 0;
    }
    stats().blt_cancelled++;
    const int w = i915::BltEngine::wait_fence(fence, kCancelGraceMs);
    if (w == 0) {
        // Not yet submitted (it waits for its in-fences): a cancelled
        // context's request skips its payload when it is, so nothing writes.
        LOG_ERROR("%s: blitter fence did not signal within %d ms (CLDMABUF_FENCE_TIMEOUT_MS); its context was "
                  "cancelled and the batch, still waiting for its in-fences, will not run",
                  what, fence_timeout_ms());
        return -ECANCELED;
    }
    if (w < 0)
        LOG_ERROR("%s: blitter fence did not signal within %d ms (CLDMABUF_FENCE_TIMEOUT_MS); the batch was "
                  "cancelled (%s) and wrote nothing",
                  what, fence_timeout_ms(), std::strerror(-w));
    else
        LOG_WARN("%s: blitter batch finished only as it was cancelled, after more than %d ms", what,
                 fence_timeout_ms());
    return w;
}

// Waits for the batch's out-fence within CLDMABUF_FENCE_TIMEOUT_MS (then
// cancels it, see cancel_overdue), closes it and counts the copy.
cl_int wait_batch(const char *what, BlitKind kind, uint64_t bytes, OwnedFd fence, bool fenced_in,
                  const Submitter &submitter) {
    stats().fence_waits++;
    int w = i915::BltEngine::wait_fence(fence.get(), fence_timeout_ms());
    if (w == 0) {
        stats().fence_timeouts++;
        if (fenced_in)
            LOG_WARN("%s: the overdue batch waits for a semaphore's sync_file (FENCE_IN)", what);
        w = cancel_overdue(what, fence.get(), submitter);
        if (w <= 0) return CL_OUT_OF_RESOURCES;
        count_done(kind, bytes);
        return CL_SUCCESS;
    }
    if (w < 0) {
        LOG_ERROR("%s: blitter batch failed: %s%s", what, std::strerror(-w),
                  fenced_in ? " (its FENCE_IN, the semaphore wait before it, failed: the batch was skipped)" : "");
        return CL_OUT_OF_RESOURCES;
    }
    count_done(kind, bytes);
    return CL_SUCCESS;
}

cl_int submit_refused(const char *what, int r) {
    LOG_ERROR("%s: blitter submission failed: %s", what, std::strerror(-r));
    return errno_status(r);
}

cl_int submit_and_wait_on(const char *what, BlitKind kind, uint64_t bytes, const Submitter &submit) {
    int fence = -1;
    if (int r = submit(-1, &fence); r != 0) return submit_refused(what, r);
    return wait_batch(what, kind, bytes, OwnedFd(fence), false, submit);
}

// The same for a copy chained to semaphores (layer/blit/fence_chain.hpp):
// `in`, a wait the copy took, goes to the execbuffer as FENCE_IN (a refusal
// waits for it on the host and submits without); `out` learns the batch's
// out-fence once it is submitted.  Either may be null.
cl_int submit_chained_and_wait(const char *what, uint64_t bytes, const Submitter &submit, FenceInOffer *in,
                               BatchFence *out) {
    int fence = -1;
    bool fenced_in = false;
    int r = 0;
    if (const OwnedFd in_fd(in ? in->dup_fence() : -1); in_fd) {
        r = submit(in_fd.get(), &fence);
        fenced_in = r == 0;
        if (r == 0) stats().blt_fence_in_batches++;
    }
    if (in && !fenced_in) {
        // The kernel refused the fence (or the batch with it): the wait the
        // copy took is done here, as its own host step would have.
        stats().blt_fence_in_fallbacks++;
        LOG_WARN("%s: the execbuffer did not take the semaphore's sync_file as FENCE_IN (%s): waiting for it on "
                 "the host",
                 what, r ? std::strerror(-r) : "no fd");
        if (cl_int w = in->host_wait(fence_timeout_ms()); w != CL_SUCCESS) return w;
    }
    if (!fenced_in) r = submit(-1, &fence);
    if (r != 0) return submit_refused(what, r);
    if (out) out->submitted(fence);
    return wait_batch(what, BlitKind::copy, bytes, OwnedFd(fence), fenced_in, submit);
}

}  // namespace

cl_int submit_and_wait(const char *what, BlitKind kind, uint64_t bytes, const BlitSubmit &submit) {
    return submit_and_wait_on(what, kind, bytes, Submitter{submit});
}

cl_int enqueue_blit(cl_command_queue queue, cl_mem src, cl_mem dst, cl_command_type type, cl_uint num_events,
                    const cl_event *wait_list, cl_event *event, const char *what, uint64_t bytes,
                    BlitSubmit submit) {
    std::shared_ptr<FenceInOffer> in;
    std::shared_ptr<BatchFence> out;
    std::shared_ptr<QueueBltContext> queue_ctx = queue_blt_context(queue);
    if (fence_chain_on(queue)) {
        in = take_fence_in(queue);
        out = std::make_shared<BatchFence>();
    }
    HostStep step;
    step.queue = queue;
    step.num_events = num_events;
    step.wait_list = wait_list;
    step.type = type;
    step.keep_alive.push_back(src);
    if (dst != src) step.keep_alive.push_back(dst);
    step.work = [queue, what, bytes, submit = std::move(submit), in, out, queue_ctx](cl_int prior) -> cl_int {
        cl_int status = prior;
        if (prior >= 0) {
            // Claimed before this step could run (the wait's step lets the
            // queue on only once claimed or closed), so this reads a final state.
            FenceInOffer *fence_in = in && in->claimed() ? in.get() : nullptr;
            const Submitter on_queue{submit, queue_ctx.get()};
            status = out || fence_in ? submit_chained_and_wait(what, bytes, on_queue, fence_in, out.get())
                                     : submit_and_wait_on(what, BlitKind::copy, bytes, on_queue);
        }
        if (out) {
            out->finished();
            forget_batch_fence(queue, out.get());
        }
        return status;
    };
    const cl_int err = enqueue_host_step(std::move(step), event);
    if (err == CL_SUCCESS && out) {
        // Taken only now that the copy is in the queue: a copy that failed to
        // enqueue must leave the wait to its own host step, and a command
        // that landed between the two has counted by now (nothing_between).
        if (in && nothing_between(in->epoch())) in->claim();
        record_batch_fence(queue, out);
    }
    return err;
}

}  // namespace cldmabuf
