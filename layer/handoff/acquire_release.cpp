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
// fences: the queued acquire waits for the fences as one exported
// sync_file where the kernel can (wait_acquire_fences, layer/handoff/cpu_access.hpp), and a
// queued release puts its own fence into the written dma-bufs for
// implicit-sync consumers (layer/handoff/release_fences.hpp).
//
// Two paths.  The fast one costs what the ICD's own floor costs:
// one marker, the command's event and its place in the queue, and the
// syscalls done at once on the application's thread.  Which way a command
// goes is one pure function of facts gathered here (layer/handoff/plan.hpp,
// where each fast way's invariant is written): quiet (the queue known idle,
// layer/queue/quiet.hpp), unwatched (a copy-route acquire), watched (the
// marker asked briefly, layer/handoff/marker_watch.hpp), or queued.
// Everything not fast is a host step (layer/core/host_step.hpp) over the marker
// already enqueued: bounded fence waits on the queue's worker, gate, barrier.
// The copy route's transfers are layer/handoff/transfers.hpp.
#include "layer/handoff/acquire_release.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include "layer/blit/tiled_shadow.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/dmabuf/explicit_fences.hpp"
#include "layer/core/failed_events.hpp"
#include "layer/handoff/acquire_opening.hpp"
#include "layer/handoff/alias_merge.hpp"
#include "layer/handoff/cpu_access.hpp"
#include "layer/handoff/failed_acquire_shield.hpp"
#include "layer/handoff/marker_watch.hpp"
#include "layer/handoff/plan.hpp"
#include "layer/handoff/release_fences.hpp"
#include "layer/handoff/staging.hpp"
#include "layer/handoff/transfers.hpp"
#include "layer/core/host_step.hpp"
#include "layer/icd/devices.hpp"
#include "layer/import/native.hpp"
#include "layer/base/log.hpp"
#include "layer/queue/epoch.hpp"
#include "layer/queue/identity.hpp"
#include "layer/queue/quiet.hpp"
#include "layer/core/registry.hpp"
#include "layer/base/stats.hpp"
#include "layer/sync/fence_source.hpp"

