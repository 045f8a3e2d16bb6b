// The layer's binary semaphores (cl_khr_semaphore on an ICD that has none,
// or every ICD with CLDMABUF_DEBUG=semaphores-force).  A semaphore is a layer
// object, never handed to the ICD: the handle is a pointer into the layer
// (first field a dispatch pointer, as ICD objects have), valid while it is in
// the live set.  Its state is one optional pending payload:
//
//   signal (enqueued)  -> a new payload, unsignalled until the signal step runs
//   sync_fd import     -> a payload that is the imported sync_file
//   wait (enqueued)    -> takes the payload; the wait step waits on it
//   sync_fd export     -> a dup of the payload's sync_file; the semaphore is
//                         unsignalled afterwards (copy transference, as
//                         Vulkan's SYNC_FD)
//   a signal right after a blitter copy (CLDMABUF_BLT_SEMAPHORE_FENCES,
//   layer/blit/fence_chain.hpp): the payload adopts the batch's FENCE_OUT as
//                         its sync_file once the batch is submitted, unless
//                         it was exported before (then it keeps its own)
//
// A payload outlives the semaphore while a step holds it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "layer/core/icd_ref.hpp"
#include "layer/sync/fence_source.hpp"
#include "layer/sync/semaphore_compat.h"

namespace cldmabuf::sync {

class Payload {
public:
    // An imported sync_file (owned).
    static std::shared_ptr<Payload> imported(int sync_fd);
    // A signal the layer performs; with an exportable sync_file when `fence`
    // holds one (owned), else a host-side flag.
    static std::shared_ptr<Payload> layer_signal(LayerFence fence);

    // The signal step: completes the payload with `status` (CL_SUCCESS or
    // the negative status of the commands before the signal).
    void signal(cl_int status);
    // The wait step: bounded by `timeout_ms`.  CL_SUCCESS, the failed
    // signal's status, or CL_OUT_OF_RESOURCES (timeout; one log line).
    cl_int wait(int timeout_ms);
    // The sync_file this payload can be exported as, or -1.
    int sync_fd() const;
    // A new fd of the sync_file for the application (export), or -1.  From
    // then on the payload keeps this sync_file: a batch fence comes too late.
    int export_sync_fd();
    // A sync_file whose status is the payload's own (an imported one, or a
    // blitter batch's fence): a batch can wait for it on the GPU.  Else -1.
    int gpu_fence_fd() const;
    // The blitter batch before the signal was submitted: `fd` (owned) becomes
    // the payload's sync_file and the layer's own fence is dropped.  false
    // (fd closed) when the payload was exported or signalled already.
    bool adopt_batch_fence(int fd);
    bool signalled() const;

private:
    Payload() = default;
    mutable std::mutex m_;  // fd_, fence_, batch_, fixed_, state_
    OwnedFd fd_;
    bool imported_ = false;
    bool batch_ = false;  // fd_ is a blitter batch's FENCE_OUT
    bool fixed_ = false;  // exported or signalled: the sync_file stays as it is
    // Its timeline closes before fd_ (declared after it): a signal step that
    // never ran (its enqueue failed after the payload was made) still closes
    // the timeline, and the kernel signals the point with an error, so no
    // exported copy waits forever.
    LayerFence fence_;
    std::condition_variable cv_;
    int state_ = 0;  // 0 pending, 1 signalled, <0 the failed signal's status
};

}  // namespace cldmabuf::sync

struct _cl_semaphore_khr {
    const void *dispatch;  // ours(): where a loader that dispatches through the handle would land
    uint32_t magic;
    cldmabuf::IcdContext context;  // held while the semaphore lives
    cl_device_id device;
    bool device_listed;
    bool export_sync_fd;
    bool import_sync_fd;
    std::vector<cl_semaphore_properties_khr> properties;
    std::atomic<cl_uint> refs{1};
    std::shared_ptr<cldmabuf::sync::Payload> pending;  // under semaphore_mutex()
};

namespace cldmabuf::sync {

// Guards every semaphore's `pending` (operations on several semaphores take
// their payloads together).
std::mutex &semaphore_mutex();

// Registers a new semaphore (refs 1) and hands it out: the live set owns it
// until release_semaphore_ref drops its last reference.
cl_semaphore_khr register_semaphore(std::unique_ptr<_cl_semaphore_khr> s);
// The handle names a live layer semaphore.
bool is_layer_semaphore(cl_semaphore_khr s);
// Drops one reference; the last one unregisters it and frees it (its
// reference on the context with it).  false for a handle that is not a live semaphore.
bool release_semaphore_ref(cl_semaphore_khr s);
// Live layer semaphores (tests: nothing leaks).
size_t live_semaphores();

// A sync_fd payload: sync_file fds (Linux drivers/dma-buf/sync_file.c)
// through the kernel seam.
// SYNC_IOC_FILE_INFO answers on it: the fd is a sync_file.
bool is_sync_file(int fd);
// Bounded wait for POLLIN on a sync_file, then its status: CL_SUCCESS when it
// signalled without error, CL_OUT_OF_RESOURCES on timeout or a fence error
// (one log line each).
int wait_sync_file(int fd, int timeout_ms);


}  // namespace cldmabuf::sync
