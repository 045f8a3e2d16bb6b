#include "layer/core/host_step.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "layer/core/dispatch.hpp"
#include "layer/core/failed_events.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/base/log.hpp"
#include "layer/core/registry.hpp"
#include "layer/core/step_events.hpp"
#include "layer/core/step_poll.hpp"
#include "layer/core/step_times.hpp"
#include "layer/base/settings.hpp"
#include "layer/base/stats.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/core/worker.hpp"

namespace cldmabuf {
namespace {

struct PendingStep {
    uint64_t id = 0;  // its marker callback's user data: never reused, so a late callback finds nothing
    std::function<cl_int(cl_int)> work;
    std::function<void()> before_open_after_failure;
    cl_command_queue queue = nullptr;
    FailureMode mode = FailureMode::sidetable;
    // Held while the step lives: a sweep asks its status while the
    // barrier's callback may already have released StepEvents' reference.
    IcdEvent marker;
    cl_event gate = nullptr;  // StepEvents' reference
    IcdEvent barrier;  // until the job finished
    std::shared_ptr<StepEvents> events;
    IcdMems keep_alive;
    HostStep::Waits waits = HostStep::Waits::dmabuf_fences;
    IcdEvent reported;  // the step's event while the application holds it: its side-table entry's
    cl_device_id profiled_device = nullptr;  // non-null on a profiling queue with an event
    StepClock clock;
    bool polled = false;  // its marker's status is polled too (layer/core/step_poll.hpp)
};

// Steps that have not been claimed yet, in enqueue order: a step runs
// exactly once, whether its marker's callback claims it (twice, late, or
// never: ICDs that call no callback of a terminated command) or a sweep
// that found its marker terminated (resolve_terminated_steps).
std::mutex pending_mutex;
auto *pending_steps = new std::map<uint64_t, std::shared_ptr<PendingStep>>;
uint64_t last_step_id = 0;                 // under pending_mutex
std::atomic<size_t> pending_count{0};      // pending_steps->size(), for the sweep's cheap check

// The memory objects of steps that have not finished their work (an object
// once per step that lists it), counted by what the step waits for: a
// release asks before it puts a fence into the dma-buf that such a step
// might wait on (layer/handoff/release_fences).
std::mutex unfinished_mutex;
std::unordered_map<cl_mem, UnfinishedSteps> *unfinished_mems = new std::unordered_map<cl_mem, UnfinishedSteps>;
// Steps of any queue between their enqueue and the end of their work: the
// copy route's acquire does its syscalls at once only when this is 0
// (layer/handoff/acquire_release.cpp).  One relaxed load on that path.
std::atomic<int> unfinished_steps{0};

size_t &count_of(UnfinishedSteps &steps, HostStep::Waits waits) {
    return waits == HostStep::Waits::openable_acquire ? steps.openable_acquires : steps.dmabuf_fences;
}

void note_unfinished(const IcdMems &mems, HostStep::Waits waits) {
    unfinished_steps.fetch_add(1, std::memory_order_relaxed);
    if (waits == HostStep::Waits::nothing) return;
    std::lock_guard lock(unfinished_mutex);
    for (cl_mem m : mems) ++count_of((*unfinished_mems)[m], waits);
}

void note_finished(const IcdMems &mems, HostStep::Waits waits) {
    unfinished_steps.fetch_sub(1, std::memory_order_release);
    if (waits == HostStep::Waits::nothing) return;
    std::lock_guard lock(unfinished_mutex);
    for (cl_mem m : mems) {
        auto it = unfinished_mems->find(m);
        if (it == unfinished_mems->end()) continue;
        size_t &n = count_of(it->second, waits);
        if (n > 0) --n;
        if (it->second.dmabuf_fences == 0 && it->second.openable_acquires == 0) unfinished_mems->erase(it);
    }
}

// Polled steps per queue between their enqueue and their gate's opening:
// what a clFinish of that queue waits for before the ICD's own
// (wait_for_polled_steps).  Counted only with CLDMABUF_DEBUG=finish-waits-steps:
// otherwise a polled step (every step on NVIDIA) pays no lock for it.
bool finish_waits() {
    static const bool on = debug_on(DebugWord::finish_waits_steps);
    return on;
}
std::mutex polled_mutex;
auto *polled_ran = new std::condition_variable;
auto *polled_open = new std::unordered_map<cl_command_queue, size_t>;
std::atomic<size_t> polled_open_count{0};

void note_polled_open(cl_command_queue queue) {
    std::lock_guard lock(polled_mutex);
    ++(*polled_open)[queue];
    polled_open_count.fetch_add(1, std::memory_order_release);
}

void note_polled_ran(cl_command_queue queue) {
    {
        std::lock_guard lock(polled_mutex);
        auto it = polled_open->find(queue);
        if (it != polled_open->end() && --it->second == 0) polled_open->erase(it);
        polled_open_count.fetch_sub(1, std::memory_order_release);
    }
    polled_ran->notify_all();
}

std::shared_ptr<PendingStep> claim(uint64_t id) {
    std::lock_guard lock(pending_mutex);
    auto it = pending_steps->find(id);
    if (it == pending_steps->end()) return nullptr;
    auto pending = std::move(it->second);
    pending_steps->erase(it);
    pending_count.store(pending_steps->size(), std::memory_order_release);
    return pending;
}

void add_pending(const std::shared_ptr<PendingStep> &pending) {
    std::lock_guard lock(pending_mutex);
    pending->id = ++last_step_id;
    pending_steps->emplace(pending->id, pending);
    pending_count.store(pending_steps->size(), std::memory_order_release);
}

cl_ulong profiling_info(cl_event event, cl_profiling_info name) {
    cl_ulong value = 0;
    return next().clGetEventProfilingInfo(event, name, sizeof value, &value, nullptr) == CL_SUCCESS ? value : 0;
}

uint64_t device_now(cl_device_id device) {
    if (!next().clGetDeviceAndHostTimer) return 0;
    cl_ulong device_ts = 0, host_ts = 0;
    return next().clGetDeviceAndHostTimer(device, &device_ts, &host_ts) == CL_SUCCESS ? device_ts : 0;
}

void run_step(const std::shared_ptr<PendingStep> &pending, cl_int marker_status) {
    StepClock &clock = pending->clock;
    if (pending->profiled_device) {
        clock.marker_queued = profiling_info(pending->marker.get(), CL_PROFILING_COMMAND_QUEUED);
        clock.marker_submit = profiling_info(pending->marker.get(), CL_PROFILING_COMMAND_SUBMIT);
        clock.marker_end = profiling_info(pending->marker.get(), CL_PROFILING_COMMAND_END);
        clock.device_start = device_now(pending->profiled_device);
        clock.host_start = host_now_ns();
    }
    cl_int prior = marker_status < 0 ? marker_status : CL_SUCCESS;
    // The layer's own later steps (syncs, blits, maps) of the queue stay off
    // the buffers until clFinish has reported the failure, in both modes:
    // the ICDs that propagate a failed user event terminate only the
    // commands already waiting behind it (NEO, PoCL 6, rusticl: a step
    // enqueued after the failure ran through).
    if (prior == CL_SUCCESS && queue_failure(pending->queue) < 0) prior = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    // Propagate mode: the ICD terminated this step because a command ahead
    // of it failed; that failure is latched already (and clFinish may have
    // reported it: the ICD ends a terminated barrier without waiting for its
    // gate, so this work can run after that clFinish returned).
    const bool inherited = marker_status < 0 && pending->mode == FailureMode::propagate;
    const cl_int result = pending->work(prior);
    if (pending->profiled_device) {
        clock.device_end = clock.device_start ? device_now(pending->profiled_device) : 0;
        clock.host_end = host_now_ns();
        event_types().set_times(pending->reported.get(), compose_step_times(clock));
    }
    // Recorded before the gate opens, so that a waiter or callback woken by
    // it already sees the failure.
    if (result != CL_SUCCESS) {
        if (!inherited) note_queue_failure(pending->queue, result);
        if (pending->reported) event_types().set_failed(pending->reported.get(), result);
        // The ICD will run the commands behind: what the step can still do
        // about them, it does before the gate opens.
        if (pending->mode == FailureMode::sidetable && pending->before_open_after_failure)
            pending->before_open_after_failure();
    }
    // The work is done: let go of the objects before the gate opens, so that
    // an application that released them and waits for the step (clFinish)
    // finds them destroyed, as after any other command.
    note_finished(pending->keep_alive, pending->waits);
    pending->keep_alive.reset();
    pending->reported.reset();  // the layer's: the entry is the application's
    // The gate opens; the events go once the barrier behind it ended, which
    // the job does not wait for (layer/core/worker.hpp): its callback or a
    // later sweep releases them (layer/core/step_events.hpp).
    const bool propagated = result != CL_SUCCESS && pending->mode == FailureMode::propagate;
    next().clSetUserEventStatus(pending->gate,
                                !propagated ? CL_COMPLETE : result < 0 ? result : CL_OUT_OF_RESOURCES);
    if (pending->polled && finish_waits()) note_polled_ran(pending->queue);
    // Watched where the barrier's callback may never come: refused, or the
    // barrier terminated (a failed gate, or a marker the ICD terminated and
    // every command behind it with it: PoCL 3.1 and 5.0 call no callback of
    // a terminated command).
    // The job's alone with the events (use_count 1) where the callback was
    // refused or has already run.
    if (propagated || marker_status < 0 || pending->events.use_count() == 1)
        release_events_when_ended(std::move(pending->events), std::move(pending->barrier));
    else
        pending->barrier.reset();  // the callback releases the events
    pending->events.reset();
    pending->work = nullptr;  // what it holds (an acquire's openings) goes now, not with the last reference
}

// Steps claimed with a terminated marker whose run has not ended, per
// queue: the ICD may end a terminated step's barrier without waiting for its
// gate (PoCL, NEO), so its clFinish returns before the run latched the
// failure; the layer's clFinish waits for them (resolve_terminated_steps).
std::mutex resolving_mutex;
std::condition_variable *resolved = new std::condition_variable;
auto *resolving = new std::unordered_map<cl_command_queue, size_t>;
std::atomic<size_t> resolving_count{0};

void post_resolution(const std::shared_ptr<PendingStep> &pending, cl_int status) {
    {
        std::lock_guard lock(resolving_mutex);
        ++(*resolving)[pending->queue];
        resolving_count.fetch_add(1, std::memory_order_release);
    }
    post_to_worker(pending->queue, [pending, status] {
        run_step(pending, status);
        std::lock_guard lock(resolving_mutex);
        if (--(*resolving)[pending->queue] == 0) resolving->erase(pending->queue);
        resolving_count.fetch_sub(1, std::memory_order_release);
        resolved->notify_all();
    });
}

// The step's marker ended with `status` (its own, not a callback's): the
// work goes to the queue's worker.  Never block here: it runs in an ICD
// callback thread or the poller.
void marker_ended(const std::shared_ptr<PendingStep> &pending, cl_int status) {
    if (pending->profiled_device) pending->clock.host_callback = host_now_ns();
    if (status < 0) post_resolution(pending, status);
    else post_to_worker(pending->queue, [pending, status] { run_step(pending, status); });
}

void CL_CALLBACK on_marker_complete(cl_event marker, cl_int status, void *user_data) {
    auto pending = claim(reinterpret_cast<uintptr_t>(user_data));
    if (!pending) return;  // run already: a sweep or the poller found it ended, or a second callback
    // NVIDIA calls the callback of a terminated command with CL_COMPLETE:
    // the event's own status says whether an earlier command failed.
    cl_int actual = status;
    if (status >= 0 && pending->mode == FailureMode::propagate &&
        next().clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof actual, &actual,
                                             nullptr) != CL_SUCCESS)
        actual = status;
    marker_ended(pending, actual);
}

// One look at the marker of every polled step (layer/core/step_poll.hpp):
// those that ended run as their callback would have run them.  Returns how
// many polled steps are left.
size_t poll_polled_steps() {
    std::vector<std::shared_ptr<PendingStep>> polled;
    {
        std::lock_guard lock(pending_mutex);
        for (const auto &[id, pending] : *pending_steps)
            if (pending->polled) polled.push_back(pending);
    }
    size_t left = 0;
    for (const auto &candidate : polled) {
        cl_int status = CL_QUEUED;
        if (next().clGetEventInfo(candidate->marker.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                                  nullptr) != CL_SUCCESS ||
            status > CL_COMPLETE) {
            ++left;
            continue;
        }
        if (auto pending = claim(candidate->id)) {  // else its callback came first
            stats().steps_polled++;
            marker_ended(pending, status);
        }
    }
    return left;
}

}  // namespace

