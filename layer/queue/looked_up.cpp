#include "layer/queue/looked_up.hpp"

#include <array>
#include <cstdint>
#include <mutex>
#include <utility>

#include "layer/base/log.hpp"
#include "layer/queue/epoch.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {

namespace looked_up_detail {
constexpr int kPool = 256;
// Each trampoline's target, written once before the trampoline is handed
// out (the application's own hand-off of the pointer orders the write
// before any call), never changed after.
void *targets[kPool] __attribute__((visibility("hidden")));

// A trampoline is a C++ function of 22 64-bit arguments' worth of machine
// words, which on every ABI Debian builds for (SysV x86-64 and
// i386, AAPCS64, AAPCS-VFP) reaches the target with the caller's integer
// registers and stack words as they came: the target reads only those it
// declares; a 64-bit argument of a 32-bit target is two words in the same
// places (even register pairs and 8-byte stack slots included, since the
// words before it are forwarded too).  Reading words past the caller's own
// arguments reads its frame, which is there.  general-regs-only (below): no
// floating-point or vector register is touched between the caller and the
// target, so such arguments and the target's result in them pass too; the
// integer result comes back in a 64-bit value (both registers of a 32-bit
// target's pair).
using Word = uintptr_t;
// 22 arguments of up to 64 bits: 22 words on a 64-bit target, 44 on a
// 32-bit one.
#if UINTPTR_MAX == 0xffffffffffffffffu
#define CLDMABUF_WORDS(X) \
    X(0), X(1), X(2), X(3), X(4), X(5), X(6), X(7), X(8), X(9), X(10), X(11), X(12), X(13), X(14), X(15), \
        X(16), X(17), X(18), X(19), X(20), X(21)
#else
#define CLDMABUF_WORDS(X) \
    X(0), X(1), X(2), X(3), X(4), X(5), X(6), X(7), X(8), X(9), X(10), X(11), X(12), X(13), X(14), X(15), \
        X(16), X(17), X(18), X(19), X(20), X(21), X(22), X(23), X(24), X(25), X(26), X(27), X(28), X(29), \
        X(30), X(31), X(32), X(33), X(34), X(35), X(36), X(37), X(38), X(39), X(40), X(41), X(42), X(43)
#endif
#define CLDMABUF_WORD_PARAM(n) Word a##n
#define CLDMABUF_WORD_ARG(n) a##n
#define CLDMABUF_WORD_TYPE(n) Word
using Target = uint64_t (*)(CLDMABUF_WORDS(CLDMABUF_WORD_TYPE));
using Entry = uint64_t (*)(CLDMABUF_WORDS(CLDMABUF_WORD_TYPE));

// Nothing here may call a function: a call into code built with the vector
// registers (std::atomic's members, no_imports(), a sanitizer's hooks) could
// change one an argument is in, and general-regs-only would not inline them.
// So the word and the live-import count are read and added with the
// builtins the inline helpers compile to (the same orders: epoch.hpp,
// registry.hpp), and no sanitizer instruments it.
//
// general-regs-only where floating-point or vector registers carry arguments
// or results (x86-64, AAPCS64, AAPCS-VFP).  Not on i386: every argument is on
// the stack there, Debian's i686 baseline has no SSE for the compiler to copy
// words with, and x87 is used only for floating-point arithmetic, which this
// has none of; with the attribute GCC would make the 64-bit add a call into
// libatomic.
#if defined(__i386__)
#define CLDMABUF_TRAMPOLINE_REGS
#else
#define CLDMABUF_TRAMPOLINE_REGS gnu::target("general-regs-only"),
#endif
template <int I>
[[CLDMABUF_TRAMPOLINE_REGS gnu::noinline, gnu::no_sanitize("thread", "address", "undefined")]] uint64_t
trampoline(CLDMABUF_WORDS(CLDMABUF_WORD_PARAM)) {
    auto *word = reinterpret_cast<uint64_t *>(&enqueue_epoch_detail::word);
    const auto target = reinterpret_cast<Target>(__atomic_load_n(&targets[I], __ATOMIC_ACQUIRE));
    if (__builtin_expect(__atomic_load_n(reinterpret_cast<const size_t *>(&import_registry_detail::live),
                                         __ATOMIC_RELAXED) != 0,
                         0)) {
        __atomic_fetch_add(word, kInFlightOne, __ATOMIC_ACQ_REL);  // begin_command()
        const uint64_t answer = target(CLDMABUF_WORDS(CLDMABUF_WORD_ARG));
        __atomic_fetch_add(word, kEpochOne - kInFlightOne, __ATOMIC_ACQ_REL);  // end_command()
        return answer;
    }
    __atomic_fetch_add(word, kEpochOne, __ATOMIC_ACQ_REL);  // count_landed()
    return target(CLDMABUF_WORDS(CLDMABUF_WORD_ARG));
}

static_assert(sizeof(std::atomic<uint64_t>) == sizeof(uint64_t) && sizeof(std::atomic<size_t>) == sizeof(size_t),
              "the portable trampolines use the words under the atomics");

#undef CLDMABUF_WORDS
#undef CLDMABUF_TRAMPOLINE_REGS
#undef CLDMABUF_WORD_PARAM
#undef CLDMABUF_WORD_ARG
#undef CLDMABUF_WORD_TYPE

template <int... I>
constexpr std::array<Entry, kPool> make_pool(std::integer_sequence<int, I...>) {
    return {&trampoline<I>...};
}
constexpr std::array<Entry, kPool> pool = make_pool(std::make_integer_sequence<int, kPool>{});
}  // namespace looked_up_detail

void *counted_extension(const char *name, void *fn) {
    using namespace looked_up_detail;
    if (!fn) return nullptr;
    static std::mutex mutex;
    static int used = 0;
    std::lock_guard lock(mutex);
    for (int i = 0; i < used; ++i)
        if (targets[i] == fn) return reinterpret_cast<void *>(pool[i]);
    if (used == kPool) {
        LOG_DEBUG("%s: no counting trampoline left (%d in use): handed out as the ICD's", name, kPool);
        return nullptr;
    }
    __atomic_store_n(&targets[used], fn, __ATOMIC_RELEASE);
    LOG_DEBUG("%s: the ICD's enqueue handed out behind a counting trampoline", name);
    return reinterpret_cast<void *>(pool[used++]);
}

int counted_extension_capacity() { return looked_up_detail::kPool; }

}  // namespace cldmabuf
