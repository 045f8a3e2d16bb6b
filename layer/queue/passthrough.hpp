// The clEnqueue* slots the layer has nothing to do in, wrapped only to count
// the command (layer/queue/epoch.hpp) before it goes down unchanged:
// kernels, markers, barriers, migrations, image reads, SVM commands; and the
// read, write, fill and map slots, whose entry chains (layer/entry/entry_chains.cpp)
// apply only while an import is alive.  layer/entry/dispatch_table.cpp lists which
// slots take which.
//
// While no import is alive a command is counted as landed at once (the word's
// own argument says why that is sound) and the slot tail-calls next()'s
// function.  Otherwise the slot's slow half: for a counted slot a frame that
// counts the command in flight around the ICD's call and records what it may
// wait for (Tracked, below), for a checked slot its entry chain, which does
// the same after its checks.
// Installed with wrap(): a slot the target leaves NULL stays NULL.
//
// Plain C++ on every target.  GCC gives some slots a frame around the tail
// call (stack arguments copied out and back); bench/compare-layers measured
// that against a naked assembly form on PoCL and found no difference beyond
// the runs' spread, and neither is visible next to the ICD's own enqueue
// (docs/benchmarks.md, "The pass-through's form").
#pragma once

#include <type_traits>

#include "layer/core/dispatch.hpp"
#include "layer/queue/enqueue_args.hpp"
#include "layer/queue/epoch.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {
namespace passthrough_detail {

// The slow half of a counted slot: the command is in flight until the ICD's
// call returned, and what it may wait for is recorded
// (layer/core/command_dependencies.hpp).
template <auto Slot, typename Fn>
struct Tracked;

template <auto Slot, typename R, typename... Args>
struct Tracked<Slot, R(CL_API_CALL *)(Args...)> {
    static R CL_API_CALL call(Args... args) {
        CountedCommand counted;
        const R result = (next().*Slot)(args...);
        note_enqueue_call(result == CL_SUCCESS, shape_of_slot<Slot>(), false, args...);
        return result;
    }
};

template <auto Slot, auto Slow, typename Fn>
struct CountedUnlessImports;

template <auto Slot, auto Slow, typename R, typename... Args>
struct CountedUnlessImports<Slot, Slow, R(CL_API_CALL *)(Args...)> {
    static R CL_API_CALL call(Args... args) {
        if (__builtin_expect(!no_imports(), 0)) return Slow(args...);
        count_landed();
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
    &passthrough_detail::CountedUnlessImports<
        Slot, &passthrough_detail::Tracked<Slot, passthrough_detail::SlotType<Slot>>::call,
        passthrough_detail::SlotType<Slot>>::call;

// checked_enqueue<&cl_icd_dispatch::clEnqueueReadBuffer, chain::read_buffer>:
// counted as landed while no import is alive, the entry chain otherwise
// (which counts the command in flight itself).
template <auto Slot, auto Checked>
inline constexpr passthrough_detail::SlotType<Slot> checked_enqueue =
    &passthrough_detail::CountedUnlessImports<Slot, Checked, passthrough_detail::SlotType<Slot>>::call;

}  // namespace cldmabuf