void resolve_terminated_steps(cl_command_queue queue) {
    sweep_step_events();
    if (pending_count.load(std::memory_order_acquire) != 0) {
        std::vector<std::shared_ptr<PendingStep>> candidates;  // in enqueue order: one queue's run in order
        {
            std::lock_guard lock(pending_mutex);
            for (const auto &[id, pending] : *pending_steps)
                if (!queue || pending->queue == queue) candidates.push_back(pending);
        }
        for (const auto &candidate : candidates) {
            cl_int status = CL_QUEUED;
            if (next().clGetEventInfo(candidate->marker.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                                      nullptr) != CL_SUCCESS ||
                status >= 0)
                continue;
            if (auto pending = claim(candidate->id)) post_resolution(pending, status);  // else its callback came
        }
    }
    if (resolving_count.load(std::memory_order_acquire) == 0) return;
    // The runs take no fence wait (the work sees the failure), but may queue
    // behind another step of the queue at its fence wait: bounded by the
    // fence bound, past which that step gives up.
    std::unique_lock lock(resolving_mutex);
    const auto none_left = [queue] { return queue ? resolving->count(queue) == 0 : resolving->empty(); };
    note_waiting_for_worker(1);
    if (!resolved->wait_for(lock, std::chrono::milliseconds(fence_timeout_ms() + 1000), none_left))
        LOG_DEBUG("terminated steps not resolved within the fence bound; they finish on their worker");
    note_waiting_for_worker(-1);
}

