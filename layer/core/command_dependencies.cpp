#include "layer/core/command_dependencies.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>

#include "layer/core/dispatch.hpp"

namespace cldmabuf {
namespace {

struct QueueDeps {
    bool asked = false;    // the queue's properties were asked
    bool in_order = true;
    MayWaitFor all;            // every command since the queue's last clFinish
    MayWaitFor after_barrier;  // what every later command waits for (an out-of-order queue's last barrier)
};

// Leaked on purpose: ICD threads may still enqueue at exit.
std::mutex deps_mutex;
auto *event_deps = new std::unordered_map<cl_event, MayWaitFor>;
auto *queue_deps = new std::unordered_map<cl_command_queue, QueueDeps>;
// The openings alive, each with the openings its acquire waits for.
auto *alive = new std::unordered_map<uint64_t, std::vector<uint64_t>>;
std::atomic<uint64_t> openings_alive{0};   // alive->size(), read without the lock
std::atomic<uint64_t> queues_naming{0};    // queues whose record names something, read without the lock
std::atomic<uint64_t> events_recorded{0};  // event_deps->size(), read without the lock
std::atomic<uint64_t> last_serial{0};
std::atomic<void (*)()> ended_listener{nullptr};
std::atomic<bool> unrecorded_enqueues{false};

bool event_pending(cl_event e) {
    cl_int status = CL_COMPLETE;
    return next().clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) ==
               CL_SUCCESS &&
           status > CL_COMPLETE;
}

bool names_anything(const MayWaitFor &w) { return !w.openings.empty() || !w.unseen.empty() || w.opaque; }

// Under deps_mutex: `from` joins `into`, its openings only while alive.
void merge(MayWaitFor &into, const MayWaitFor &from) {
    for (uint64_t s : from.openings)
        if (alive->count(s) && std::find(into.openings.begin(), into.openings.end(), s) == into.openings.end())
            into.openings.push_back(s);
    for (const auto &u : from.unseen)
        if (std::none_of(into.unseen.begin(), into.unseen.end(), [&](const auto &x) { return x->get() == u->get(); }))
            into.unseen.push_back(u);
    into.opaque = into.opaque || from.opaque;
}

// Under deps_mutex: openings gone since are dropped.
void drop_gone(MayWaitFor &w) {
    w.openings.erase(std::remove_if(w.openings.begin(), w.openings.end(), [](uint64_t s) { return !alive->count(s); }),
                     w.openings.end());
}

// Under deps_mutex: the queue's record, its properties asked once (a query, no wait).
QueueDeps &queue_record(cl_command_queue queue) {
    QueueDeps &q = (*queue_deps)[queue];
    if (!q.asked) {
        q.asked = true;
        cl_command_queue_properties props = 0;
        if (next().clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props, &props, nullptr) == CL_SUCCESS)
            q.in_order = !(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    }
    return q;
}

void count_queue_naming(const QueueDeps &q, bool named_before) {
    const bool named_now = names_anything(q.all) || names_anything(q.after_barrier);
    if (named_now != named_before) named_now ? queues_naming++ : queues_naming--;
}

// Under deps_mutex: what a command with that wait list and shape on `queue`
// may wait for, from the records; `unknown` gets the waited events the
// layer did not record (the caller asks their status, outside the lock).
MayWaitFor gather(cl_command_queue queue, cl_uint n, const cl_event *waits, CommandShape shape,
                  std::vector<cl_event> *unknown) {
    MayWaitFor w;
    const bool listed = n > 0 && waits;
    for (cl_uint i = 0; listed && i < n; ++i) {
        auto it = event_deps->find(waits[i]);
        if (it != event_deps->end())
            merge(w, it->second);
        else
            unknown->push_back(waits[i]);
    }
    auto q = queue_deps->find(queue);
    if (q == queue_deps->end()) return w;
    if (q->second.in_order || (shape != CommandShape::plain && !listed))
        merge(w, q->second.all);
    else
        merge(w, q->second.after_barrier);
    return w;
}

// Outside the lock: the unrecorded events still pending join `w`, held.
void hold_unknown(MayWaitFor &w, const std::vector<cl_event> &unknown) {
    for (cl_event e : unknown)
        if (event_pending(e)) w.unseen.push_back(std::make_shared<const IcdEvent>(IcdEvent::retain(e)));
}

}  // namespace

bool MayWaitFor::everything() const {
    return opaque || std::any_of(unseen.begin(), unseen.end(), [](const auto &u) { return event_pending(u->get()); });
}

