// The coherency handoff.  Acquire: wait (bounded) for the dma-buf's implicit
// fences — other devices' pending work — then DMA_BUF_IOCTL_SYNC START in the
// object's access direction.  Release: DMA_BUF_IOCTL_SYNC END once every
// earlier command that used the object finished.  Imports that live in a
// device copy (the copy route) follow the device's access direction: they
// are refreshed from the dma-buf on acquire unless the device only writes
// them (CL_MEM_WRITE_ONLY), and written back on release unless it only reads
// them (CL_MEM_READ_ONLY).  Host-access flags (CL_MEM_HOST_*) speak of the
// application's own reads and writes, not of the device's, so they change
// neither.  Buffers move through pinned staging where it is on
// (layer/handoff/staging.hpp), else with the ICD's Write/ReadBuffer from the
// mapping.  Tiled image imports
// (layer/blit/tiled_shadow.hpp) are de-tiled into their linear shadow by the
// blitter on acquire and re-tiled on release when writable; the CPU never
// touches their dma-buf, so they take no DMA_BUF_IOCTL_SYNC.  Explicit
// fences (issue #20): the queued acquire waits for the fences as one exported
// sync_file where the kernel can (layer/handoff/acquire_fences.hpp), and a
// queued release puts its own fence into the written dma-bufs for
// implicit-sync consumers (layer/handoff/release_fences.hpp).
//
// Two paths.  The fast one (issue #18) costs what the ICD's own floor costs:
// one marker, the command's event and its place in the queue, and the
// syscalls done at once on the application's thread.  It is taken only when
// there is nothing to wait for, and that is asked, not assumed: no wait
// list; the marker, which completes only after every earlier command of the
// queue, already complete once enqueued (PoCL on an idle queue) or flushed
// (a copy-route acquire does not wait for it while no layer step is
// unfinished: its Write runs in queue order, see acquire_needs_no_idle_queue);
// no fence pending (poll with a zero timeout); no tiled shadow (the
// blitter de-tiles it); copy-route imports of at most fast_copy_limit, whose
// Write is enqueued at once and whose Read is waited for (a discrete
// device's handoff then costs its floor: the ICD's own Write and Read); no
// failure the queue still owes clFinish; no profiling event (the step's own
// timestamps).
// On the quiet queue (layer/handoff/quiet_queue.hpp: the layer knows the
// queue idle and nothing was enqueued since, e.g. right after clFinish, or
// a release right after its fast acquire) "already complete" is known
// without asking: the marker is not watched, and a registered copy-route
// buffer's release of any size reads back at once (fast_transfer).
// Everything else is a host step (layer/host_step.hpp) over the marker
// already enqueued: bounded fence waits on the queue's worker, gate, barrier.
#include "layer/handoff/acquire_release.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "layer/dispatch.hpp"
#include "layer/dmabuf/explicit_fences.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/enqueue_epoch.hpp"
#include "layer/failed_events.hpp"
#include "layer/import/buffer.hpp"
#include "layer/import/native.hpp"
#include "layer/handoff/acquire_opening.hpp"
#include "layer/handoff/cpu_access.hpp"
#include "layer/handoff/failed_acquire_shield.hpp"
#include "layer/handoff/quiet_queue.hpp"
#include "layer/handoff/release_fences.hpp"
#include "layer/blit/tiled_shadow.hpp"
#include "layer/host_step.hpp"
#include "layer/log.hpp"
#include "layer/queue_identity.hpp"
#include "layer/registry.hpp"
#include "layer/stats.hpp"
#include "layer/handoff/staging.hpp"
#include "layer/sync/fence_source.hpp"

