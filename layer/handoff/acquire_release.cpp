// The coherency handoff: clEnqueueAcquire/ReleaseExternalMemObjectsKHR.
// This file collects the imports, decides which way the command goes and
// calls each import's route (layer/handoff/handoff_route.hpp), which holds
// what an acquire and a release do to it: on the zero-copy and copy routes
// a bounded wait for the dma-buf's implicit fences and DMA_BUF_IOCTL_SYNC
// START, END once every earlier command finished, and on the copy route the
// device copy's upload and write-back between them; on a tiled shadow the
// blitter's de-tile and re-tile.  Explicit
// fences: the queued acquire waits for the fences as one exported
// sync_file where the kernel can (wait_acquire_fences, layer/handoff/cpu_access.hpp), and a
// queued release puts its own fence into the written dma-bufs for
// implicit-sync consumers (layer/handoff/release_fences.hpp).
//
// Two paths.  The fast one costs what the ICD's own floor costs:
// one marker, the command's event and its place in the queue, and the
// syscalls done at once on the application's thread; on a quiet queue,
// with no event asked and no bytes to copy, the syscalls alone
// (needs_marker).  Which way a command
// goes is one pure function of facts gathered here (layer/handoff/plan.hpp,
// where each fast way's invariant is written): quiet (the queue known idle,
// layer/queue/quiet.hpp), unwatched (a copy-route acquire), watched (the
// marker asked briefly, layer/handoff/marker_watch.hpp), or queued.
// Everything not fast is a host step (layer/core/host_step.hpp) over the marker
// already enqueued: bounded fence waits on the queue's worker, gate, barrier.
// Each import's route has a part in each: at the enqueue (prepare_*), on the
// worker (*_in_step), and the ICD's commands around the step.
#include "layer/handoff/acquire_release.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/dmabuf/explicit_fences.hpp"
#include "layer/core/failed_events.hpp"
#include "layer/handoff/acquire_opening.hpp"
#include "layer/handoff/alias_merge.hpp"
#include "layer/handoff/cpu_access.hpp"
#include "layer/handoff/handoff_route.hpp"
#include "layer/handoff/failed_acquire_shield.hpp"
#include "layer/handoff/marker_watch.hpp"
#include "layer/handoff/plan.hpp"
#include "layer/handoff/release_fences.hpp"
#include "layer/handoff/transfers.hpp"
#include "layer/handoff/upload_events.hpp"
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
    for (const auto &import : list) route_of(*import).add_facts(*import, acquire, &f);
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
// per import (each also in its slot), which attach the fences of releases
// enqueued behind them once they ran: only where the release may attach a
// fence at all (explicit fences on, a fence source) and every import's
// route takes one.
using Openings = std::vector<std::shared_ptr<AcquireOpening>>;
Openings openings_of(const ImportList &list, cl_uint num_events, const cl_event *wait_list,
                     std::vector<AcquireSlot> *slots) {
    Openings out;
    if (!explicit_fences_on() || !sync::can_export_sync_fd()) return out;
    for (const auto &import : list)
        if (!route_of(*import).takes_opening()) return out;
    for (size_t i = 0; i < list.size(); ++i) {
        out.push_back(make_acquire_opening(list[i], num_events, wait_list));
        (*slots)[i].opening = out.back();
    }
    return out;
}

// The fast acquire's uploads: *command becomes the event that completes
// after all of them.  On an error nothing of the command is left enqueued
// but uploads that already went to the ICD (released here; the error is the
// caller's).
cl_int uploads_at_once(cl_command_queue queue, const ImportList &list, IcdEvent *command) {
    IcdEvents uploads;
    for (const auto &import : list) {
        IcdEvent done;
        if (cl_int err = route_of(*import).upload_at_once(queue, *import, done.out()); err != CL_SUCCESS) return err;
        uploads.add(std::move(done));
    }
    return join_uploads(queue, uploads, command);
}

