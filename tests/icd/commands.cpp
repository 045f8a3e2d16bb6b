// The command queue: commands run as soon as their wait list (and every
// earlier command of the queue) completed, under the one lock (in manual
// mode when manual.cpp's control runs them); events,
// user events, callbacks, profiling; the buffer commands.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "testicd.hpp"

struct Command {
    cl_event event = nullptr;
    std::vector<cl_event> waits;
    std::vector<cl_mem> keep;
    std::function<cl_int()> work;
};

namespace testicd {
namespace {

// A wait that never ends would hang a test: give up loudly instead.
constexpr auto wait_bound = std::chrono::seconds(30);

// Never destroyed: a layer's threads may still call in while the process
// exits (static destructors run before a layer's atexit teardown joins
// them), as real ICDs keep their globals alive for the same reason.
std::vector<cl_command_queue> &queues() {
    static auto *list = new std::vector<cl_command_queue>;
    return *list;
}

cl_ulong now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// reuse_events: destroyed events whose handles the next events get (last
// destroyed first); held_event_refs: the events the ICD holds a reference
// on (under lock()).  Never destroyed, like queues().
std::vector<cl_event> &reusable_events() {
    static auto *list = new std::vector<cl_event>;
    return *list;
}
std::vector<cl_event> &held_events() {
    static auto *list = new std::vector<cl_event>;
    return *list;
}

void release_event_locked(cl_event ev) {
    if (--ev->refs == 0) {
        ev->kind = Kind{};
        count_object(Kind::event, -1);
        if (config().reuse_events) reusable_events().push_back(ev);
        else delete ev;
    }
}

// no_terminated_callbacks: a command that ended with a negative status
// drops its callbacks unrun, as PoCL 3.1 does (docs/icds.md); a user
// event's are still called.
bool drops_callbacks(cl_event ev, cl_int status) {
    return status < 0 && ev->queue && config().no_terminated_callbacks;
}

// held_callbacks: a command's callbacks owed, in the order they came due.
std::mutex held_mutex;
std::vector<std::function<void()>> held;

// callback_delay_ms: one thread of the ICD calls each callback that long
// after it came due, in order, never under the ICD's lock.
void deliver_late(std::function<void()> deliver) {
    struct Late {
        std::mutex mu;
        std::condition_variable due;
        std::deque<std::pair<std::chrono::steady_clock::time_point, std::function<void()>>> queue;
    };
    static Late *late = [] {
        auto *made = new Late;  // never destroyed: callbacks may be due at exit
        std::thread([made] {
            std::unique_lock lock(made->mu);
            for (;;) {
                made->due.wait(lock, [made] { return !made->queue.empty(); });
                auto [when, fn] = std::move(made->queue.front());
                made->queue.pop_front();
                lock.unlock();
                std::this_thread::sleep_until(when);
                fn();
                lock.lock();
            }
        }).detach();
        return made;
    }();
    std::lock_guard guard(late->mu);
    late->queue.emplace_back(std::chrono::steady_clock::now() + std::chrono::milliseconds(config().callback_delay_ms),
                             std::move(deliver));
    late->due.notify_one();
}

// Sets the status and queues the callbacks it triggers (each holds a reference).
void set_status(cl_event ev, cl_int status, Later &later) {
    ev->status = status;
    if (status <= CL_COMPLETE) ev->times[2] = ev->times[2] ? ev->times[2] : now_ns(), ev->times[3] = now_ns();
    if (drops_callbacks(ev, status)) ev->callbacks.clear();
    auto &cbs = ev->callbacks;
    for (auto it = cbs.begin(); it != cbs.end();) {
        if (status <= it->when) {
            ++ev->refs;
            const auto cb = *it;
            auto deliver = [ev, cb, status] {
                cb.fn(ev, status < 0 ? status : cb.when, cb.data);
                std::lock_guard guard(lock());
                release_event_locked(ev);
            };
            if (config().manual && config().late_callbacks) {
                defer_step("callback " + hex(ev->type) + " " + std::to_string(status), std::move(deliver));
            } else if (config().callback_delay_ms > 0 && ev->queue) {
                deliver_late(std::move(deliver));
            } else if (config().held_callbacks && ev->queue) {
                std::lock_guard hold(held_mutex);
                held.push_back(std::move(deliver));
            } else
                later.push_back(std::move(deliver));
            it = cbs.erase(it);
        } else {
            ++it;
        }
    }
}

}  // namespace

void release_event_under_lock(cl_event ev) { release_event_locked(ev); }

void run_held_callbacks() {
    std::vector<std::function<void()>> due;
    {
        std::lock_guard hold(held_mutex);
        due.swap(held);
    }
    for (auto &fn : due) fn();
}

cl_ulong held_callbacks() {
    std::lock_guard hold(held_mutex);
    return held.size();
}

namespace {

bool waits_ended(const Command *cmd) {
    bool failed = false, blocked = false;
    for (cl_event w : cmd->waits) {
        failed |= w->status < 0;
        blocked |= w->status > CL_COMPLETE;
    }
    return failed || !blocked;
}

// A command that waits for every command enqueued before it: a barrier, and
// a marker or barrier with an empty wait list (the spec's rule for both).
bool waits_for_all_before(const Command *cmd) {
    return cmd->event->type == CL_COMMAND_BARRIER ||
           (cmd->event->type == CL_COMMAND_MARKER && cmd->waits.empty());
}

}  // namespace

bool front_ready(cl_command_queue q) { return !ready_commands(q).empty(); }

std::vector<size_t> ready_commands(cl_command_queue q) {
    std::vector<size_t> out;
    if (q->pending.empty()) return out;
    if (q->behind_failure) return {0};
    // In order: the front only.  Out of order (manual mode, where the order
    // is the scheduler's): any command whose wait list ended, none past a
    // barrier, a barrier or list-less marker only once it is the front.
    const bool any_order = config().manual && (q->properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    for (size_t i = 0; i < q->pending.size(); ++i) {
        const Command *cmd = q->pending[i];
        if (i > 0 && waits_for_all_before(cmd)) {
            if (cmd->event->type == CL_COMMAND_BARRIER) break;
            continue;
        }
        if (waits_ended(cmd)) out.push_back(i);
        if (!any_order || cmd->event->type == CL_COMMAND_BARRIER) break;
    }
    return out;
}

cl_command_type command_type(cl_command_queue q, size_t i) { return q->pending.at(i)->event->type; }

void run_command(cl_command_queue q, size_t i, Later &later) {
    Command *cmd = q->pending.at(i);
    bool failed = false;
    for (cl_event w : cmd->waits) failed |= w->status < 0;
    failed |= q->behind_failure;
    if (failed && config().fail_queue_behind) q->behind_failure = true;
    cmd->event->times[2] = now_ns();
    cl_int result = failed ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : cmd->work();
    set_status(cmd->event, result == CL_SUCCESS ? CL_COMPLETE : result, later);
    for (cl_event w : cmd->waits) release_event_locked(w);
    for (cl_mem m : cmd->keep) release_mem(m, later);
    release_event_locked(cmd->event);
    q->pending.erase(q->pending.begin() + static_cast<long>(i));
    if (q->pending.empty()) q->behind_failure = false;
    delete cmd;
}

void run_front(cl_command_queue q, Later &later) { run_command(q, 0, later); }

const std::vector<cl_command_queue> &command_queues() { return queues(); }

std::string pending_commands() {
    std::lock_guard guard(lock());
    std::string out;
    for (size_t qi = 0; qi < queues().size(); ++qi)
        for (const Command *cmd : queues()[qi]->pending) {
            out += "q" + std::to_string(qi) + " " + hex(cmd->event->type) + " waits for";
            for (cl_event w : cmd->waits) out += " " + hex(w->type) + ":" + std::to_string(w->status);
            out += "\n";
        }
    return out;
}

// Runs every command that may run (none in manual mode: the steps do), then
// frees the released queues that drained.
void pump_all(Later &later) {
    for (bool progress = true; progress;) {
        progress = false;
        for (size_t qi = 0; qi < queues().size(); ++qi) {
            cl_command_queue q = queues()[qi];
            while (!config().manual && !q->pending.empty() && (q->behind_failure || waits_ended(q->pending.front()))) {
                run_front(q, later);
                progress = true;
            }
            if (q->pending.empty() && q->refs == 0) {
                cl_context ctx = q->context;
                q->kind = Kind{};
                delete q;
                queues().erase(queues().begin() + qi--);
                later.push_back([ctx] { ctx->disp->clReleaseContext(ctx); });
            }
        }
    }
    changed().notify_all();
}

namespace {

bool wait_until(std::unique_lock<std::mutex> &held, const std::function<bool()> &done) {
    if (config().manual) add_waiter(&done);
    const bool ended = changed().wait_for(held, wait_bound, done);
    if (config().manual) remove_waiter(&done);
    if (ended) return true;
    std::fprintf(stderr, "testicd: a wait did not end within 30 s (a user event never completed?)\n");
    return false;
}

cl_int check_wait_list(cl_context ctx, cl_uint n, const cl_event *list) {
    if ((n == 0) != (list == nullptr)) return CL_INVALID_EVENT_WAIT_LIST;
    for (cl_uint i = 0; i < n; ++i) {
        if (!valid(list[i], Kind::event)) return CL_INVALID_EVENT_WAIT_LIST;
        if (ctx && list[i]->context != ctx) return CL_INVALID_CONTEXT;
    }
    return CL_SUCCESS;
}

// ---- events ---------------------------------------------------------------------

cl_event CL_API_CALL create_user_event(cl_context ctx, cl_int *errcode_ret) {
    if (injected_failure("clCreateUserEvent")) {
        if (errcode_ret) *errcode_ret = CL_OUT_OF_RESOURCES;
        return nullptr;
    }
    std::lock_guard guard(lock());
    if (!valid(ctx, Kind::context)) {
        if (errcode_ret) *errcode_ret = CL_INVALID_CONTEXT;
        return nullptr;
    }
    cl_event ev = new_event(ctx, nullptr, CL_COMMAND_USER);
    ev->status = CL_SUBMITTED;
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return ev;
}

cl_int CL_API_CALL set_user_event_status(cl_event ev, cl_int status) {
    Later later;
    {
        std::lock_guard guard(lock());
        if (!valid(ev, Kind::event) || ev->type != CL_COMMAND_USER) return CL_INVALID_EVENT;
        if (status > CL_COMPLETE) return CL_INVALID_VALUE;
        if (ev->status <= CL_COMPLETE) return CL_INVALID_OPERATION;
        set_status(ev, status, later);
        pump_all(later);
    }
    run_later(later);
    return CL_SUCCESS;
}

cl_int CL_API_CALL wait_for_events(cl_uint n, const cl_event *list) {
    if (n == 0 || !list) return CL_INVALID_VALUE;
    std::unique_lock held(lock());
    if (cl_int err = check_wait_list(nullptr, n, list); err != CL_SUCCESS) return CL_INVALID_EVENT;
    std::vector<cl_event> events(list, list + n);
    for (cl_event e : events) ++e->refs;
    const bool ended = wait_until(held, [&] {
        return std::all_of(events.begin(), events.end(), [](cl_event e) { return e->status <= CL_COMPLETE; });
    });
    bool failed = false;
    for (cl_event e : events) failed |= e->status < 0;
    for (cl_event e : events) release_event_locked(e);
    if (!ended) return CL_OUT_OF_RESOURCES;
    return failed ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_SUCCESS;
}

cl_int CL_API_CALL get_event_info(cl_event ev, cl_event_info name, size_t size, void *value, size_t *size_ret) {
    std::lock_guard guard(lock());
    if (!valid(ev, Kind::event)) return CL_INVALID_EVENT;
    switch (name) {
    case CL_EVENT_COMMAND_QUEUE: return answer_value(ev->queue, size, value, size_ret);
    case CL_EVENT_CONTEXT: return answer_value(ev->context, size, value, size_ret);
    case CL_EVENT_COMMAND_TYPE: return answer_value(ev->type, size, value, size_ret);
    case CL_EVENT_COMMAND_EXECUTION_STATUS:
        if (config().manual) note_status_poll(ev);
        return answer_value(ev->status, size, value, size_ret);
    case CL_EVENT_REFERENCE_COUNT: return answer_value(ev->refs, size, value, size_ret);
    default: return CL_INVALID_VALUE;
    }
}

cl_int CL_API_CALL get_event_profiling_info(cl_event ev, cl_profiling_info name, size_t size, void *value,
                                            size_t *size_ret) {
    std::lock_guard guard(lock());
    if (!valid(ev, Kind::event)) return CL_INVALID_EVENT;
    if (!ev->queue || !(ev->queue->properties & CL_QUEUE_PROFILING_ENABLE) || ev->status != CL_COMPLETE)
        return CL_PROFILING_INFO_NOT_AVAILABLE;
    switch (name) {
    case CL_PROFILING_COMMAND_QUEUED: return answer_value(ev->times[0], size, value, size_ret);
    case CL_PROFILING_COMMAND_SUBMIT: return answer_value(ev->times[1], size, value, size_ret);
    case CL_PROFILING_COMMAND_START: return answer_value(ev->times[2], size, value, size_ret);
    case CL_PROFILING_COMMAND_END:
    case CL_PROFILING_COMMAND_COMPLETE: return answer_value(ev->times[3], size, value, size_ret);
    default: return CL_INVALID_VALUE;
    }
}

cl_int CL_API_CALL set_event_callback(cl_event ev, cl_int when, void(CL_CALLBACK *fn)(cl_event, cl_int, void *),
                                      void *data) {
    if (injected_failure("clSetEventCallback")) return CL_OUT_OF_RESOURCES;
    Later later;
    {
        std::lock_guard guard(lock());
        if (!valid(ev, Kind::event)) return CL_INVALID_EVENT;
        if (!fn || (when != CL_COMPLETE && when != CL_RUNNING && when != CL_SUBMITTED)) return CL_INVALID_VALUE;
        if (drops_callbacks(ev, ev->status)) return CL_SUCCESS;  // no_terminated_callbacks: never called
        ev->callbacks.push_back({when, fn, data});
        if (ev->status <= when) set_status(ev, ev->status, later);
    }
    run_later(later);
    return CL_SUCCESS;
}

cl_int CL_API_CALL retain_event(cl_event ev) {
    std::lock_guard guard(lock());
    if (!valid(ev, Kind::event)) return CL_INVALID_EVENT;
    ++ev->refs;
    return CL_SUCCESS;
}

cl_int CL_API_CALL release_event(cl_event ev) {
    std::lock_guard guard(lock());
    if (!valid(ev, Kind::event)) return CL_INVALID_EVENT;
    release_event_locked(ev);
    return CL_SUCCESS;
}

// ---- queues ---------------------------------------------------------------------

cl_int CL_API_CALL retain_command_queue(cl_command_queue q) {
    std::lock_guard guard(lock());
    if (!valid(q, Kind::queue)) return CL_INVALID_COMMAND_QUEUE;
    ++q->refs;
    return CL_SUCCESS;
}

cl_int CL_API_CALL release_command_queue(cl_command_queue q) {
    Later later;
    {
        std::lock_guard guard(lock());
        if (!valid(q, Kind::queue)) return CL_INVALID_COMMAND_QUEUE;
        if (--q->refs == 0) {
            // Kept in queues() until its last command ran (pump_all frees it).
            if (std::find(queues().begin(), queues().end(), q) == queues().end()) queues().push_back(q);
            q->kind = Kind::queue;
            q->refs = 0;
            pump_all(later);
        }
    }
    run_later(later);
    return CL_SUCCESS;
}

cl_int CL_API_CALL flush(cl_command_queue q) {
    if (injected_failure("clFlush")) return CL_OUT_OF_RESOURCES;
    std::lock_guard guard(lock());
    return valid(q, Kind::queue) ? CL_SUCCESS : CL_INVALID_COMMAND_QUEUE;
}

cl_int CL_API_CALL finish(cl_command_queue q) {
    std::unique_lock held(lock());
    if (!valid(q, Kind::queue)) return CL_INVALID_COMMAND_QUEUE;
    ++q->refs;
    const bool ended = wait_until(held, [q] { return q->pending.empty(); });
    --q->refs;
    held.unlock();
    park_point("clFinish");  // drained, not returned yet
    return ended ? CL_SUCCESS : CL_OUT_OF_RESOURCES;
}

// ---- buffer commands ------------------------------------------------------------

bool in_range(cl_mem m, size_t offset, size_t size) { return offset <= m->size && size <= m->size - offset; }

cl_int check_buffer(cl_command_queue q, cl_mem m) {
    if (!valid(m, Kind::mem)) return CL_INVALID_MEM_OBJECT;
    if (valid(q, Kind::queue) && m->context != q->context) return CL_INVALID_CONTEXT;
    return CL_SUCCESS;
}

cl_int CL_API_CALL enqueue_read_buffer(cl_command_queue q, cl_mem m, cl_bool blocking, size_t offset, size_t size,
                                       void *ptr, cl_uint n, const cl_event *waits, cl_event *event) {
    if (injected_failure("clEnqueueReadBuffer")) return CL_OUT_OF_RESOURCES;
    {
        std::lock_guard guard(lock());
        if (cl_int err = check_buffer(q, m); err != CL_SUCCESS) return err;
        if (!ptr || size == 0 || !in_range(m, offset, size)) return CL_INVALID_VALUE;
    }
    return submit(q, CL_COMMAND_READ_BUFFER, n, waits, event, blocking, {m}, [=] {
        std::memcpy(ptr, mem_bytes(m) + offset, size);
        return CL_SUCCESS;
    });
}

cl_int CL_API_CALL enqueue_write_buffer(cl_command_queue q, cl_mem m, cl_bool blocking, size_t offset, size_t size,
                                        const void *ptr, cl_uint n, const cl_event *waits, cl_event *event) {
    if (injected_failure("clEnqueueWriteBuffer")) return CL_OUT_OF_RESOURCES;
    park_point("clEnqueueWriteBuffer");
    {
        std::lock_guard guard(lock());
        if (cl_int err = check_buffer(q, m); err != CL_SUCCESS) return err;
        if (!ptr || size == 0 || !in_range(m, offset, size)) return CL_INVALID_VALUE;
    }
    return submit(q, CL_COMMAND_WRITE_BUFFER, n, waits, event, blocking, {m}, [=] {
        std::memcpy(mem_bytes(m) + offset, ptr, size);
        return CL_SUCCESS;
    });
}

cl_int CL_API_CALL enqueue_copy_buffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t so, size_t dof,
                                       size_t size, cl_uint n, const cl_event *waits, cl_event *event) {
    {
        std::lock_guard guard(lock());
        if (cl_int err = check_buffer(q, src); err != CL_SUCCESS) return err;
        if (cl_int err = check_buffer(q, dst); err != CL_SUCCESS) return err;
        if (size == 0 || !in_range(src, so, size) || !in_range(dst, dof, size)) return CL_INVALID_VALUE;
        const char *a = mem_bytes(src) + so, *b = mem_bytes(dst) + dof;
        if (a < b + size && b < a + size && !config().quirk_accept_overlap) return CL_MEM_COPY_OVERLAP;
    }
    return submit(q, CL_COMMAND_COPY_BUFFER, n, waits, event, false, {src, dst}, [=] {
        std::memmove(mem_bytes(dst) + dof, mem_bytes(src) + so, size);
        return CL_SUCCESS;
    });
}

// Rectangles: offsets in bytes from origin/pitches (the spec's formula).
struct Rect {
    size_t origin[3], row_pitch, slice_pitch;
    size_t at(size_t x, size_t y, size_t z) const {
        return (origin[2] + z) * slice_pitch + (origin[1] + y) * row_pitch + origin[0] + x;
    }
};

Rect rect(const size_t *origin, const size_t *region, size_t row_pitch, size_t slice_pitch) {
    Rect r{{origin[0], origin[1], origin[2]}, row_pitch ? row_pitch : region[0], 0};
    r.slice_pitch = slice_pitch ? slice_pitch : r.row_pitch * region[1];
    return r;
}

void copy_rect(char *dst, const Rect &d, const char *src, const Rect &s, const size_t *region) {
    for (size_t z = 0; z < region[2]; ++z)
        for (size_t y = 0; y < region[1]; ++y) std::memmove(dst + d.at(0, y, z), src + s.at(0, y, z), region[0]);
}

size_t rect_end(const Rect &r, const size_t *region) {
    return r.at(region[0], region[1] - 1, region[2] - 1);
}

cl_int CL_API_CALL enqueue_copy_buffer_rect(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *so,
                                            const size_t *dof, const size_t *region, size_t srp, size_t ssp,
                                            size_t drp, size_t dsp, cl_uint n, const cl_event *waits,
                                            cl_event *event) {
    if (!so || !dof || !region || !region[0] || !region[1] || !region[2]) return CL_INVALID_VALUE;
    const Rect s = rect(so, region, srp, ssp), d = rect(dof, region, drp, dsp);
    {
        std::lock_guard guard(lock());
        if (cl_int err = check_buffer(q, src); err != CL_SUCCESS) return err;
        if (cl_int err = check_buffer(q, dst); err != CL_SUCCESS) return err;
        if (rect_end(s, region) > src->size || rect_end(d, region) > dst->size) return CL_INVALID_VALUE;
    }
    return submit(q, CL_COMMAND_COPY_BUFFER_RECT, n, waits, event, false, {src, dst}, [=] {
        copy_rect(mem_bytes(dst), d, mem_bytes(src), s, region);
        return CL_SUCCESS;
    });
}

cl_int CL_API_CALL enqueue_read_buffer_rect(cl_command_queue q, cl_mem m, cl_bool blocking, const size_t *bo,
                                            const size_t *ho, const size_t *region, size_t brp, size_t bsp,
                                            size_t hrp, size_t hsp, void *ptr, cl_uint n, const cl_event *waits,
                                            cl_event *event) {
    if (!bo || !ho || !region || !ptr || !region[0] || !region[1] || !region[2]) return CL_INVALID_VALUE;
    const Rect b = rect(bo, region, brp, bsp), h = rect(ho, region, hrp, hsp);
    {
        std::lock_guard guard(lock());
        if (cl_int err = check_buffer(q, m); err != CL_SUCCESS) return err;
        if (rect_end(b, region) > m->size) return CL_INVALID_VALUE;
    }
    return submit(q, CL_COMMAND_READ_BUFFER_RECT, n, waits, event, blocking, {m}, [=] {
        copy_rect(static_cast<char *>(ptr), h, mem_bytes(m), b, region);
        return CL_SUCCESS;
    });
}

cl_int CL_API_CALL enqueue_write_buffer_rect(cl_command_queue q, cl_mem m, cl_bool blocking, const size_t *bo,
                                             const size_t *ho, const size_t *region, size_t brp, size_t bsp,
                                             size_t hrp, size_t hsp, const void *ptr, cl_uint n,
                                             const cl_event *waits, cl_event *event) {
    if (!bo || !ho || !region || !ptr || !region[0] || !region[1] || !region[2]) return CL_INVALID_VALUE;
    const Rect b = rect(bo, region, brp, bsp), h = rect(ho, region, hrp, hsp);
    {
        std::lock_guard guard(lock());
        if (cl_int err = check_buffer(q, m); err != CL_SUCCESS) return err;
        if (rect_end(b, region) > m->size) return CL_INVALID_VALUE;
    }
    return submit(q, CL_COMMAND_WRITE_BUFFER_RECT, n, waits, event, blocking, {m}, [=] {
        copy_rect(mem_bytes(m), b, static_cast<const char *>(ptr), h, region);
        return CL_SUCCESS;
    });
}

cl_int CL_API_CALL enqueue_fill_buffer(cl_command_queue q, cl_mem m, const void *pattern, size_t psize,
                                       size_t offset, size_t size, cl_uint n, const cl_event *waits,
                                       cl_event *event) {
    if (injected_failure("clEnqueueFillBuffer")) return CL_OUT_OF_RESOURCES;
    park_point("clEnqueueFillBuffer");  // counted by the layer, not in the queue yet
    if (!pattern || !psize || psize > 128 || (psize & (psize - 1)) || offset % psize || size % psize)
        return CL_INVALID_VALUE;
    std::vector<char> pat(static_cast<const char *>(pattern), static_cast<const char *>(pattern) + psize);
    {
        std::lock_guard guard(lock());
        if (cl_int err = check_buffer(q, m); err != CL_SUCCESS) return err;
        if (!in_range(m, offset, size)) return CL_INVALID_VALUE;
    }
    return submit(q, CL_COMMAND_FILL_BUFFER, n, waits, event, false, {m}, [=] {
        for (size_t i = 0; i < size; i += psize) std::memcpy(mem_bytes(m) + offset + i, pat.data(), psize);
        return CL_SUCCESS;
    });
}

void *CL_API_CALL enqueue_map_buffer(cl_command_queue q, cl_mem m, cl_bool blocking, cl_map_flags, size_t offset,
                                     size_t size, cl_uint n, const cl_event *waits, cl_event *event,
                                     cl_int *errcode_ret) {
    void *ptr = nullptr;
    {
        std::lock_guard guard(lock());
        cl_int err = check_buffer(q, m);
        if (err == CL_SUCCESS && (size == 0 || !in_range(m, offset, size))) err = CL_INVALID_VALUE;
        if (err != CL_SUCCESS) {
            if (errcode_ret) *errcode_ret = err;
            return nullptr;
        }
        ptr = mem_bytes(m) + offset;  // the storage is host memory in every mode
    }
    cl_int err = submit(q, CL_COMMAND_MAP_BUFFER, n, waits, event, blocking, {m}, [m] {
        ++m->map_count;
        return CL_SUCCESS;
    });
    if (errcode_ret) *errcode_ret = err;
    return err == CL_SUCCESS ? ptr : nullptr;
}

cl_int CL_API_CALL enqueue_unmap_mem_object(cl_command_queue q, cl_mem m, void *ptr, cl_uint n,
                                            const cl_event *waits, cl_event *event) {
    {
        std::lock_guard guard(lock());
        if (cl_int err = check_buffer(q, m); err != CL_SUCCESS) return err;
        if (!ptr) return CL_INVALID_VALUE;
    }
    return submit(q, CL_COMMAND_UNMAP_MEM_OBJECT, n, waits, event, false, {m}, [m] {
        if (m->map_count) --m->map_count;
        return CL_SUCCESS;
    });
}

cl_int CL_API_CALL enqueue_marker_with_wait_list(cl_command_queue q, cl_uint n, const cl_event *waits,
                                                 cl_event *event) {
    if (injected_failure("clEnqueueMarkerWithWaitList")) return CL_OUT_OF_RESOURCES;
    park_point("clEnqueueMarkerWithWaitList");  // not in the queue yet: what is ahead may still finish
    return submit(q, CL_COMMAND_MARKER, n, waits, event, false, {}, [] { return CL_SUCCESS; });
}

cl_int CL_API_CALL enqueue_barrier_with_wait_list(cl_command_queue q, cl_uint n, const cl_event *waits,
                                                  cl_event *event) {
    if (injected_failure("clEnqueueBarrierWithWaitList")) return CL_OUT_OF_RESOURCES;
    return submit(q, CL_COMMAND_BARRIER, n, waits, event, false, {}, [] { return CL_SUCCESS; });
}

// The storage is host memory in every mode: a migration moves nothing, but
// it is a command of the queue (with its event), and its objects are checked.
cl_int CL_API_CALL enqueue_migrate_mem_objects(cl_command_queue q, cl_uint num_mems, const cl_mem *mems,
                                               cl_mem_migration_flags, cl_uint n, const cl_event *waits,
                                               cl_event *event) {
    if (num_mems == 0 || !mems) return CL_INVALID_VALUE;
    {
        std::lock_guard guard(lock());
        for (cl_uint i = 0; i < num_mems; ++i)
            if (cl_int err = check_buffer(q, mems[i]); err != CL_SUCCESS) return err;
    }
    return submit(q, CL_COMMAND_MIGRATE_MEM_OBJECTS, n, waits, event, false, {}, [] { return CL_SUCCESS; });
}

cl_int CL_API_CALL enqueue_marker(cl_command_queue q, cl_event *event) {
    if (!event) return CL_INVALID_VALUE;
    return enqueue_marker_with_wait_list(q, 0, nullptr, event);
}

cl_int CL_API_CALL enqueue_barrier(cl_command_queue q) { return enqueue_barrier_with_wait_list(q, 0, nullptr, nullptr); }

cl_int CL_API_CALL enqueue_wait_for_events(cl_command_queue q, cl_uint n, const cl_event *waits) {
    if (n == 0 || !waits) return CL_INVALID_VALUE;
    return enqueue_barrier_with_wait_list(q, n, waits, nullptr);
}

}  // namespace

void drop_held_event_refs() {
    std::lock_guard guard(lock());
    std::vector<cl_event> held;
    held.swap(held_events());
    for (cl_event ev : held) release_event_locked(ev);
}

cl_event new_event(cl_context ctx, cl_command_queue queue, cl_command_type type) {
    _cl_event *ev = nullptr;
    if (!reusable_events().empty()) {
        ev = reusable_events().back();
        reusable_events().pop_back();
        *ev = _cl_event{};
    } else {
        ev = new _cl_event{};
    }
    count_object(Kind::event, +1);
    ev->disp = dispatch();
    ev->kind = Kind::event;
    ev->context = ctx;
    ev->queue = queue;
    ev->type = type;
    ev->times[0] = ev->times[1] = now_ns();
    if (config().held_event_refs) {
        ++ev->refs;  // the ICD's own, until PLATFORM_TESTICD_DROP_EVENT_REFS
        held_events().push_back(ev);
    }
    return ev;
}

cl_int submit(cl_command_queue q, cl_command_type type, cl_uint n, const cl_event *waits, cl_event *event,
              bool blocking, std::vector<cl_mem> keep, std::function<cl_int()> work) {
    Later later;
    cl_int result = CL_SUCCESS;
    {
        std::unique_lock held(lock());
        if (!valid(q, Kind::queue)) return CL_INVALID_COMMAND_QUEUE;
        if (cl_int err = check_wait_list(q->context, n, waits); err != CL_SUCCESS) return err;
        if (std::find(queues().begin(), queues().end(), q) == queues().end()) queues().push_back(q);
        auto *cmd = new Command{};
        cmd->event = new_event(q->context, q, type);
        cmd->event->status = CL_SUBMITTED;
        cmd->waits.assign(waits, waits + n);
        for (cl_event w : cmd->waits) ++w->refs;
        cmd->keep = std::move(keep);
        for (cl_mem m : cmd->keep) retain_mem(m);
        cmd->work = std::move(work);
        cl_event ev = cmd->event;
        ++ev->refs;  // ours until the end of this call
        if (event) {
            ++ev->refs;
            *event = ev;
        }
        q->pending.push_back(cmd);
        pump_all(later);
        if (blocking) {
            held.unlock();
            run_later(later);
            held.lock();
            if (!wait_until(held, [ev] { return ev->status <= CL_COMPLETE; })) result = CL_OUT_OF_RESOURCES;
            else if (ev->status < 0) result = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
        }
        release_event_locked(ev);
    }
    run_later(later);
    return result;
}

void fill_command_slots(cl_icd_dispatch &d) {
    d.clCreateUserEvent = create_user_event;
    d.clSetUserEventStatus = set_user_event_status;
    d.clWaitForEvents = wait_for_events;
    d.clGetEventInfo = get_event_info;
    d.clGetEventProfilingInfo = get_event_profiling_info;
    d.clSetEventCallback = set_event_callback;
    d.clRetainEvent = retain_event;
    d.clReleaseEvent = release_event;
    d.clRetainCommandQueue = retain_command_queue;
    d.clReleaseCommandQueue = release_command_queue;
    d.clFlush = flush;
    d.clFinish = finish;
    d.clEnqueueReadBuffer = enqueue_read_buffer;
    d.clEnqueueWriteBuffer = enqueue_write_buffer;
    d.clEnqueueCopyBuffer = enqueue_copy_buffer;
    d.clEnqueueCopyBufferRect = enqueue_copy_buffer_rect;
    d.clEnqueueReadBufferRect = enqueue_read_buffer_rect;
    d.clEnqueueWriteBufferRect = enqueue_write_buffer_rect;
    d.clEnqueueFillBuffer = enqueue_fill_buffer;
    d.clEnqueueMapBuffer = enqueue_map_buffer;
    d.clEnqueueUnmapMemObject = enqueue_unmap_mem_object;
    d.clEnqueueMarkerWithWaitList = enqueue_marker_with_wait_list;
    d.clEnqueueMigrateMemObjects = enqueue_migrate_mem_objects;
    d.clEnqueueBarrierWithWaitList = enqueue_barrier_with_wait_list;
    d.clEnqueueMarker = enqueue_marker;
    d.clEnqueueBarrier = enqueue_barrier;
    d.clEnqueueWaitForEvents = enqueue_wait_for_events;
}

}  // namespace testicd