namespace cldmabuf {
namespace {

using ImportList = std::vector<std::shared_ptr<Import>>;

cl_int collect(cl_command_queue queue, cl_uint n, const cl_mem *mems, ImportList *out, const char *what) {
    if ((n == 0) != (mems == nullptr)) {
        LOG_ERROR("%s: num_mem_objects and mem_objects disagree", what);
        return CL_INVALID_VALUE;
    }
    cl_context queue_context = nullptr;
    cl_device_id queue_device = nullptr;
    if (queue_context_and_device(queue, &queue_context, &queue_device) != CL_SUCCESS) {
        LOG_ERROR("%s: invalid command queue", what);
        return CL_INVALID_COMMAND_QUEUE;
    }
    for (cl_uint i = 0; i < n; ++i) {
        auto import = imports().find(mems[i]);
        if (!import) {
            LOG_ERROR("%s: mem_objects[%u] (%p) is not an imported external memory object", what, i,
                      static_cast<void *>(mems[i]));
            return CL_INVALID_MEM_OBJECT;
        }
        // The queue's device first: the spec names CL_INVALID_COMMAND_QUEUE
        // for a device that cannot use the object, whatever its context.
        if (!device_or_parent_in(import->devices, queue_device)) {
            LOG_ERROR("%s: the queue's device cannot use mem_objects[%u] (not in its context or "
                      "CL_MEM_DEVICE_HANDLE_LIST_KHR)", what, i);
            return CL_INVALID_COMMAND_QUEUE;
        }
        if (import->context != queue_context) {
            LOG_ERROR("%s: mem_objects[%u] belongs to another context than the queue", what, i);
            return CL_INVALID_CONTEXT;
        }
        if (std::find(out->begin(), out->end(), import) == out->end()) out->push_back(std::move(import));
    }
    return CL_SUCCESS;
}

// Device copies of Route::copy imports: whole buffers, or for images
// the pixels at the plane's offset with the dma-buf's own pitches.
size_t copy_bytes(const Import &import) { return import.is_image ? import.image.bytes : import.size; }

// The device reads the object: its copy must hold the dma-buf's bytes.
bool copied_in(const Import &import) {
    return import.route == Route::copy && !(import.flags & CL_MEM_WRITE_ONLY);
}
// The device may write the object: the dma-buf must get its bytes back.
bool copied_out(const Import &import) {
    return import.route == Route::copy && !(import.flags & CL_MEM_READ_ONLY);
}

// The pinned staging of each import where it takes that route, else nullptr.
using StagingList = std::vector<std::shared_ptr<PinnedStaging>>;
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

// Where a buffer's bytes go from and to: the registration's mapping when
// the ICD pinned one (layer/handoff/staging.hpp), else the import's own.
void *buffer_host(const Import &import) {
    void *registered = registered_mapping(import);
    return registered ? registered : import.mapping;
}

cl_int copy_to_device(cl_command_queue queue, const Import &import, cl_uint n, const cl_event *waits,
                      cl_event *done) {
    if (!import.is_image)
        return next().clEnqueueWriteBuffer(queue, import.mem, CL_FALSE, 0, import.size, buffer_host(import), n,
                                           waits, done);
    const size_t origin[3] = {0, 0, 0};
    const HostPixels px = host_pixels(import);
    return next().clEnqueueWriteImage(queue, import.mem, CL_FALSE, origin, import.image.region, px.row_pitch,
                                      px.slice_pitch, px.ptr, n, waits, done);
}

cl_int copy_to_dmabuf(cl_command_queue queue, const Import &import, cl_uint n, const cl_event *waits,
                      cl_event *done, cl_bool blocking = CL_FALSE) {
    if (!import.is_image)
        return next().clEnqueueReadBuffer(queue, import.mem, blocking, 0, import.size, buffer_host(import), n,
                                          waits, done);
    const size_t origin[3] = {0, 0, 0};
    const HostPixels px = host_pixels(import);
    return next().clEnqueueReadImage(queue, import.mem, blocking, origin, import.image.region, px.row_pitch,
                                     px.slice_pitch, px.ptr, n, waits, done);
}

// ---- the fast path -------------------------------------------------------------------------

// Copy-route imports up to this size take the fast path: their Write is
// enqueued and their Read waited for on the application's thread (the queue
// is idle then, so the Read is only the transfer: at most tens of us on a
// PCIe device).  Larger ones take the queued path, which moves them through
// pinned staging (layer/handoff/staging.hpp) on the layer's worker and lets
// the caller go on meanwhile.
constexpr size_t fast_copy_limit = size_t{1} << 20;

// Whether a copy-route import's transfer is the fast path's to make: small
// ones always; on acquire also a registered buffer of any size (its Write
// goes from pinned pages at the ICD's DMA rate and does not hold the caller).
// A release's Read would hold it, so a large release stays queued, unless
// the queue is quiet (layer/handoff/quiet_queue.hpp): the Read is then all
// that is left to wait for, and the caller waits for it about as long as
// its clFinish would, without the queued step's marker callback, worker and
// gate (issue #13: about 0.2 ms per 64 MiB on NVIDIA, 14 % of the transfer).
bool fast_transfer(const Import &import, bool acquire, bool quiet) {
    if (copy_bytes(import) <= fast_copy_limit) return true;
    return (acquire || quiet) && !import.is_image && registered_mapping(import) != nullptr;
}

// No wait list, in-place or fast-transfer copy-route imports (tiled shadows
// need the blitter), nothing the queue still owes, no profiling event: the
// marker (and a copy route's Write or Read) may then be the whole command.
bool fast_path_allowed(cl_command_queue queue, const ImportList &list, cl_uint num_events, const cl_event *wait_list,
                       const cl_event *event, bool acquire, bool quiet) {
    if (num_events != 0 || wait_list) return false;  // (a list without a count is refused by the queued path)
    for (const auto &import : list)
        if (import->over_tiled_shadow() || (import->route == Route::copy && !fast_transfer(*import, acquire, quiet)))
            return false;
    if (any_queue_failure() && queue_failure(queue) < 0) return false;
    // An import fenced off after a failed acquire: the queued step refuses it.
    if (acquire && any_import_shielded())
        for (const auto &import : list)
            if (import_shielded(*import)) return false;
    return !event || !profiling_queue(queue);
}

cl_int status_of(cl_event marker) {
    cl_int status = CL_QUEUED;
    if (next().clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) !=
        CL_SUCCESS)
        return CL_QUEUED;
    return status;
}

// A syscall that failed on the fast path: the command's marker becomes a
// step that reports `failure` (its log line is written) with the queued
// path's failure semantics.  `step` holds the queue, type and marker.
cl_int enqueue_fast_failure(HostStep step, const ImportList &list, cl_int failure, cl_event *event) {
    for (const auto &import : list) step.keep_alive.push_back(import->mem);
    step.work = [failure](cl_int prior) -> cl_int { return prior < 0 ? prior : failure; };
    return enqueue_host_step(std::move(step), event);
}

// How long the application's thread may watch a marker the device already
// holds.  An ICD completes a marker asynchronously even on an idle queue
// (PoCL 3.1: within a microsecond; yielding, 600 of 600 within this bound
// at load 7 on 2 cores), so "is the queue idle" needs a short look.  Past
// the bound the command takes the queued path: an ICD that reports a marker
// behind a running kernel as CL_SUBMITTED costs the caller at most this.
// At least idle_looks looks as well: on a slow machine (the VM lane's TCG)
// the ICD's thread is slower by the same factor as each look.
constexpr auto idle_look = std::chrono::microseconds(50);
constexpr int idle_looks = 64;

// Enqueues the command's marker; *idle when every earlier command of the
// queue has finished.  `known_idle` (the quiet queue, or a copy-route
// acquire that needs no idle queue): the caller knows it, and the marker is
// neither flushed nor asked.  Otherwise a marker still CL_QUEUED after a
// flush waits for earlier commands (PoCL submits a command to its device
// once its dependencies completed): no waiting for it here.  One
// CL_SUBMITTED or CL_RUNNING is watched for up to idle_look and idle_looks.
cl_int enqueue_marker(cl_command_queue queue, bool known_idle, cl_event *marker, bool *idle) {
    if (cl_int err = next().clEnqueueMarkerWithWaitList(queue, 0, nullptr, marker); err != CL_SUCCESS) return err;
    if (known_idle) {
        *idle = true;
        return CL_SUCCESS;
    }
    cl_int status = status_of(*marker);
    if (status == CL_QUEUED) {
        next().clFlush(queue);
        status = status_of(*marker);
    }
    if (status == CL_SUBMITTED || status == CL_RUNNING) {
        const auto deadline = std::chrono::steady_clock::now() + idle_look;
        // Yield between looks: on a loaded machine the ICD's own thread
        // needs the core this thread would spin on.
        int looks = 0;
        do {
            std::this_thread::yield();
            status = status_of(*marker);
        } while ((status == CL_SUBMITTED || status == CL_RUNNING) &&
                 (++looks < idle_looks || std::chrono::steady_clock::now() < deadline));
    }
    *idle = status == CL_COMPLETE;
    return CL_SUCCESS;
}

// The queued acquire's openings (layer/handoff/acquire_opening.hpp), one
// per import, that a release enqueued behind it may do ahead: only where
// the release may attach a fence at all (explicit fences on, a fence
// source) and no import is a tiled shadow (its de-tile is a blitter
// execbuffer on the dma-buf, which waits for every fence, so the step stays
// one that waits on them).
using Openings = std::vector<std::shared_ptr<AcquireOpening>>;
Openings openings_of(const ImportList &list) {
    Openings out;
    if (!explicit_fences_on() || !sync::can_export_sync_fd()) return out;
    for (const auto &import : list)
        if (import->over_tiled_shadow()) return out;
    for (const auto &import : list) out.push_back(make_acquire_opening(import));
    return out;
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
        cl_event done = nullptr;
        err = copy_to_device(queue, *import, 0, nullptr, &done);
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
cl_int fast_copies_out(cl_command_queue queue, const ImportList &list, cl_event marker) {
    cl_int result = CL_SUCCESS;
    for (const auto &import : list) {
        if (!copied_out(*import)) continue;
        std::shared_ptr<PinnedStaging> staging;
        if (copy_bytes(*import) > fast_copy_limit) {
            staging = staging_for(*import, queue);
            next().clFlush(queue);  // the marker another queue waits for must reach the device
        }
        const cl_int err = staging && registered_mapping(*import)
                               ? registered_to_dmabuf_after(*staging, *import, marker)
                               : copy_to_dmabuf(queue, *import, 0, nullptr, nullptr, CL_TRUE);
        if (err != CL_SUCCESS) {
            LOG_ERROR("release: the ICD refused the copy out of the device buffer (error %d)", err);
            if (result == CL_SUCCESS) result = err;
            continue;
        }
        count_copy(*import, false, stats().copy_out_bytes);
    }
    return result;
}

// Whether a fast acquire may do its syscalls before the queue is idle.  On
// the copy route the device never reads the dma-buf's pages: its copy is
// refreshed by the ICD's Write, which runs in queue order after every earlier
// command, so nothing the queue still runs can see the bracket opened early;
// what must come before the bracket are the layer's own earlier steps (a
// release's SYNC END or write-back, a semaphore wait, a blitter copy), hence
// no step of any queue may be unfinished.  A zero-copy import is read in
// place by the device, and a tiled one goes through the blitter: they keep
// the idle check.  This spares a discrete device's handoff the wait for its
// acquire marker (NVIDIA: the marker completes microseconds after a flush),
// so acquire + release costs the floor's single wait for the queue.
bool acquire_needs_no_idle_queue(const ImportList &list) {
    for (const auto &import : list)
        if (import->route != Route::copy || import->over_tiled_shadow()) return false;
    return !host_steps_unfinished();
}

// Whether the handoff may skip its marker's watch: the queue is the quiet
// one (layer/handoff/quiet_queue.hpp) and no step of the layer is
// unfinished (a queued release's SYNC END, a blitter copy, a semaphore
// wait: the quiet record speaks of the application's commands only).
bool handoff_on_quiet_queue(cl_command_queue queue, uint64_t epoch) {
    return queue_still_quiet(queue, epoch) && !host_steps_unfinished();
}

// A failed acquire in side-table mode: its dma-bufs are taken away from the
// ICD's commands behind it before its gate opens
// (layer/handoff/failed_acquire_shield.hpp).
std::function<void()> shield_after_failure(const ImportList &list, cl_command_queue queue) {
    return [list, queue] {
        for (const auto &import : list) shield_import(*import, queue);
    };
}

// An acquire of imports a failed acquire detached: a marker on each other
// queue whose commands behind that failure may still run on the detached
// pages; the step waits for them and then maps the dma-bufs again
// (reattach_shielded).  The markers' events are the caller's to release.
std::vector<cl_event> drain_shield_queues(const ImportList &list, cl_command_queue queue,
                                          std::vector<cl_command_queue> *drained) {
    std::vector<cl_event> markers;
    if (!any_import_shielded()) return markers;
    for (const auto &import : list)
        for (cl_command_queue q : shield_queues(*import)) {
            if (q == queue || std::find(drained->begin(), drained->end(), q) != drained->end()) continue;
            cl_event m = nullptr;
            if (next().clEnqueueMarkerWithWaitList(q, 0, nullptr, &m) != CL_SUCCESS) continue;  // reattach refuses
            next().clFlush(q);
            markers.push_back(m);
            drained->push_back(q);
        }
    return markers;
}

cl_int reattach_shielded(const ImportList &list, cl_command_queue queue,
                         const std::vector<cl_command_queue> &drained) {
    if (!any_import_shielded()) return CL_SUCCESS;
    for (const auto &import : list)
        if (!reattach_import(*import, queue, drained)) return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    return CL_SUCCESS;
}

// The marker becomes the command's event (reported with the _KHR type).
void hand_out(cl_event marker, cl_command_type type, cl_event *event) {
    if (!event) {
        next().clReleaseEvent(marker);
        return;
    }
    event_types().add(marker, type);
    *event = marker;
}

}  // namespace

cl_int CL_API_CALL enqueue_acquire_external_mem_objects(cl_command_queue queue, cl_uint num_mem_objects,
                                                        const cl_mem *mem_objects, cl_uint num_events,
                                                        const cl_event *wait_list, cl_event *event) {
    const uint64_t epoch = enqueue_epoch();  // this command's own count included (layer/entry_chains.cpp)
    if (cl_int err; native_external_mem_command(true, queue, num_mem_objects, mem_objects, num_events, wait_list,
                                                event, &err))
        return err;
    ImportList list;
    if (cl_int err = collect(queue, num_mem_objects, mem_objects, &list, "acquire"); err != CL_SUCCESS) return err;
    stats().acquires += list.size();

    HostStep step;
    step.queue = queue;
    step.num_events = num_events;
    step.wait_list = wait_list;
    step.type = CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR;
    // A SYNC START that failed on the fast path: the step reports it (one
    // log line was written) with the queued path's failure semantics.
    cl_int fast_failure = CL_SUCCESS;
    const bool quiet = handoff_on_quiet_queue(queue, epoch);
    if (fast_path_allowed(queue, list, num_events, wait_list, event, true, quiet)) {
        bool idle = false;
        // Idle (quiet), or as good as idle for this acquire (acquire_needs_no_idle_queue).
        const bool unwatched = quiet || acquire_needs_no_idle_queue(list);
        if (cl_int err = enqueue_marker(queue, unwatched, &step.marker, &idle); err != CL_SUCCESS) return err;
        if (idle && std::all_of(list.begin(), list.end(), [](const auto &import) {
                return fences_signalled_now(*import, import->sync_access_flags());
            })) {
            for (const auto &import : list)
                if (fast_failure == CL_SUCCESS)
                    fast_failure = sync_start(*import, import->sync_access_flags(), "acquire");
            if (fast_failure == CL_SUCCESS) {
                if (cl_int err = fast_copies_in(queue, list, &step.marker); err != CL_SUCCESS) {
                    // The command is not enqueued: the CPU access brackets just
                    // opened close again, the marker goes.
                    for (const auto &import : list) end_cpu_access(*import, import->sync_access_flags(), "acquire");
                    next().clReleaseEvent(step.marker);
                    return err;
                }
                stats().fast_handoffs++;
                if (quiet) stats().quiet_handoffs++;
                else if (unwatched) stats().unwatched_acquires++;
                // The queue had nothing unfinished at `epoch` (its marker
                // completed, or it was quiet): the next handoff may know it.
                if (quiet || !unwatched) note_quiet_queue(queue, epoch);
                hand_out(step.marker, step.type, event);
                return CL_SUCCESS;
            }
        }
    }
    stats().queued_handoffs++;
    step.before_open_after_failure = shield_after_failure(list, queue);
    if (fast_failure != CL_SUCCESS) return enqueue_fast_failure(std::move(step), list, fast_failure, event);
    for (const auto &import : list) step.keep_alive.push_back(import->mem);
    // Imports a failed acquire on another queue detached: that queue's
    // commands are waited for (a marker), then the dma-bufs mapped again.
    // (Not behind a marker the fast path already enqueued, nor with a wait
    // list the step refuses: the work then finds them detached and fails.)
    std::vector<cl_command_queue> drained;
    std::vector<cl_event> drains, waits;
    if (!step.marker && (num_events > 0) == (wait_list != nullptr))
        drains = drain_shield_queues(list, queue, &drained);
    if (!drains.empty()) {
        waits.assign(wait_list, wait_list + num_events);
        waits.insert(waits.end(), drains.begin(), drains.end());
        step.num_events = static_cast<cl_uint>(waits.size());
        step.wait_list = waits.data();
    }
    const StagingList staging = stagings_of(list, queue, copied_in);
    const Openings openings = openings_of(list);
    if (!openings.empty()) step.waits = HostStep::Waits::openable_acquire;
    // The openings are destroyed with the work, run or dropped.
    step.work = [list, staging, openings, queue, drained](cl_int prior) -> cl_int {
        if (prior < 0) return prior;
        if (cl_int refused = reattach_shielded(list, queue, drained); refused != CL_SUCCESS) return refused;
        for (size_t i = 0; i < list.size(); ++i) {
            Import &import = *list[i];
            cl_int err = import.over_tiled_shadow() ? detile(import)
                         : openings.empty()         ? open_acquire(import)
                                                    : open_in_step(*openings[i]);
            // Pinned staging runs here, after the fences and SYNC START; the
            // application's queue waits for this step.
            if (err == CL_SUCCESS && staging[i]) {
                err = staged_to_device(*staging[i], import);
                if (err == CL_SUCCESS) count_copy(import, true, stats().copy_in_bytes);
            }
            if (err != CL_SUCCESS) return err;
        }
        return CL_SUCCESS;
    };
    // The direct route: the ICD's Write{Buffer,Image} from the mapping, after the fences.
    step.device_commands = [list, staging, queue](cl_event gate, std::vector<cl_event> *after) -> cl_int {
        for (size_t i = 0; i < list.size(); ++i) {
            const Import &import = *list[i];
            if (!copied_in(import) || staging[i]) continue;
            cl_event done = nullptr;
            cl_int err = copy_to_device(queue, import, 1, &gate, &done);
            if (err != CL_SUCCESS) return err;
            count_copy(import, false, stats().copy_in_bytes);
            after->push_back(done);
        }
        return CL_SUCCESS;
    };
    const cl_int err = enqueue_host_step(std::move(step), event);
    for (cl_event m : drains) next().clReleaseEvent(m);
    return err;
}

cl_int CL_API_CALL enqueue_release_external_mem_objects(cl_command_queue queue, cl_uint num_mem_objects,
                                                        const cl_mem *mem_objects, cl_uint num_events,
                                                        const cl_event *wait_list, cl_event *event) {
    const uint64_t epoch = enqueue_epoch();  // this command's own count included (layer/entry_chains.cpp)
    if (cl_int err; native_external_mem_command(false, queue, num_mem_objects, mem_objects, num_events, wait_list,
                                                event, &err))
        return err;
    ImportList list;
    if (cl_int err = collect(queue, num_mem_objects, mem_objects, &list, "release"); err != CL_SUCCESS) return err;
    // Checked here: the write-back below rebuilds the wait list.
    if (cl_int err = check_wait_list(num_events, wait_list); err != CL_SUCCESS) return err;
    stats().releases += list.size();

    cl_event marker = nullptr;
    // A SYNC END that failed on the fast path fails the release as it does on
    // the queued path (the CPU may not see the device's writes): the step
    // reports it (end_cpu_access wrote the log line).
    cl_int fast_failure = CL_SUCCESS;
    const bool quiet = handoff_on_quiet_queue(queue, epoch);
    if (fast_path_allowed(queue, list, num_events, wait_list, event, false, quiet)) {
        bool idle = false;
        // Quiet: nothing of the application's came since the queue was idle,
        // so no earlier command can still use the objects.
        if (cl_int err = enqueue_marker(queue, quiet, &marker, &idle); err != CL_SUCCESS) return err;
        if (idle) {
            // Every earlier command finished: device copies come back now, and
            // the CPU access bracket closes, for every import even after a failure.
            fast_failure = fast_copies_out(queue, list, marker);
            for (const auto &import : list) {
                const cl_int ended = end_cpu_access(*import, import->sync_access_flags(), "release");
                if (fast_failure == CL_SUCCESS) fast_failure = ended;
            }
            if (fast_failure == CL_SUCCESS) {
                stats().fast_handoffs++;
                if (quiet) stats().quiet_handoffs++;
                note_quiet_queue(queue, epoch);
                hand_out(marker, CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR, event);
                return CL_SUCCESS;
            }
        }
    }
    stats().queued_handoffs++;
    if (fast_failure != CL_SUCCESS) {
        HostStep step;
        step.queue = queue;
        step.type = CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR;
        step.marker = marker;
        return enqueue_fast_failure(std::move(step), list, fast_failure, event);
    }

    // Write device copies back first, in queue order, so the SYNC END below
    // follows them.
    std::vector<cl_event> waits(wait_list, wait_list + (wait_list ? num_events : 0));
    std::vector<cl_event> readbacks;
    const StagingList staging = stagings_of(list, queue, copied_out);
    for (size_t i = 0; i < list.size(); ++i) {
        const Import &import = *list[i];
        if (!copied_out(import) || staging[i]) continue;
        cl_event done = nullptr;
        cl_int err = copy_to_dmabuf(queue, import, static_cast<cl_uint>(waits.size()),
                                    waits.empty() ? nullptr : waits.data(), &done);
        if (err != CL_SUCCESS) {
            for (cl_event e : readbacks) next().clReleaseEvent(e);
            return err;
        }
        count_copy(import, false, stats().copy_out_bytes);
        readbacks.push_back(done);
    }
    waits.insert(waits.end(), readbacks.begin(), readbacks.end());

    // Implicit-sync consumers of the written dma-bufs wait for this step from
    // now on; it signals them when its work is done (layer/handoff/release_fences.hpp).
    const ReleaseFences fences = attach_release_fences(list);

    HostStep step;
    step.queue = queue;
    step.num_events = static_cast<cl_uint>(waits.size());
    step.wait_list = waits.empty() ? nullptr : waits.data();
    step.type = CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR;
    step.marker = marker;  // fast path allowed: no wait list, no write-back
    for (const auto &import : list) step.keep_alive.push_back(import->mem);
    step.work = [list, staging, fences](cl_int prior) -> cl_int {
        cl_int result = prior < 0 ? prior : CL_SUCCESS;
        for (size_t i = 0; i < list.size(); ++i) {
            const auto &import = list[i];
            // Pinned staging: every earlier command finished (the marker), so
            // the device copy is final.  After a failed command the dma-buf
            // is left as it was.
            if (staging[i] && result == CL_SUCCESS) {
                result = staged_to_dmabuf(*staging[i], *import);
                if (result == CL_SUCCESS) count_copy(*import, true, stats().copy_out_bytes);
            }
            if (!import->over_tiled_shadow()) {
                // END even after an error: the CPU access bracket must close.
                // A failed END fails the step, as a failed END of an unmap
                // does: the CPU may not see the device's writes.
                const cl_int ended = end_cpu_access(*import, import->sync_access_flags(), "release");
                if (result == CL_SUCCESS) result = ended;
            } else if (result == CL_SUCCESS && !(import->flags & CL_MEM_READ_ONLY)) {
                // After a failed command the shadow may be half written: leave the dma-buf as it was.
                result = retile(*import);
            }
        }
        // Also after a failure: a consumer must not wait past the release.
        signal_release_fences(fences);
        return result;
    };
    cl_int err = enqueue_host_step(std::move(step), event);
    for (cl_event e : readbacks) next().clReleaseEvent(e);
    return err;
}

}  // namespace cldmabuf