// The fast release's write-backs, read back at once before the close: the
// first error, after trying them all.
cl_int write_backs_at_once(cl_command_queue queue, const ImportList &list, const std::vector<ReleaseSlot> &slots,
                           cl_event marker) {
    cl_int result = CL_SUCCESS;
    for (size_t i = 0; i < list.size(); ++i) {
        const cl_int err = route_of(*list[i]).write_back_at_once(queue, *list[i], slots[i], marker);
        if (result == CL_SUCCESS) result = err;
    }
    return result;
}

// A failed acquire in side-table mode: its dma-bufs are taken away from the
// ICD's commands behind it before its gate opens
// (layer/handoff/failed_acquire_shield.hpp).  The upload behind its gate is
// no longer one a release may wait for, and its event is let go now: an ICD
// that fails every later command of the queue (rusticl) keeps a failed
// command's memory objects while its event lives, so an event kept until
// the import's teardown would keep the import from ever being torn down.
std::function<void()> shield_after_failure(const ImportList &list, cl_command_queue queue) {
    return [list, queue] {
        for (const auto &import : list) {
            shield_import(*import, queue);
            forget_upload(*import);
        }
    };
}

// An acquire of imports a failed acquire detached: a marker on each other
// queue whose commands behind that failure may still run on the detached
// pages; the step waits for them and then maps the dma-bufs again
// (reattach_shielded).
IcdEvents drain_shield_queues(const ImportList &list, cl_command_queue queue,
                              std::vector<cl_command_queue> *drained) {
    IcdEvents markers;
    if (!any_import_shielded()) return markers;
    for (const auto &import : list)
        for (cl_command_queue q : shield_queues(*import)) {
            if (q == queue || std::find(drained->begin(), drained->end(), q) != drained->end()) continue;
            IcdEvent m;
            if (next().clEnqueueMarkerWithWaitList(q, 0, nullptr, m.out()) != CL_SUCCESS) continue;  // reattach refuses
            next().clFlush(q);
            markers.add(std::move(m));
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

// Whether a fast handoff enqueues its marker.  A quiet one (every earlier
// command of the queue finished, layer/queue/quiet.hpp) whose caller asks no
// event and whose imports move no bytes through the ICD (the copy route's
// Writes and Reads are ordered by it) is complete once its syscalls return
// on the caller's thread: no command can wait for it, and none it could
// order is left, so it enqueues nothing.  Should it not complete at once
// (a fence pending, a failed syscall), its host step enqueues a marker of
// its own.  Why: the marker woke the ICD's worker thread, asleep since the
// last clFinish, on every acquire of a frame (PoCL: a futex wake, 5-10 us
// of the host's VA map round, docs/benchmarks.md "VA-API surface mapping
// per frame").
bool needs_marker(HandoffWay way, const cl_event *event, const ImportList &list, bool acquire) {
    if (way != HandoffWay::fast_quiet || event) return true;
    return std::any_of(list.begin(), list.end(),
                       [acquire](const auto &import) { return route_of(*import).moves_bytes(*import, acquire); });
}

// The marker becomes the command's event (reported with the _KHR type), or
// goes with its holder when the application asked for none.  Without one
// (needs_marker) there is no event to give.
void hand_out(IcdEvent marker, cl_command_type type, cl_event *event) {
    if (!marker || !event) return;
    event_types().add(marker.get(), type);
    *event = marker.hand_off();
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
    for (const auto &import : list) route_of(*import).before_acquire_facts(*import, queue);
    const HandoffPlan plan = plan_handoff(facts_of(queue, list, num_events, wait_list, event, true, word));
    if (plan.way != HandoffWay::queued) {
        bool idle = true;  // without a marker: the quiet queue's
        if (needs_marker(plan.way, event, list, true))
            if (cl_int err = enqueue_marker(queue, plan.way != HandoffWay::fast_watched, step.marker.out(), &idle);
                err != CL_SUCCESS)
                return err;
        const FailureFacts failure = failure_facts(queue, list, true);  // after the marker
        MarkerFacts after{idle, false, failure.queue_failed, failure.detached};
        after.fences_clear = idle && std::all_of(list.begin(), list.end(), [](const auto &import) {
            return fences_signalled_now(*import, import->sync_access_flags());
        });
        if (completes_fast(plan.way, after)) {
            for (const auto &import : list)
                if (fast_failure == CL_SUCCESS) fast_failure = route_of(*import).open_at_once(*import);
            if (fast_failure == CL_SUCCESS) {
                if (cl_int err = uploads_at_once(queue, list, &step.marker); err != CL_SUCCESS) {
                    // The command is not enqueued: the CPU access brackets just
                    // opened close again, the marker goes with the step.
                    for (const auto &import : list) route_of(*import).close_at_once(*import, "acquire");
                    return err;
                }
                count_fast(plan.way);
                if (plan.note_quiet) note_quiet_queue(queue, word, 1);
                hand_out(std::move(step.marker), step.type, event);
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
    IcdEvents drains;  // until the step is enqueued
    std::vector<cl_event> waits;
    if (!step.marker && (num_events > 0) == (wait_list != nullptr))
        drains = drain_shield_queues(list, queue, &drained);
    if (!drains.empty()) {
        waits.assign(wait_list, wait_list + num_events);
        waits.insert(waits.end(), drains.begin(), drains.end());
        step.num_events = static_cast<cl_uint>(waits.size());
        step.wait_list = waits.data();
    }
    // An upload in the step is done once the step ran; one behind its gate
    // is noted as it is enqueued (layer/handoff/upload_events.hpp).
    for (const auto &import : list) forget_upload(*import);
    std::vector<AcquireSlot> slots(list.size());
    for (size_t i = 0; i < list.size(); ++i) route_of(*list[i]).prepare_acquire(*list[i], queue, &slots[i]);
    const Openings openings = openings_of(list, num_events, wait_list, &slots);
    if (!openings.empty()) step.waits = HostStep::Waits::openable_acquire;
    // The openings retire when the work returns, before the step lets go of
    // the imports (a release never opens one ahead on a closed fd); a step
    // dropped without running retires them as its work is destroyed.
    step.work = [list, slots, openings, queue, drained](cl_int prior) -> cl_int {
        const struct Retire {
            const Openings &openings;
            ~Retire() { retire_openings(openings); }
        } retire{openings};
        if (prior < 0) return prior;
        if (cl_int refused = reattach_shielded(list, queue, drained); refused != CL_SUCCESS) return refused;
        for (size_t i = 0; i < list.size(); ++i)
            if (cl_int err = route_of(*list[i]).acquire_in_step(*list[i], slots[i]); err != CL_SUCCESS) return err;
        return CL_SUCCESS;
    };
    // The ICD's commands behind the gate (the copy route's direct Writes), after the fences.
    step.device_commands = [list, slots, queue](cl_event gate, std::vector<cl_event> *after) -> cl_int {
        for (size_t i = 0; i < list.size(); ++i) {
            cl_event done = nullptr;
            if (cl_int err = route_of(*list[i]).acquire_behind_gate(queue, *list[i], slots[i], gate, &done);
                err != CL_SUCCESS)
                return err;
            if (done) after->push_back(done);
        }
        return CL_SUCCESS;
    };
    return enqueue_host_step(std::move(step), event);
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
    std::vector<ReleaseSlot> slots(list.size());
    for (size_t i = 0; i < list.size(); ++i) slots[i].write_back = decide_release(*list[i]);

    IcdEvent marker;
    // A SYNC END that failed on the fast path fails the release as it does on
    // the queued path (the CPU may not see the device's writes): the step
    // reports it (end_cpu_access wrote the log line).
    cl_int fast_failure = CL_SUCCESS;
    const HandoffPlan plan = plan_handoff(facts_of(queue, list, num_events, wait_list, event, false, word));
    if (plan.way != HandoffWay::queued) {
        bool idle = true;  // without a marker: the quiet queue's
        if (needs_marker(plan.way, event, list, false))
            if (cl_int err = enqueue_marker(queue, plan.way != HandoffWay::fast_watched, marker.out(), &idle);
                err != CL_SUCCESS)
                return err;
        const FailureFacts failure = failure_facts(queue, list, false);  // after the marker
        MarkerFacts after{idle, true, failure.queue_failed, failure.detached};
        after.uploads_done = plan.way == HandoffWay::fast_uploaded && uploads_done_within_bound(queue, list);
        if (completes_fast(plan.way, after)) {
            // Every earlier command finished: device copies come back now, and
            // the CPU access bracket closes, for every import even after a failure.
            fast_failure = write_backs_at_once(queue, list, slots, marker.get());
            for (const auto &import : list) {
                const cl_int ended = route_of(*import).close_at_once(*import, "release");
                if (fast_failure == CL_SUCCESS) fast_failure = ended;
            }
            if (fast_failure == CL_SUCCESS) {
                count_fast(plan.way);
                if (plan.note_quiet) note_quiet_queue(queue, word, 1);
                hand_out(std::move(marker), CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR, event);
                return CL_SUCCESS;
            }
        }
    }
    stats().queued_handoffs++;
    if (fast_failure != CL_SUCCESS) {
        HostStep step;
        step.queue = queue;
        step.type = CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR;
        step.marker = std::move(marker);
        return enqueue_fast_failure(std::move(step), list, fast_failure, event);
    }

    // Write device copies back first, in queue order, so the SYNC END below
    // follows them.  An aliased import's copy goes to its scratch, and the
    // step merges its changes (layer/handoff/alias_merge.hpp).
    std::vector<cl_event> waits(wait_list, wait_list + (wait_list ? num_events : 0));
    IcdEvents readbacks;  // until the step is enqueued
    for (size_t i = 0; i < list.size(); ++i) route_of(*list[i]).prepare_release(*list[i], queue, &slots[i]);
    for (size_t i = 0; i < list.size(); ++i) {
        IcdEvent done;
        cl_int err = route_of(*list[i]).release_before_step(queue, *list[i], slots[i],
                                                            static_cast<cl_uint>(waits.size()),
                                                            waits.empty() ? nullptr : waits.data(), done.out());
        // A refused Read: the fast attempt's marker and the Reads already
        // enqueued go with their holders.
        if (err != CL_SUCCESS) return err;
        readbacks.add(std::move(done));
    }
    waits.insert(waits.end(), readbacks.begin(), readbacks.end());

    // Implicit-sync consumers of the written dma-bufs wait for this step from
    // now on; it signals them when its work is done (layer/handoff/release_fences.hpp).
    const ReleaseFences fences = attach_release_fences(list, queue, num_events, wait_list);

    HostStep step;
    step.queue = queue;
    step.num_events = static_cast<cl_uint>(waits.size());
    step.wait_list = waits.empty() ? nullptr : waits.data();
    step.type = CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR;
    step.marker = std::move(marker);  // with write-backs in the wait list, the step enqueues its own over them
    // SYNC END and the write-back wait for no fence of the dma-buf; a
    // blitter batch on it does (implicit sync).
    const bool waits_for_fences = std::any_of(list.begin(), list.end(), [](const auto &import) {
        return route_of(*import).release_waits_for_fences();
    });
    step.waits = waits_for_fences ? HostStep::Waits::dmabuf_fences : HostStep::Waits::nothing;
    for (const auto &import : list) step.keep_alive.push_back(import->mem);
    step.work = [list, slots, fences](cl_int prior) -> cl_int {
        cl_int result = prior < 0 ? prior : CL_SUCCESS;
        IcdEvents still_writing;  // write-backs that outlived their wait
        for (size_t i = 0; i < list.size(); ++i)
            route_of(*list[i]).release_in_step(*list[i], slots[i], &result, &still_writing);
        // Also after a failure: a consumer must not wait past the release,
        // nor be let in while a write-back still writes the dma-buf.
        signal_release_fences_after(fences, std::move(still_writing));
        return result;
    };
    return enqueue_host_step(std::move(step), event);
}

}  // namespace cldmabuf