namespace cldmabuf {
namespace {

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

// The facts a failure of an earlier step changes: a failure latched on the
// queue, an import a failed acquire detached (layer/handoff/failed_acquire_shield.hpp).
// Asked for the plan and again once the marker was seen (MarkerFacts).
struct FailureFacts {
    bool queue_failed = false;
    bool detached = false;
};
FailureFacts failure_facts(cl_command_queue queue, const ImportList &list, bool acquire) {
    FailureFacts f;
    f.queue_failed = any_queue_failure() && queue_failure(queue) < 0;
    if (acquire && any_import_shielded())
        for (const auto &import : list) f.detached |= import_shielded(*import);
    return f;
}

// The facts the plan rests on (layer/handoff/plan.hpp), asked once.  `word`:
// the enqueue word read after the command's own begin.
HandoffFacts facts_of(cl_command_queue queue, const ImportList &list, cl_uint num_events, const cl_event *wait_list,
                      const cl_event *event, bool acquire, EpochWord word) {
    HandoffFacts f;
    f.acquire = acquire;
    f.wait_list = num_events != 0 || wait_list;  // (a list without a count is refused by the queued path)
    f.copy_route_only = true;
    for (const auto &import : list) {
        f.tiled_shadow |= import->over_tiled_shadow();
        f.slow_transfer |= slow_transfer(*import);
        f.large_registered |= large_registered_transfer(*import);
        f.copy_route_only &= import->route == Route::copy && !import->over_tiled_shadow();
    }
    if (f.wait_list || f.tiled_shadow || f.slow_transfer) return f;  // queued whatever the rest says
    // An import a failed acquire detached: the queued step maps it again.
    const FailureFacts failure = failure_facts(queue, list, acquire);
    f.queue_failed = failure.queue_failed;
    f.detached = failure.detached;
    f.profiled_event = event && profiling_queue(queue);
    f.steps_unfinished = host_steps_unfinished();
    f.quiet = !f.steps_unfinished && queue_still_quiet(queue, word);
    return f;
}

void count_fast(HandoffWay way) {
    stats().fast_handoffs++;
    if (way == HandoffWay::fast_quiet) stats().quiet_handoffs++;
    if (way == HandoffWay::fast_unwatched) stats().unwatched_acquires++;
}

// A syscall that failed on the fast path: the command's marker becomes a
// step that reports `failure` (its log line is written) with the queued
// path's failure semantics.  `step` holds the queue, type and marker.
cl_int enqueue_fast_failure(HostStep step, const ImportList &list, cl_int failure, cl_event *event) {
    for (const auto &import : list) step.keep_alive.push_back(import->mem);
    step.work = [failure](cl_int prior) -> cl_int { return prior < 0 ? prior : failure; };
    return enqueue_host_step(std::move(step), event);
}

// The queued acquire's openings (layer/handoff/acquire_opening.hpp), one
// per import, which attach the fences of releases enqueued behind them once
// they ran: only where the release may attach a fence at all (explicit
// fences on, a fence source) and no import is a tiled shadow (its de-tile
// is a blitter execbuffer on the dma-buf, which waits for every fence, so
// the step stays one that waits on them).
using Openings = std::vector<std::shared_ptr<AcquireOpening>>;
Openings openings_of(const ImportList &list, cl_uint num_events, const cl_event *wait_list) {
    Openings out;
    if (!explicit_fences_on() || !sync::can_export_sync_fd()) return out;
    for (const auto &import : list)
        if (import->over_tiled_shadow()) return out;
    for (const auto &import : list) out.push_back(make_acquire_opening(import, num_events, wait_list));
    return out;
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
    const EpochWord word = read_epoch();  // this command's own begin included (layer/entry/entry_chains.cpp)
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
    const HandoffPlan plan = plan_handoff(facts_of(queue, list, num_events, wait_list, event, true, word));
    if (plan.way != HandoffWay::queued) {
        bool idle = false;
        if (cl_int err = enqueue_marker(queue, plan.way != HandoffWay::fast_watched, &step.marker, &idle);
            err != CL_SUCCESS)
            return err;
        const FailureFacts failure = failure_facts(queue, list, true);  // after the marker
        MarkerFacts after{idle, false, failure.queue_failed, failure.detached};
        after.fences_clear = idle && std::all_of(list.begin(), list.end(), [](const auto &import) {
            return fences_signalled_now(*import, import->sync_access_flags());
        });
        if (completes_fast(plan.way, after)) {
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
                count_fast(plan.way);
                if (plan.note_quiet) note_quiet_queue(queue, word, 1);
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
    // The direct Writes of aliased imports read their snapshots, which the
    // work fills (layer/handoff/alias_merge.hpp, upload_source).
    std::vector<const void *> upload_from(list.size(), nullptr);
    for (size_t i = 0; i < list.size(); ++i)
        if (copied_in(*list[i]) && !staging[i]) upload_from[i] = upload_source(*list[i]);
    const Openings openings = openings_of(list, num_events, wait_list);
    if (!openings.empty()) step.waits = HostStep::Waits::openable_acquire;
    // The openings retire when the work returns, before the step lets go of
    // the imports (a release never opens one ahead on a closed fd); a step
    // dropped without running retires them as its work is destroyed.
    step.work = [list, staging, upload_from, openings, queue, drained](cl_int prior) -> cl_int {
        const struct Retire {
            const Openings &openings;
            ~Retire() { retire_openings(openings); }
        } retire{openings};
        if (prior < 0) return prior;
        if (cl_int refused = reattach_shielded(list, queue, drained); refused != CL_SUCCESS) return refused;
        for (size_t i = 0; i < list.size(); ++i) {
            Import &import = *list[i];
            cl_int err = import.over_tiled_shadow() ? detile(import)
                         : openings.empty()         ? open_acquire(import)
                                                    : open_in_step(*openings[i]);
            // An aliased import keeps what is uploaded next (staged here or
            // the direct Write behind the gate, which reads what it kept):
            // layer/handoff/alias_merge.hpp.
            const void *kept = err == CL_SUCCESS && copied_in(import)
                                   ? note_upload(import, upload_from[i] != nullptr)
                                   : nullptr;
            // Pinned staging runs here, after the fences and SYNC START; the
            // application's queue waits for this step.
            if (err == CL_SUCCESS && staging[i]) {
                err = staged_to_device(*staging[i], import, kept);
                if (err == CL_SUCCESS) count_copy(import, true, stats().copy_in_bytes);
            }
            if (err != CL_SUCCESS) return err;
        }
        return CL_SUCCESS;
    };
    // The direct route: the ICD's Write{Buffer,Image} from the mapping, after the fences.
    step.device_commands = [list, staging, upload_from, queue](cl_event gate, std::vector<cl_event> *after) -> cl_int {
        for (size_t i = 0; i < list.size(); ++i) {
            const Import &import = *list[i];
            if (!copied_in(import) || staging[i]) continue;
            cl_event done = nullptr;
            cl_int err = copy_to_device(queue, import, 1, &gate, &done, upload_from[i]);
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
    const EpochWord word = read_epoch();  // this command's own begin included (layer/entry/entry_chains.cpp)
    if (cl_int err; native_external_mem_command(false, queue, num_mem_objects, mem_objects, num_events, wait_list,
                                                event, &err))
        return err;
    ImportList list;
    if (cl_int err = collect(queue, num_mem_objects, mem_objects, &list, "release"); err != CL_SUCCESS) return err;
    // Checked here: the write-back below rebuilds the wait list.
    if (cl_int err = check_wait_list(num_events, wait_list); err != CL_SUCCESS) return err;
    stats().releases += list.size();
    // Each import's write-back, decided once now: its Read's destination
    // (layer/handoff/alias_merge.hpp).
    WriteBackList write_backs;
    for (const auto &import : list) write_backs.push_back(decide_release(*import));

    cl_event marker = nullptr;
    // A SYNC END that failed on the fast path fails the release as it does on
    // the queued path (the CPU may not see the device's writes): the step
    // reports it (end_cpu_access wrote the log line).
    cl_int fast_failure = CL_SUCCESS;
    const HandoffPlan plan = plan_handoff(facts_of(queue, list, num_events, wait_list, event, false, word));
    if (plan.way != HandoffWay::queued) {
        bool idle = false;
        if (cl_int err = enqueue_marker(queue, plan.way != HandoffWay::fast_watched, &marker, &idle);
            err != CL_SUCCESS)
            return err;
        const FailureFacts failure = failure_facts(queue, list, false);  // after the marker
        if (completes_fast(plan.way, MarkerFacts{idle, true, failure.queue_failed, failure.detached})) {
            // Every earlier command finished: device copies come back now, and
            // the CPU access bracket closes, for every import even after a failure.
            fast_failure = fast_copies_out(queue, list, write_backs, marker);
            for (const auto &import : list) {
                const cl_int ended = end_cpu_access(*import, import->sync_access_flags(), "release");
                if (fast_failure == CL_SUCCESS) fast_failure = ended;
            }
            if (fast_failure == CL_SUCCESS) {
                count_fast(plan.way);
                if (plan.note_quiet) note_quiet_queue(queue, word, 1);
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
    // follows them.  An aliased import's copy goes to its scratch, and the
    // step merges its changes (layer/handoff/alias_merge.hpp).
    std::vector<cl_event> waits(wait_list, wait_list + (wait_list ? num_events : 0));
    std::vector<cl_event> readbacks;
    // A scratch write-back's Read goes into its scratch, never through staging.
    StagingList staging;
    for (size_t i = 0; i < list.size(); ++i)
        staging.push_back(copied_out(*list[i]) && !release_scratch(write_backs[i].get())
                              ? staging_for(*list[i], queue)
                              : nullptr);
    for (size_t i = 0; i < list.size(); ++i) {
        const Import &import = *list[i];
        if (!copied_out(import) || staging[i]) continue;
        cl_event done = nullptr;
        cl_int err = copy_to_dmabuf(queue, import, static_cast<cl_uint>(waits.size()),
                                    waits.empty() ? nullptr : waits.data(), &done, CL_FALSE,
                                    release_scratch(write_backs[i].get()));
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
    step.marker = marker;  // with write-backs in the wait list, the step enqueues its own over them
    // SYNC END and the write-back wait for no fence of the dma-buf; a
    // re-tile is a blitter execbuffer on it, which does (implicit sync).
    const bool retiles = std::any_of(list.begin(), list.end(), [](const auto &i) { return i->over_tiled_shadow(); });
    step.waits = retiles ? HostStep::Waits::dmabuf_fences : HostStep::Waits::nothing;
    for (const auto &import : list) step.keep_alive.push_back(import->mem);
    step.work = [list, staging, fences, write_backs](cl_int prior) -> cl_int {
        cl_int result = prior < 0 ? prior : CL_SUCCESS;
        std::vector<cl_event> still_writing;  // write-backs that outlived their wait
        for (size_t i = 0; i < list.size(); ++i) {
            const auto &import = list[i];
            // The scratch holds the device copy (its Read is in the wait
            // list); after a failed command the dma-buf is left as it was.
            if (copied_out(*import)) finish_release(*import, write_backs[i].get(), result == CL_SUCCESS);
            // Pinned staging: every earlier command finished (the marker), so
            // the device copy is final.  After a failed command the dma-buf
            // is left as it was.
            if (staging[i] && result == CL_SUCCESS) {
                cl_event writing = nullptr;
                result = staged_to_dmabuf(*staging[i], *import, &writing);
                if (writing) still_writing.push_back(writing);
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
        // Also after a failure: a consumer must not wait past the release,
        // nor be let in while a write-back still writes the dma-buf.
        signal_release_fences_after(fences, still_writing);
        return result;
    };
    cl_int err = enqueue_host_step(std::move(step), event);
    for (cl_event e : readbacks) next().clReleaseEvent(e);
    return err;
}

}  // namespace cldmabuf
