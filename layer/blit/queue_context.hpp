// One GEM context per command queue for the queue's blitter copies
// (i915::BltContext): i915 orders the batches of one context, so a batch
// held by its in-fence (a semaphore wait, a producer's fence) holds back only
// its own queue's later batches, and cancelling an overdue batch (destroying
// its context, layer/blit/submit.cpp) ends only that queue's batches.
//
// The context is made at the queue's first blitter batch.  The queue's copy
// steps hold it, so it is destroyed once the application has released the
// queue and the queue's last copy step has ended.  The layer counts the
// application's references itself (create, clRetainCommandQueue,
// clReleaseCommandQueue): the ICD's count also holds its own references
// while commands are in flight, so it cannot tell.
#pragma once

#include <memory>
#include <mutex>

#include "layer/base/cl_compat.h"
#include "layer/i915/blt_engine.hpp"

namespace cldmabuf {

class QueueBltContext {
public:
    explicit QueueBltContext(i915::BltEngine *engine) : engine_(engine) {}
    ~QueueBltContext();
    QueueBltContext(const QueueBltContext &) = delete;
    QueueBltContext &operator=(const QueueBltContext &) = delete;

    // The context, made at the first call (and the first after a cancel).
    // 0, or the -errno of CONTEXT_CREATE (the next call tries again).
    int get(i915::BltContext *out);
    // Destroys the context, so that the kernel cancels its outstanding
    // batches (fences end with -EIO); the next get() makes a fresh one.
    // 0, or why it cannot cancel (the context is persistent: -errno).
    int cancel();

private:
    i915::BltEngine *engine_;
    std::mutex m_;  // held across CONTEXT_CREATE/DESTROY only, never a fence wait
    i915::BltContext ctx_;
};

// The queue's context holder, made on first use; nullptr without a blitter.
std::shared_ptr<QueueBltContext> queue_blt_context(cl_command_queue queue);

// The application's references on its queues, as the layer saw them: a new
// queue (its handle may be a released one's: what was held for that goes),
// a retain, a release.  At the last release the queue's holder is dropped;
// its context goes once no copy step of the queue holds it.
void note_queue_created(cl_command_queue queue);
void note_queue_retained(cl_command_queue queue);
void note_queue_released(cl_command_queue queue);

}  // namespace cldmabuf
