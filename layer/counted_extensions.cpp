#include "layer/counted_extensions.hpp"

#include <array>
#include <mutex>
#include <utility>

#include "layer/enqueue_epoch.hpp"
#include "layer/log.hpp"

namespace cldmabuf {

#if defined(__x86_64__) && !defined(CLDMABUF_EPOCH_TSAN)

namespace counted_extension_detail {
constexpr int kPool = 16;
// Each trampoline's target, written once before the trampoline is handed
// out (the application's own hand-off of the pointer orders the write
// before any call), never changed after.
void *targets[kPool] __attribute__((visibility("hidden")));

// Naked: no compiler option can put a frame between the count and the jump.
template <int I>
[[gnu::naked]] void trampoline() {
    asm("lock addq $1, %c0(%%rip)\n\t"  // count_enqueue()
        "jmp *%c1(%%rip)"                // the ICD's function, its arguments as they came
        :
        : "i"(&enqueue_epoch_detail::count), "i"(&targets[I]));
}

template <int... I>
constexpr std::array<void (*)(), kPool> make_pool(std::integer_sequence<int, I...>) {
    return {&trampoline<I>...};
}
constexpr std::array<void (*)(), kPool> pool = make_pool(std::make_integer_sequence<int, kPool>{});
}  // namespace counted_extension_detail

void *counted_extension(const char *name, void *fn) {
    using namespace counted_extension_detail;
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

int counted_extension_capacity() { return counted_extension_detail::kPool; }

#else

void *counted_extension(const char *, void *) { return nullptr; }
int counted_extension_capacity() { return 0; }

#endif

}  // namespace cldmabuf
