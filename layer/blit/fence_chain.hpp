// Semaphore waits and signals that meet a blitter copy on one in-order queue
// (docs/semaphores.md, "On the Gen9 blitter"):
//
//   wait(sem) ; copy      the batch takes the wait's sync_file as
//                         I915_EXEC_FENCE_IN: the wait's host step lets the
//                         queue on as soon as the copy took it, and the GPU
//                         (the virtual Gen9) waits instead of the host;
//   copy ; signal(sem)    the signal's payload becomes the batch's FENCE_OUT
//                         sync_file, so whoever holds the semaphore's sync_fd
//                         is released by the batch itself.
//
// Only where nothing came between the two: a wait whose host step lets the
// queue on early would let a command enqueued after it run before the
// semaphore signalled, and a signal adopting the batch's fence would signal
// before a command between the copy and the signal ran.  The layer sees
// every clEnqueue* slot, so it knows (layer/queue/epoch.hpp): with
// CLDMABUF_BLT_SEMAPHORE_FENCES=auto (the default) the pair is chained only
// when the enqueue epoch did not move between them and the application was
// handed no enqueue the layer cannot see; `on` takes the application's word
// that it enqueues nothing between (the layer still breaks the chain on the
// commands of the queue it handles itself); `off` never chains.
//
// The records are per queue: each semaphore wait, signal and copy of the
// layer replaces the queue's record, so only the command right before can be
// chained to.  No OpenCL object is wrapped and nothing here knows what a
// semaphore is: the wait offers a sync_file and a host wait, the signal
// attaches a function that adopts the batch's fence.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/base/owned_fd.hpp"

namespace cldmabuf {

// CLDMABUF_BLT_SEMAPHORE_FENCES is not off (and, at auto, no unseen
// enqueue was handed out), and the queue is in order.
bool fence_chain_on(cl_command_queue queue);

// Whether a wait or copy recorded at enqueue epoch `since` may be chained to
// now: at auto, no application enqueue the layer does not chain came since
// (and still none unseen); at on, always.  Asked once the later command is
// in the queue, so that a command landing before it is counted.
bool nothing_between(uint64_t since);

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
    // The enqueue epoch when it was offered (offer_fence_in).
    uint64_t epoch() const { return epoch_; }
    // The execbuffer refused the fence: wait as the host step would have.
    cl_int host_wait(int timeout_ms) const { return host_wait_(timeout_ms); }

private:
    static constexpr int open_state = 0, claimed_state = 1, closed_state = 2;
    std::atomic<int> state_{open_state};
    int fd_;
    std::shared_ptr<const void> owner_;
    std::function<cl_int(int)> host_wait_;
    uint64_t epoch_ = 0;
    friend void offer_fence_in(cl_command_queue, std::shared_ptr<FenceInOffer>);
};

// A blitter copy's batch fence, for the semaphore signals enqueued right
// after the copy.
class BatchFence {
public:
    // A signal: `adopt` receives a new fd of the batch's FENCE_OUT (now, or
    // when the batch is submitted) and says whether it took it.  false when
    // the copy's step is over already; then nothing is ever called.
    bool attach(std::function<bool(int fd)> adopt);
    // The copy's step: the batch is in the kernel with this out-fence.
    void submitted(int fence);
    // The copy's step ended (submitted or not): no attach after this.
    void finished();
    bool finished_already();
    // The enqueue epoch when the copy was recorded (record_batch_fence).
    uint64_t epoch() const { return epoch_; }

private:
    void count_once(bool adopted);
    std::mutex m_;
    int state_ = 0;  // 0 pending, 1 submitted, 2 finished
    OwnedFd fence_;
    std::vector<std::function<bool(int)>> adopters_;
    bool counted_ = false;
    uint64_t epoch_ = 0;
    friend void record_batch_fence(cl_command_queue, std::shared_ptr<BatchFence>);
};

// The queue's record: the last semaphore wait (offer), or the last blitter
// copy (batch fence), or nothing; each stamped with the enqueue epoch.
void offer_fence_in(cl_command_queue queue, std::shared_ptr<FenceInOffer> offer);
void record_batch_fence(cl_command_queue queue, std::shared_ptr<BatchFence> batch);
// Takes the queue's offer or batch fence (the record is empty afterwards);
// nullptr when the last command the layer saw was something else.
std::shared_ptr<FenceInOffer> take_fence_in(cl_command_queue queue);
std::shared_ptr<BatchFence> take_batch_fence(cl_command_queue queue);
// Another command of the queue the layer saw, on its way to the ICD (or a
// step of the layer's own that is not chained): counted in the enqueue epoch,
// and at `on` the queue's record is dropped, so nothing chains across it.
void break_fence_chain(cl_command_queue queue);
// Drops the record if it is still `offer` / `batch` (their step is over).
void forget_fence_in(cl_command_queue queue, const FenceInOffer *offer);
void forget_batch_fence(cl_command_queue queue, const BatchFence *batch);

}  // namespace cldmabuf
