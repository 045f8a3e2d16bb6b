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

#include <atomic>
#include <cstddef>
#include <type_traits>

#include "layer/dispatch.hpp"
#include "layer/enqueue_epoch.hpp"
#include "layer/registry.hpp"

static_assert(sizeof(std::atomic<size_t>) == 8 && std::atomic<size_t>::is_always_lock_free,
              "the naked pass-through compares the live-import count as one quadword");

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

// While no import exists none of an entry chain's checks can refuse and no
// feature takes the command, so the fast half is the counted slot's two
// instructions plus one compare and one branch; otherwise the whole entry
// (Checked, out of line in layer/entry_chains.cpp), reached by a jump with
// the caller's registers and stack untouched.
//
// On x86-64 the four instructions are written out in a naked function: GCC
// 12 gives the C++ form below a prologue that saves a register and copies
// the stack arguments out and back whenever the function has a second way
// out, taken or not (issue #18: +11 instructions on clEnqueueReadBuffer in
// C++, +31 with the checks inline; +2 so).  Naked, no compiler option
// (frame pointers, -O0) can put a frame before the jump to Checked.  TSan
// builds take the C++ form, so the sanitizer sees the counter's write.
template <auto Slot, auto Checked, typename Fn>
struct CountedUnlessImports;

template <auto Slot, auto Checked, typename R, typename... Args>
struct CountedUnlessImports<Slot, Checked, R(CL_API_CALL *)(Args...)> {
#if defined(__x86_64__) && !defined(CLDMABUF_EPOCH_TSAN)
    [[gnu::naked]] static R CL_API_CALL call(Args...) {
        asm("cmpq $0, %c0(%%rip)\n\t"      // an import exists:
            "jne %P1\n\t"                  //   the entry chain, arguments as they came
            "lock addq $1, %c2(%%rip)\n\t" // count_enqueue()
            "jmp *%c3(%%rip)"               // (next().*Slot)(args...)
            :
            : "i"(&import_registry_detail::live), "i"(Checked), "i"(&enqueue_epoch_detail::count),
              "i"(&(dispatch_tables::guarded_next.*Slot)));
    }
#else
    static R CL_API_CALL call(Args... args) {
        if (__builtin_expect(!no_imports(), 0)) return Checked(args...);
        count_enqueue();
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
    &passthrough_detail::Counted<Slot, passthrough_detail::SlotType<Slot>>::call;

// checked_enqueue<&cl_icd_dispatch::clEnqueueReadBuffer, chain::read_buffer>:
// counted_enqueue while no import exists, the entry chain otherwise.
template <auto Slot, auto Checked>
inline constexpr passthrough_detail::SlotType<Slot> checked_enqueue =
    &passthrough_detail::CountedUnlessImports<Slot, Checked, passthrough_detail::SlotType<Slot>>::call;

}  // namespace cldmabuf
