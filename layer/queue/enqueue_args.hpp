// A clEnqueue* call's queue, wait list and event, found by their types
// whatever the slot's signature (the queue first, the wait list the one
// `const cl_event *` with its count before it, the event the one
// `cl_event *`), so that one template records what any command may wait for
// (layer/core/command_dependencies.hpp).
#pragma once

#include <tuple>
#include <type_traits>

#include "layer/core/command_dependencies.hpp"
#include "layer/core/dispatch.hpp"

namespace cldmabuf {
namespace enqueue_args_detail {

template <typename T, typename... Args>
constexpr int index_of() {
    int i = 0, found = -1;
    ((found = (found < 0 && std::is_same_v<Args, T>) ? i : found, ++i), ...);
    return found;
}

template <auto A, auto B>
constexpr bool same_slot() {
    if constexpr (std::is_same_v<decltype(A), decltype(B)>)
        return A == B;
    else
        return false;
}

}  // namespace enqueue_args_detail

// How a slot's command orders itself in its queue.
template <auto Slot>
constexpr CommandShape shape_of_slot() {
    using D = cl_icd_dispatch;
    using enqueue_args_detail::same_slot;
    if constexpr (same_slot<Slot, &D::clEnqueueBarrierWithWaitList>() || same_slot<Slot, &D::clEnqueueBarrier>() ||
                  same_slot<Slot, &D::clEnqueueWaitForEvents>())
        return CommandShape::barrier;
    else if constexpr (same_slot<Slot, &D::clEnqueueMarkerWithWaitList>() || same_slot<Slot, &D::clEnqueueMarker>())
        return CommandShape::marker;
    else
        return CommandShape::plain;
}

// note_enqueued for a call with these arguments.
template <typename... Args>
void note_enqueue_call(bool enqueued, CommandShape shape, bool opaque, Args... args) {
    using namespace enqueue_args_detail;
    constexpr int w = index_of<const cl_event *, Args...>();
    constexpr int e = index_of<cl_event *, Args...>();
    const auto all = std::forward_as_tuple(args...);
    cl_uint n = 0;
    const cl_event *waits = nullptr;
    const cl_event *event = nullptr;
    if constexpr (w >= 1) {
        waits = std::get<w>(all);
        n = std::get<w - 1>(all);
    }
    if constexpr (e >= 0) event = std::get<e>(all);
    note_enqueued(std::get<0>(all), n, waits, event, enqueued, shape, {}, opaque);
}

}  // namespace cldmabuf