MayWaitFor may_wait_for(cl_command_queue queue, cl_uint n, const cl_event *waits, CommandShape shape) {
    std::vector<cl_event> unknown;
    MayWaitFor w;
    {
        std::lock_guard lock(deps_mutex);
        w = gather(queue, n, waits, shape, &unknown);
    }
    hold_unknown(w, unknown);
    w.opaque = w.opaque || unrecorded_enqueues.load(std::memory_order_relaxed);
    // Ended since they were recorded: they hold nothing now.
    w.unseen.erase(
        std::remove_if(w.unseen.begin(), w.unseen.end(), [](const auto &u) { return !event_pending(u->get()); }),
        w.unseen.end());
    return w;
}

void note_enqueued(cl_command_queue queue, cl_uint n, const cl_event *waits, const cl_event *event, bool enqueued,
                   CommandShape shape, const std::vector<uint64_t> &made, bool opaque) {
    if (!enqueued) return;
    const bool listed = n > 0 && waits;
    // Nothing alive to wait for, nothing waited for, a queue that names
    // nothing: the command waits for no acquire.  Its event stays
    // unrecorded (asked as an unknown one, by its status).
    if (openings_alive.load(std::memory_order_relaxed) == 0 && !listed && made.empty() && !opaque &&
        queues_naming.load(std::memory_order_relaxed) == 0)
        return;
    std::vector<cl_event> unknown;
    MayWaitFor w;
    {
        std::lock_guard lock(deps_mutex);
        w = gather(queue, n, waits, shape, &unknown);
    }
    hold_unknown(w, unknown);
    w.opaque = w.opaque || opaque;
    std::lock_guard lock(deps_mutex);
    QueueDeps &q = queue_record(queue);
    const bool named_before = names_anything(q.all) || names_anything(q.after_barrier);
    drop_gone(q.all);
    drop_gone(q.after_barrier);
    // User events that ended no longer matter; asked only where they pile up.
    if (q.all.unseen.size() > 8)
        q.all.unseen.erase(std::remove_if(q.all.unseen.begin(), q.all.unseen.end(),
                                          [](const auto &u) { return !event_pending(u->get()); }),
                           q.all.unseen.end());
    if (shape == CommandShape::barrier) q.after_barrier = w;
    for (uint64_t s : made)
        if (auto it = alive->find(s); it != alive->end()) it->second = w.openings;
    for (uint64_t s : made)
        if (alive->count(s)) w.openings.push_back(s);
    merge(q.all, w);
    count_queue_naming(q, named_before);
    if (event && *event) {
        auto [it, fresh] = event_deps->try_emplace(*event, std::move(w));
        if (fresh)
            events_recorded++;
        else
            it->second = std::move(w);  // a handle the ICD reused before its release reached the layer
    }
}

uint64_t new_opening_serial() {
    const uint64_t s = ++last_serial;
    std::lock_guard lock(deps_mutex);
    alive->emplace(s, std::vector<uint64_t>{});
    openings_alive.store(alive->size(), std::memory_order_relaxed);
    return s;
}

void opening_gone(uint64_t serial) {
    std::lock_guard lock(deps_mutex);
    alive->erase(serial);
    openings_alive.store(alive->size(), std::memory_order_relaxed);
}

bool opening_waits_for(uint64_t later, uint64_t earlier) {
    std::lock_guard lock(deps_mutex);
    auto it = alive->find(later);
    return it != alive->end() && std::find(it->second.begin(), it->second.end(), earlier) != it->second.end();
}

void forget_event_dependencies(cl_event event) {
    if (events_recorded.load(std::memory_order_relaxed) == 0) return;
    MayWaitFor gone;  // released after the lock (an unseen event's holder releases an ICD event)
    std::lock_guard lock(deps_mutex);
    auto it = event_deps->find(event);
    if (it == event_deps->end()) return;
    gone = std::move(it->second);
    event_deps->erase(it);
    events_recorded--;
}

void forget_queue_dependencies(cl_command_queue queue) {
    MayWaitFor all, after;  // released after the lock
    std::lock_guard lock(deps_mutex);
    auto it = queue_deps->find(queue);
    if (it == queue_deps->end()) return;
    const bool named_before = names_anything(it->second.all) || names_anything(it->second.after_barrier);
    all = std::move(it->second.all);
    after = std::move(it->second.after_barrier);
    queue_deps->erase(it);
    if (named_before) queues_naming--;
}

void note_unrecorded_enqueue() { unrecorded_enqueues.store(true, std::memory_order_relaxed); }

void on_user_event_ended(void (*listener)()) { ended_listener.store(listener); }

void note_user_event_ended() {
    if (auto *listener = ended_listener.load()) listener();
}

}  // namespace cldmabuf
