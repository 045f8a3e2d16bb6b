#include "layer/queue/user_events.hpp"

#include <atomic>
#include <mutex>
#include <unordered_set>

#include "layer/dispatch.hpp"

namespace cldmabuf {
namespace {

std::mutex pending_mutex;
auto *pending = new std::unordered_set<cl_event>;  // leaked: late destructors may still ask
std::atomic<size_t> pending_count{0};

}  // namespace

cl_event CL_API_CALL create_user_event(cl_context context, cl_int *errcode_ret) {
    cl_event event = next().clCreateUserEvent(context, errcode_ret);
    if (event) {
        std::lock_guard lock(pending_mutex);
        // A handle the ICD hands out again is a new event without a status.
        if (pending->insert(event).second) pending_count.fetch_add(1, std::memory_order_relaxed);
    }
    return event;
}

cl_int CL_API_CALL set_user_event_status(cl_event event, cl_int status) {
    const cl_int err = next().clSetUserEventStatus(event, status);
    if (err == CL_SUCCESS) {
        std::lock_guard lock(pending_mutex);
        if (pending->erase(event)) pending_count.fetch_sub(1, std::memory_order_relaxed);
    }
    return err;
}

size_t user_events_pending() { return pending_count.load(std::memory_order_relaxed); }

}  // namespace cldmabuf
