#include "layer/queue/looked_up.hpp"

#include <array>
#include <mutex>
#include <utility>

#include "layer/base/log.hpp"
#include "layer/queue/epoch.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {

#if defined(__x86_64__)

namespace looked_up_detail {
constexpr int kPool = 256;
// Each trampoline's target, written once before the trampoline is handed
// out (the application's own hand-off of the pointer orders the write
// before any call), never changed after.
void *targets[kPool] __attribute__((visibility("hidden")));

// %r11 holds the trampoline's index: a scratch register that carries no
// argument in the SysV ABI (neither does %r10; %al, the vector count of a
// variadic call, is left alone).

// In flight until the ICD's function returns: a frame with 16 stack words
// of arguments copied (reading past the caller's own arguments reads its
// frame, which is there), the call, the end.
[[gnu::naked, gnu::no_sanitize("thread", "address", "undefined")]] void tracked_common() {
    asm("lock addq $1, %c0(%%rip)\n\t"              // begin_command()
        "push %%rbp\n\t"
        "mov %%rsp, %%rbp\n\t"
        "sub $144, %%rsp\n\t"                        // 16 words + the index, 16-byte aligned
        "mov %%r11, 128(%%rsp)\n\t"
        "xor %%r10d, %%r10d\n"
        "1:\n\t"
        "mov 16(%%rbp,%%r10,8), %%r11\n\t"
        "mov %%r11, (%%rsp,%%r10,8)\n\t"
        "inc %%r10\n\t"
        "cmp $16, %%r10\n\t"
        "jb 1b\n\t"
        "mov 128(%%rsp), %%r11\n\t"
        "lea %c1(%%rip), %%r10\n\t"
        "call *(%%r10,%%r11,8)\n\t"                  // the ICD's function
        "lock addq %2, %c0(%%rip)\n\t"               // end_command(): %rax/%rdx/%xmm0 kept
        "leave\n\t"
        "ret"
        :
        : "i"(&enqueue_epoch_detail::word), "i"(&targets), "i"(kEpochOne - kInFlightOne));
}

// No import alive: counted as landed, then a jump with nothing touched.
[[gnu::naked, gnu::no_sanitize("thread", "address", "undefined")]] void common() {
    asm("cmpq $0, %c0(%%rip)\n\t"
        "jne %P1\n\t"
        "lock addq %2, %c3(%%rip)\n\t"  // count_landed()
        "lea %c4(%%rip), %%r10\n\t"
        "jmp *(%%r10,%%r11,8)"
        :
        : "i"(&import_registry_detail::live), "i"(&tracked_common), "i"(kEpochOne),
          "i"(&enqueue_epoch_detail::word), "i"(&targets));
}

template <int I>
[[gnu::naked, gnu::no_sanitize("thread", "address", "undefined")]] void trampoline() {
    asm("movl %0, %%r11d\n\t"
        "jmp %P1"
        :
        : "i"(I), "i"(&common));
}

template <int... I>
constexpr std::array<void (*)(), kPool> make_pool(std::integer_sequence<int, I...>) {
    return {&trampoline<I>...};
}
constexpr std::array<void (*)(), kPool> pool = make_pool(std::make_integer_sequence<int, kPool>{});
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
    targets[used] = fn;
    LOG_DEBUG("%s: the ICD's enqueue handed out behind a counting trampoline", name);
    return reinterpret_cast<void *>(pool[used++]);
}

int counted_extension_capacity() { return looked_up_detail::kPool; }

#else

void *counted_extension(const char *, void *) { return nullptr; }
int counted_extension_capacity() { return 0; }

#endif

}  // namespace cldmabuf