void wait_for_polled_steps(cl_command_queue queue) {
    if (polled_open_count.load(std::memory_order_acquire) == 0) return;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(fence_timeout_ms() + 1000);
    auto interval = std::chrono::microseconds(20);
    std::unique_lock lock(polled_mutex);
    note_waiting_for_worker(1);
    while (polled_open->count(queue)) {
        lock.unlock();
        poll_polled_steps();  // on this thread too: the poller may be in a long interval
        lock.lock();
        if (!polled_open->count(queue)) break;
        if (std::chrono::steady_clock::now() >= deadline) {
            LOG_DEBUG("polled steps not run within the fence bound; the ICD's clFinish waits for them");
            break;
        }
        polled_ran->wait_for(lock, interval, [queue] { return polled_open->count(queue) == 0; });
        interval = std::min(interval * 2, std::chrono::microseconds(500));
    }
    note_waiting_for_worker(-1);
}

bool host_steps_unfinished() { return unfinished_steps.load(std::memory_order_acquire) != 0; }

UnfinishedSteps host_steps_unfinished_on(cl_mem mem) {
    std::lock_guard lock(unfinished_mutex);
    auto it = unfinished_mems->find(mem);
    return it == unfinished_mems->end() ? UnfinishedSteps{} : it->second;
}

