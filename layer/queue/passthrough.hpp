// The clEnqueue* slots the layer has nothing to do in, wrapped only to count
// the command (layer/queue/epoch.hpp) before it goes down unchanged:
// kernels, markers, barriers, migrations, image reads, SVM commands; and the
// read, write, fill and map slots, whose entry chains (layer/entry/entry_chains.cpp)
// apply only while an import is alive.  layer/entry/dispatch_table.cpp lists which
// slots take which.
//
// While no import is alive a command is counted as landed at once (the word's
// own argument says why that is sound), so the fast half of every slot is
// the same four instructions: a compare and a branch on the live-import
// count, the locked add and the tail jump through next() — no frame,
// bench-passthrough's enqueue loops measure it.  Otherwise the slot's slow
// half, reached by a jump with the caller's registers and stack untouched:
// for a counted slot a frame that counts the command in flight around the
// ICD's call (tracked(), below), for a checked slot its entry chain, which
// does the same after its checks.  Installed with wrap(): a slot the target
// leaves NULL stays NULL.
//
// On x86-64 the fast half is written out in a naked function: GCC 12 gives
// the C++ form a prologue that saves a register and copies the stack
// arguments out and back whenever the function has a second way out, taken
// or not (issue #18: +11 instructions on clEnqueueReadBuffer in C++, +31
// with the checks inline; +2 so).  Naked, no compiler option (frame
// pointers, -O0) can put a frame before the jump.  TSan builds take the C++
// form, so the sanitizer sees the word's writes.
#pragma once

#include <atomic>
#include <cstddef>
#include <type_traits>

#include "layer/core/dispatch.hpp"
#include "layer/queue/epoch.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {
namespace passthrough_detail {

// The slow half of a counted slot: the command is in flight until the ICD's
// call returned.
template <auto Slot, typename Fn>
struct Tracked;

template <auto Slot, typename R, typename... Args>
struct Tracked<Slot, R(CL_API_CALL *)(Args...)> {
    static R CL_API_CALL call(Args... args) {
        CountedCommand counted;
        return (next().*Slot)(args...);
    }
};

template <auto Slot, auto Slow, typename Fn>
struct CountedUnlessImports;

template <auto Slot, auto Slow, typename R, typename... Args>
struct CountedUnlessImports<Slot, Slow, R(CL_API_CALL *)(Args...)> {
#if defined(__x86_64__) && !defined(CLDMABUF_EPOCH_TSAN)
    static_assert(sizeof(std::atomic<size_t>) == 8 && std::atomic<size_t>::is_always_lock_free,
                  "the naked pass-through compares the live-import count as one quadword");
    [[gnu::naked]] static R CL_API_CALL call(Args...) {
        asm("cmpq $0, %c0(%%rip)\n\t"       // an import is alive:
            "jne %P1\n\t"                   //   the slow half, arguments as they came
            "lock addq %2, %c3(%%rip)\n\t"  // count_landed()
            "jmp *%c4(%%rip)"               // (next().*Slot)(args...)
            :
            : "i"(&import_registry_detail::live), "i"(Slow), "i"(kEpochOne), "i"(&enqueue_epoch_detail::word),
              "i"(&(dispatch_tables::guarded_next.*Slot)));
    }
#else
    static R CL_API_CALL call(Args... args) {
        if (__builtin_expect(!no_imports(), 0)) return Slow(args...);
        count_landed();
        return (next().*Slot)(args...);
    }
#endif
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
