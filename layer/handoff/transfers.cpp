#include "layer/handoff/transfers.hpp"

#include "layer/core/dispatch.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/blit/tiled_shadow.hpp"
#include "layer/handoff/staging.hpp"
#include "layer/handoff/alias_merge.hpp"
#include "layer/handoff/cpu_access.hpp"
#include "layer/handoff/upload_events.hpp"
#include "layer/core/host_step.hpp"
#include "layer/import/native.hpp"
#include "layer/base/log.hpp"
#include "layer/base/settings.hpp"
#include "layer/base/stats.hpp"

namespace cldmabuf {
size_t copy_bytes(const Import &import) { return import.is_image ? import.image.bytes : import.size; }

bool copied_in(const Import &import) { return !(import.flags & CL_MEM_WRITE_ONLY); }
bool copied_out(const Import &import) { return !(import.flags & CL_MEM_READ_ONLY); }

void count_copy(const Import &import, bool staged, std::atomic<uint64_t> &direction) {
    if (staged && registered_mapping(import) != nullptr) staged = false;  // the ICD moved the mapping's own pages
    stats().host_bytes_copied += copy_bytes(import);
    direction += copy_bytes(import);
    (staged ? stats().staged_transfers : stats().direct_transfers)++;
}

cl_int copy_to_device(cl_command_queue queue, const Import &import, cl_uint n, const cl_event *waits,
                      cl_event *done, const void *from) {
    const void *host = from ? from : copy_route_host(import);
    if (!import.is_image)
        return next().clEnqueueWriteBuffer(queue, import.mem, CL_FALSE, 0, import.size, host, n, waits, done);
    const size_t origin[3] = {0, 0, 0};
    const HostPixels px = host_pixels(import);
    return next().clEnqueueWriteImage(queue, import.mem, CL_FALSE, origin, import.image.region, px.row_pitch,
                                      px.slice_pitch, host, n, waits, done);
}

cl_int copy_to_dmabuf(cl_command_queue queue, const Import &import, cl_uint n, const cl_event *waits,
                      cl_event *done, cl_bool blocking, void *into) {
    void *host = into ? into : copy_route_host(import);
    if (!import.is_image)
        return next().clEnqueueReadBuffer(queue, import.mem, blocking, 0, import.size, host, n, waits, done);
    const size_t origin[3] = {0, 0, 0};
    const HostPixels px = host_pixels(import);
    return next().clEnqueueReadImage(queue, import.mem, blocking, origin, import.image.region, px.row_pitch,
                                     px.slice_pitch, host, n, waits, done);
}

// Copy-route imports up to this size take the fast path: their Write is
// enqueued and their Read waited for on the application's thread (the queue
// is idle then, so the Read is only the transfer: at most tens of us on a
// PCIe device).  Larger ones take the queued path, which moves them through
// pinned staging (layer/handoff/staging.hpp) on the layer's worker and lets
// the caller go on meanwhile.

// Whether a copy-route import's transfer is the fast path's to make: small
// ones always; on acquire also a registered buffer of any size (its Write
// goes from pinned pages at the ICD's DMA rate and does not hold the caller).
// A release's Read would hold it, so a large release stays queued, unless
// the queue is quiet (layer/queue/quiet.hpp): the Read is then all
// that is left to wait for, and the caller waits for it about as long as
// its clFinish would, without the queued step's marker callback, worker and
// gate (measured on NVIDIA: about 0.2 ms per 64 MiB, 14 % of the transfer).
size_t fast_copy_limit() {
    static const size_t limit = debug_on(DebugWord::small_copy_limit) ? size_t{1} << 10 : size_t{1} << 20;
    return limit;
}

bool slow_transfer(const Import &import) {
    return copy_bytes(import) > fast_copy_limit() && (import.is_image || registered_mapping(import) == nullptr);
}

bool large_registered_transfer(const Import &import) {
    return copy_bytes(import) > fast_copy_limit() && !import.is_image && registered_mapping(import) != nullptr;
}

// The fast acquire's upload: the ICD's Write from the mapping, with no wait
// list (the queue is idle).
cl_int upload_at_once(cl_command_queue queue, const Import &import, cl_event *done) {
    if (!copied_in(import)) return CL_SUCCESS;
    // An aliased import keeps what it uploads and uploads what it kept
    // (alias_merge.hpp): the Write runs later, after another queue's
    // release may have written the dma-buf.
    const void *kept = note_upload(import);
    if (cl_int err = copy_to_device(queue, import, 0, nullptr, done, kept); err != CL_SUCCESS) {
        LOG_ERROR("acquire: the ICD refused the copy into the device buffer (error %d)", err);
        return err;
    }
    count_copy(import, false, stats().copy_in_bytes);
    note_upload_enqueued(import, *done);  // what a release with no write-back waits for
    return CL_SUCCESS;
}

// *command becomes the event that completes after all the uploads (what it
// held is released): the one Write's on an in-order queue (the last one
// completes after the others), else a barrier over them (an out-of-order
// queue must not start a later command before them, as the queued path's
// barrier guarantees).
cl_int join_uploads(cl_command_queue queue, IcdEvents &uploads, IcdEvent *command) {
    if (uploads.empty()) return CL_SUCCESS;
    cl_int err = CL_SUCCESS;
    IcdEvent last;
    if (!out_of_order_queue(queue)) {
        last = uploads.take_back();
    } else {
        err = next().clEnqueueBarrierWithWaitList(queue, static_cast<cl_uint>(uploads.size()), uploads.data(),
                                                  last.out());
    }
    if (err == CL_SUCCESS) *command = std::move(last);
    uploads.reset();
    return err;
}

// The queued acquire's upload: pinned staging in the step, after the fences
// and SYNC START, or the ICD's Write behind the step's gate.  The direct
// Write of an aliased import reads its snapshot, which the step fills
// (layer/handoff/alias_merge.hpp, upload_source).
void prepare_upload(Import &import, cl_command_queue queue, AcquireSlot *slot) {
    if (!copied_in(import)) return;
    slot->staging = staging_for(import, queue);
    if (!slot->staging) slot->upload_from = upload_source(import);
}

cl_int upload_in_step(Import &import, const AcquireSlot &slot) {
    if (!copied_in(import)) return CL_SUCCESS;
    // An aliased import keeps what is uploaded next (staged here or the
    // direct Write behind the gate, which reads what it kept).
    const void *kept = note_upload(import, slot.upload_from != nullptr);
    if (!slot.staging) return CL_SUCCESS;
    const cl_int err = staged_to_device(*slot.staging, import, kept);
    if (err == CL_SUCCESS) count_copy(import, true, stats().copy_in_bytes);
    return err;
}

cl_int upload_behind_gate(cl_command_queue queue, const Import &import, const AcquireSlot &slot, cl_event gate,
                          cl_event *done) {
    if (!copied_in(import) || slot.staging) return CL_SUCCESS;
    if (cl_int err = copy_to_device(queue, import, 1, &gate, done, slot.upload_from); err != CL_SUCCESS) return err;
    count_copy(import, false, stats().copy_in_bytes);
    note_upload_enqueued(import, *done);
    return CL_SUCCESS;
}

// The fast release's write-back: the queue is idle, so the device copy is
// read back into the mapping at once (blocking), before SYNC END.  A large
// one (a registered buffer on the quiet queue, large_registered_transfer) is
// read on its staging's queue after the release's `marker`: from the
// application's queue NVIDIA moved the same Read at 3.5 GB/s, from the
// staging's at its pinned rate (layer/handoff/staging.cpp).
cl_int write_back_at_once(cl_command_queue queue, Import &import, const ReleaseSlot &slot, cl_event marker) {
    if (!copied_out(import)) return CL_SUCCESS;
    // A merging release's (alias_merge.hpp) Read goes into its scratch, never through staging.
    void *scratch = release_scratch(slot.write_back.get());
    std::shared_ptr<PinnedStaging> staging;
    if (!scratch && copy_bytes(import) > fast_copy_limit()) {
        staging = staging_for(import, queue);
        next().clFlush(queue);  // the marker another queue waits for must reach the device
    }
    const cl_int err = staging && registered_mapping(import)
                           ? registered_to_dmabuf_after(*staging, import, marker)
                           : copy_to_dmabuf(queue, import, 0, nullptr, nullptr, CL_TRUE, scratch);
    finish_release(import, slot.write_back.get(), err == CL_SUCCESS);  // merges the scratch (alias_merge.hpp)
    if (err != CL_SUCCESS) {
        LOG_ERROR("release: the ICD refused the copy out of the device buffer (error %d)", err);
        return err;
    }
    count_copy(import, false, stats().copy_out_bytes);
    return CL_SUCCESS;
}

// The queued release's write-back: the ICD's Read in queue order before the
// step (into the dma-buf, or a merging release's scratch), or pinned staging
// in the step.  A scratch write-back's Read never goes through staging.
void prepare_write_back(Import &import, cl_command_queue queue, ReleaseSlot *slot) {
    if (copied_out(import) && !release_scratch(slot->write_back.get())) slot->staging = staging_for(import, queue);
}

cl_int write_back_before_step(cl_command_queue queue, const Import &import, const ReleaseSlot &slot, cl_uint n,
                              const cl_event *waits, cl_event *done) {
    if (!copied_out(import) || slot.staging) return CL_SUCCESS;
    if (cl_int err = copy_to_dmabuf(queue, import, n, waits, done, CL_FALSE, release_scratch(slot.write_back.get()));
        err != CL_SUCCESS)
        return err;
    count_copy(import, false, stats().copy_out_bytes);
    return CL_SUCCESS;
}

void write_back_in_step(Import &import, const ReleaseSlot &slot, cl_int *result, IcdEvents *still_writing) {
    // The scratch holds the device copy (its Read is in the wait list);
    // after a failed command the dma-buf is left as it was.
    if (copied_out(import)) finish_release(import, slot.write_back.get(), *result == CL_SUCCESS);
    // Pinned staging: every earlier command finished (the marker), so the
    // device copy is final.  After a failed command the dma-buf is left as
    // it was.
    if (slot.staging && *result == CL_SUCCESS) {
        IcdEvent writing;
        *result = staged_to_dmabuf(*slot.staging, import, writing.out());
        still_writing->add(std::move(writing));
        if (*result == CL_SUCCESS) count_copy(import, true, stats().copy_out_bytes);
    }
}

}  // namespace cldmabuf
