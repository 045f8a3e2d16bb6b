// The clEnqueue* slots the layer has nothing to do in, wrapped only to count
// the command in the enqueue epoch (layer/enqueue_epoch.hpp) before it goes
// down unchanged: kernels, markers, barriers, migrations, image reads, SVM
// commands.  layer/dispatch_table.cpp lists which slots take it.
//
// One template for all of them, so each is the same two instructions (a
// locked add and the tail jump through next(), no frame: bench-passthrough's
// enqueue loops measure it) and none can forget the count.  Installed with
// wrap(): a slot the target leaves NULL stays NULL.
#pragma once

#include <type_traits>

#include "layer/dispatch.hpp"
#include "layer/enqueue_epoch.hpp"

namespace cldmabuf {
namespace passthrough_detail {

template <auto Slot, typename Fn>
struct Counted;

template <auto Slot, typename R, typename... Args>
struct Counted<Slot, R(CL_API_CALL *)(Args...)> {
    static R CL_API_CALL call(Args... args) {
        count_enqueue();
        return (next().*Slot)(args...);
    }
};

template <auto Slot>
using SlotType = std::remove_cvref_t<decltype(std::declval<cl_icd_dispatch &>().*Slot)>;

}  // namespace passthrough_detail

// counted_enqueue<&cl_icd_dispatch::clEnqueueNDRangeKernel>: the slot's
// signature, counted, then next()'s function with the same arguments.
template <auto Slot>
inline constexpr passthrough_detail::SlotType<Slot> counted_enqueue =
    &passthrough_detail::Counted<Slot, passthrough_detail::SlotType<Slot>>::call;

}  // namespace cldmabuf
