// Semaphore waits and signals that meet a blitter copy on one in-order queue
// (docs/semaphores.md, "On the Gen9 blitter"), with
// CLDMABUF_BLT_SEMAPHORE_FENCES=on:
//
//   wait(sem) ; copy      the batch takes the wait's sync_file as
//                         I915_EXEC_FENCE_IN: the wait's host step lets the
//                         queue on as soon as the copy took it, and the GPU
//                         (the virtual Gen9) waits instead of the host;
//   copy ; signal(sem)    the signal's payload becomes the batch's FENCE_OUT
//                         sync_file, so whoever holds the semaphore's sync_fd
//                         is released by the batch itself.
//
// Why it is a setting and off by default: the layer sees only the calls it
// intercepts, and kernels, markers and most ICD commands go to the ICD
// without passing through it.  A wait whose host step lets the queue on
// early would let such a command run before the semaphore signalled; so the
// chain is only made where the application says it enqueues nothing between
// the two (the setting), and the layer still breaks it on every command it
// does see between them.
//
// The records are per queue: each semaphore wait, signal and copy of the
// layer replaces the queue's record, so only the command right before can be
// chained to.  No OpenCL object is wrapped and nothing here knows what a
// semaphore is: the wait offers a sync_file and a host wait, the signal
// attaches a function that adopts the batch's fence.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "layer/cl_compat.h"

namespace cldmabuf {

// CLDMABUF_BLT_SEMAPHORE_FENCES=on and an in-order queue.
bool fence_chain_on(cl_command_queue queue);

// A semaphore wait's sync_file, offered to the next blitter copy of its queue.
class FenceInOffer {
public:
    // `fence_fd` stays valid while `owner` lives (the offer holds it);
    // `host_wait` waits as the wait's host step would, bounded.
    FenceInOffer(int fence_fd, std::shared_ptr<const void> owner, std::function<cl_int(int timeout_ms)> host_wait);

    // The wait's host step: returns CL_SUCCESS at once when a copy took the
    // offer (its batch waits instead); else waits for the fence, bounded by
    // `timeout_ms`, and closes the offer: host_wait's status.
    cl_int wait_or_hand_over(int timeout_ms);
    // The wait's step ran with a failure before it: no copy may take it now.
    void close();
    // The copy, once its own step is enqueued: true when it took the wait.
    bool claim();
    bool claimed() const { return state_.load(std::memory_order_acquire) == claimed_state; }
    bool open() const { return state_.load(std::memory_order_acquire) == open_state; }
    // A new fd of the fence for the execbuffer (the caller closes it), or -1.
    int dup_fence() const;
    // The execbuffer refused the fence: wait as the host step would have.
    cl_int host_wait(int timeout_ms) const { return host_wait_(timeout_ms); }

private:
    static constexpr int open_state = 0, claimed_state = 1, closed_state = 2;
    std::atomic<int> state_{open_state};
    int fd_;
    std::shared_ptr<const void> owner_;
    std::function<cl_int(int)> host_wait_;
};

// A blitter copy's batch fence, for the semaphore signals enqueued right
// after the copy.
class BatchFence {
public:
    ~BatchFence();
    // A signal: `adopt` receives a new fd of the batch's FENCE_OUT (now, or
    // when the batch is submitted) and says whether it took it.  false when
    // the copy's step is over already; then nothing is ever called.
    bool attach(std::function<bool(int fd)> adopt);
    // The copy's step: the batch is in the kernel with this out-fence.
    void submitted(int fence);
    // The copy's step ended (submitted or not): no attach after this.
    void finished();
    bool finished_already();

private:
    void count_once(bool adopted);
    std::mutex m_;
    int state_ = 0;  // 0 pending, 1 submitted, 2 finished
    int fence_ = -1;
    std::vector<std::function<bool(int)>> adopters_;
    bool counted_ = false;
};

// The queue's record: the last semaphore wait (offer), or the last blitter
// copy (batch fence), or nothing.
void offer_fence_in(cl_command_queue queue, std::shared_ptr<FenceInOffer> offer);
void record_batch_fence(cl_command_queue queue, std::shared_ptr<BatchFence> batch);
// Takes the queue's offer or batch fence (the record is empty afterwards);
// nullptr when the last command the layer saw was something else.
std::shared_ptr<FenceInOffer> take_fence_in(cl_command_queue queue);
std::shared_ptr<BatchFence> take_batch_fence(cl_command_queue queue);
// Another command of the queue the layer saw: nothing chains across it.
void break_fence_chain(cl_command_queue queue);
// Drops the record if it is still `offer` / `batch` (their step is over).
void forget_fence_in(cl_command_queue queue, const FenceInOffer *offer);
void forget_batch_fence(cl_command_queue queue, const BatchFence *batch);

}  // namespace cldmabuf
