#include "layer/handoff/transfers.hpp"

#include "layer/core/dispatch.hpp"
#include "layer/blit/tiled_shadow.hpp"
#include "layer/handoff/alias_merge.hpp"
#include "layer/handoff/cpu_access.hpp"
#include "layer/core/host_step.hpp"
#include "layer/import/native.hpp"
#include "layer/base/log.hpp"
#include "layer/base/stats.hpp"

namespace cldmabuf {
size_t copy_bytes(const Import &import) { return import.is_image ? import.image.bytes : import.size; }

bool copied_in(const Import &import) {
    return import.route == Route::copy && !(import.flags & CL_MEM_WRITE_ONLY);
}
bool copied_out(const Import &import) {
    return import.route == Route::copy && !(import.flags & CL_MEM_READ_ONLY);
}

StagingList stagings_of(const ImportList &list, cl_command_queue queue, bool (*moves)(const Import &)) {
    StagingList out;
    for (const auto &import : list) out.push_back(moves(*import) ? staging_for(*import, queue) : nullptr);
    return out;
}

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
bool slow_transfer(const Import &import) {
    return import.route == Route::copy && copy_bytes(import) > fast_copy_limit &&
           (import.is_image || registered_mapping(import) == nullptr);
}

bool large_registered_transfer(const Import &import) {
    return import.route == Route::copy && copy_bytes(import) > fast_copy_limit && !import.is_image &&
           registered_mapping(import) != nullptr;
}

// The fast acquire's device copies: each copy-route import the device reads
// gets the ICD's Write from its mapping, with no wait list (the queue is
// idle).  *command becomes the event that completes after all of them: the
// one Write's on an in-order queue, else a barrier over them (an
// out-of-order queue must not start a later command before them, as the
// queued path's barrier guarantees).  Nothing enqueued: *command unchanged.
// On an error nothing of the command is left enqueued but Writes that
// already went to the ICD (released here; the error is the caller's).
cl_int fast_copies_in(cl_command_queue queue, const ImportList &list, cl_event *command) {
    std::vector<cl_event> writes;
    cl_int err = CL_SUCCESS;
    for (const auto &import : list) {
        if (!copied_in(*import)) continue;
        // An aliased import keeps what it uploads and uploads what it kept
        // (alias_merge.hpp): the Write runs later, after another queue's
        // release may have written the dma-buf.
        const void *kept = note_upload(*import);
        cl_event done = nullptr;
        err = copy_to_device(queue, *import, 0, nullptr, &done, kept);
        if (err != CL_SUCCESS) {
            LOG_ERROR("acquire: the ICD refused the copy into the device buffer (error %d)", err);
            break;
        }
        count_copy(*import, false, stats().copy_in_bytes);
        writes.push_back(done);
    }
    if (err == CL_SUCCESS && !writes.empty()) {
        cl_event last = nullptr;
        if (!out_of_order_queue(queue)) {
            last = writes.back();  // in order: the last one completes after the others
            writes.pop_back();
        } else {
            err = next().clEnqueueBarrierWithWaitList(queue, static_cast<cl_uint>(writes.size()), writes.data(),
                                                      &last);
        }
        if (err == CL_SUCCESS) {
            next().clReleaseEvent(*command);
            *command = last;
        }
    }
    for (cl_event e : writes) next().clReleaseEvent(e);
    return err;
}

// The fast release's device copies: the queue is idle, so each copy-route
// import the device may have written is read back into its mapping at once
// (blocking), before SYNC END.  A large one (a registered buffer on the
// quiet queue, fast_transfer) is read on its staging's queue after the
// release's `marker`: from the application's queue NVIDIA moved the same
// Read at 3.5 GB/s, from the staging's at its pinned rate
// (layer/handoff/staging.cpp).  The first error, after trying them all.
cl_int fast_copies_out(cl_command_queue queue, const ImportList &list, const WriteBackList &write_backs,
                       cl_event marker) {
    cl_int result = CL_SUCCESS;
    for (size_t i = 0; i < list.size(); ++i) {
        const auto &import = list[i];
        if (!copied_out(*import)) continue;
        // A merging release's (alias_merge.hpp) Read goes into its scratch, never through staging.
        void *scratch = release_scratch(write_backs[i].get());
        std::shared_ptr<PinnedStaging> staging;
        if (!scratch && copy_bytes(*import) > fast_copy_limit) {
            staging = staging_for(*import, queue);
            next().clFlush(queue);  // the marker another queue waits for must reach the device
        }
        const cl_int err = staging && registered_mapping(*import)
                               ? registered_to_dmabuf_after(*staging, *import, marker)
                               : copy_to_dmabuf(queue, *import, 0, nullptr, nullptr, CL_TRUE, scratch);
        finish_release(*import, write_backs[i].get(), err == CL_SUCCESS);  // merges the scratch (alias_merge.hpp)
        if (err != CL_SUCCESS) {
            LOG_ERROR("release: the ICD refused the copy out of the device buffer (error %d)", err);
            if (result == CL_SUCCESS) result = err;
            continue;
        }
        count_copy(*import, false, stats().copy_out_bytes);
    }
    return result;
}

}  // namespace cldmabuf