namespace {
cl_command_queue_properties queue_properties(cl_command_queue queue) {
    cl_command_queue_properties props = 0;
    return next().clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props, &props, nullptr) == CL_SUCCESS
               ? props
               : 0;
}
}  // namespace

bool profiling_queue(cl_command_queue queue) { return queue_properties(queue) & CL_QUEUE_PROFILING_ENABLE; }

bool out_of_order_queue(cl_command_queue queue) {
    return queue_properties(queue) & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
}

// Each refusal logs its one line here: the callers (acquire, release, map
// and unmap sync, blitter copies) return the code as it is.
cl_int check_wait_list(cl_uint num_events, const cl_event *wait_list) {
    if ((num_events > 0) != (wait_list != nullptr)) {
        LOG_ERROR("num_events_in_wait_list (%u) and event_wait_list (%p) disagree", num_events,
                  static_cast<const void *>(wait_list));
        return CL_INVALID_EVENT_WAIT_LIST;
    }
    for (cl_uint i = 0; i < num_events; ++i) {
        cl_int status = CL_COMPLETE;
        if (next().clGetEventInfo(wait_list[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                                  nullptr) != CL_SUCCESS) {
            LOG_ERROR("event_wait_list[%u] (%p) is not a valid event", i, static_cast<void *>(wait_list[i]));
            return CL_INVALID_EVENT_WAIT_LIST;
        }
        // An event that already failed: the step could never run (and some
        // ICDs never complete a command that waits on one).
        if (status < 0 || event_types().failed(wait_list[i], &status)) {
            LOG_ERROR("event_wait_list[%u] (%p) already failed (status %d)", i, static_cast<void *>(wait_list[i]),
                      status);
            return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
        }
    }
    return CL_SUCCESS;
}

cl_int enqueue_host_step(HostStep step, cl_event *event) {
    IcdEvent marker = std::move(step.marker);
    cl_context context = nullptr;
    cl_int err = next().clGetCommandQueueInfo(step.queue, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr);
    if (err != CL_SUCCESS) return CL_INVALID_COMMAND_QUEUE;
    // A marker enqueued before the wait list's commands (the fast attempt's,
    // ahead of a release's write-back) does not wait for them: the step
    // enqueues its own over the list, or the fence could be signalled while
    // the copy route's Read still writes the mapping.
    if (marker && step.num_events > 0) marker.reset();
    if (!marker) {
        if (cl_int failed = check_wait_list(step.num_events, step.wait_list); failed != CL_SUCCESS) return failed;
        err = next().clEnqueueMarkerWithWaitList(step.queue, step.num_events, step.wait_list, marker.out());
        if (err != CL_SUCCESS) {  // the ICD validated the wait list (events of another context, ...)
            LOG_ERROR("the ICD refused the step's marker (error %d): check the wait list", err);
            return err;
        }
    }
    IcdEvent gate(next().clCreateUserEvent(context, &err));
    if (!gate) return err;

    std::vector<cl_event> after{gate.get()};
    IcdEvents device_events;  // after[1...]: the device commands' events
    if (step.device_commands) {
        err = step.device_commands(gate.get(), &after);
        for (size_t i = 1; i < after.size(); ++i) device_events.add(IcdEvent(after[i]));
        if (err != CL_SUCCESS) {
            // Open the gate so the commands already behind it can retire.  It
            // is not released: they may still reference it (layer/core/step_events.hpp).
            next().clSetUserEventStatus(gate.get(), CL_COMPLETE);
            (void)gate.hand_off();
            return err;
        }
    }
    IcdEvent barrier;
    err = next().clEnqueueBarrierWithWaitList(step.queue, static_cast<cl_uint>(after.size()), after.data(),
                                              barrier.out());
    device_events.reset();
    if (err != CL_SUCCESS) {
        next().clSetUserEventStatus(gate.get(), CL_COMPLETE);
        // Kept only when device commands may wait on it (layer/core/step_events.hpp);
        // with none, nothing references it.
        if (after.size() > 1) (void)gate.hand_off();
        LOG_ERROR("the ICD refused the step's barrier (error %d)", err);
        return err;
    }

    IcdMems keep_alive;
    keep_alive.retain_all(step.keep_alive);
    auto pending = std::make_shared<PendingStep>();
    pending->work = std::move(step.work);
    pending->before_open_after_failure = std::move(step.before_open_after_failure);
    pending->queue = step.queue;
    pending->mode = failure_mode(step.queue);
    pending->marker = IcdEvent::retain(marker.get());  // the step's own (StepEvents holds the enqueue's)
    pending->gate = gate.get();
    pending->barrier = IcdEvent::retain(barrier.get());
    pending->keep_alive = std::move(keep_alive);
    pending->waits = step.waits;
    pending->polled = step_poll_wanted(step.queue);
    if (event) {
        // Registered before the work can run, so a failure has an entry to land in.
        event_types().add(barrier.get(), step.type);
        pending->reported = IcdEvent::retain(barrier.get());
        if (profiling_queue(step.queue)) {
            cl_device_id device = nullptr;
            if (next().clGetCommandQueueInfo(step.queue, CL_QUEUE_DEVICE, sizeof device, &device, nullptr) ==
                CL_SUCCESS)
                pending->profiled_device = device;
            pending->clock.host_queued = host_now_ns();
        }
    }
    pending->events = std::make_shared<StepEvents>(step.queue, std::move(marker), std::move(gate));
    release_events_on_barrier(pending->events, barrier.get());  // refused: the step's job watches the barrier
    note_unfinished(pending->keep_alive, pending->waits);
    if (pending->polled && finish_waits()) note_polled_open(pending->queue);
    add_pending(pending);
    err = next().clSetEventCallback(pending->marker.get(), CL_COMPLETE, on_marker_complete,
                                    reinterpret_cast<void *>(static_cast<uintptr_t>(pending->id)));
    if (err != CL_SUCCESS) {
        claim(pending->id);
        // Open the gate; the command itself is reported as not enqueued.
        next().clSetUserEventStatus(pending->gate, CL_COMPLETE);
        release_events_when_ended(std::move(pending->events), std::move(pending->barrier));
        if (pending->reported) {
            event_types().remove(barrier.get());
            pending->reported.reset();
        }
        note_finished(pending->keep_alive, pending->waits);
        pending->keep_alive.reset();
        if (pending->polled && finish_waits()) note_polled_ran(pending->queue);
        return err;  // the enqueue's reference on the barrier goes with `barrier`
    }
    // The marker must reach the device for its callback to fire even if the
    // application only waits on the step's event later.
    next().clFlush(step.queue);
    if (pending->polled) wake_step_poller(poll_polled_steps);

    if (event) *event = barrier.hand_off();  // the application's
    return CL_SUCCESS;
}

}  // namespace cldmabuf
