// The enqueue epoch: how the layer knows that nothing came between two
// commands of its own on a queue (layer/blit/fence_chain.hpp chains a
// semaphore wait to the blitter copy right after it only then).
//
// The layer sees only what passes through its dispatch slots.  So every
// clEnqueue* slot of the table goes through the layer (the pass-throughs in
// layer/enqueue_passthrough.cpp, the overrides where they hand a command to
// the ICD), and each bumps one process-wide counter before the command goes
// down.  Two commands of the layer read the counter at their enqueue: the
// same value means no application enqueue the layer does not chain came
// between them, on any queue of the process.
//
// Why relaxed and why this is enough: a command the application enqueues
// after the wait returned (ordered after it by the application's own
// synchronisation) bumps the counter after the wait read it, and if it lands
// in the queue before the copy, the ICD's queue lock orders its bump before
// the copy's read, which the copy makes only once its own step is in the
// queue.  A command racing the wait's enqueue on another thread may land on
// either side of it; the application cannot rely on its order either way.
//
// What the counter cannot see: an extension enqueue the ICD hands out by
// name (clGetExtensionFunctionAddress*), which the application calls
// directly.  The lookup is seen, though: note_unseen_enqueue() turns the
// chain's automatic mode off for the rest of the process.
#pragma once

#include <atomic>
#include <cstdint>

static_assert(sizeof(std::atomic<uint64_t>) == sizeof(uint64_t) && std::atomic<uint64_t>::is_always_lock_free);

namespace cldmabuf {

namespace enqueue_epoch_detail {
// Hidden: the pass-throughs address it relative to the code (one instruction).
extern std::atomic<uint64_t> count __attribute__((visibility("hidden")));
extern std::atomic<bool> unseen __attribute__((visibility("hidden")));
}  // namespace enqueue_epoch_detail

#if defined(__SANITIZE_THREAD__)
#define CLDMABUF_EPOCH_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CLDMABUF_EPOCH_TSAN 1
#endif
#endif

// An application enqueue that is not one of the layer's chainable commands,
// counted before it goes to the ICD.
inline void count_enqueue() {
#if defined(__x86_64__) && !defined(CLDMABUF_EPOCH_TSAN)  // TSan: the builtin, so it sees the write
    // The same locked add fetch_add(relaxed) compiles to, but GCC 12 treats
    // the builtin as touching all memory and copies a pass-through's stack
    // arguments (those past the sixth) out and back around it: six
    // instructions more on NDRange, ReadImage and the SVM enqueues.  This
    // names the one word it changes.
    asm volatile("lock addq $1, %0" : "+m"(*reinterpret_cast<uint64_t *>(&enqueue_epoch_detail::count)));
#else
    enqueue_epoch_detail::count.fetch_add(1, std::memory_order_relaxed);
#endif
}

inline uint64_t enqueue_epoch() { return enqueue_epoch_detail::count.load(std::memory_order_relaxed); }

// The application was handed an enqueue function the layer does not see
// (`name`, for the log line): logged once at debug, then unseen_enqueues()
// stays true for the process.
void note_unseen_enqueue(const char *name);
inline bool unseen_enqueues() { return enqueue_epoch_detail::unseen.load(std::memory_order_relaxed); }

// Whether an extension function the next table handed out for `name` is an
// enqueue the layer does not see: a clEnqueue* name other than the
// "ICD-aware" ones the loaders answer with their own dispatcher, which calls
// the layer's slot (clEnqueueAcquire/ReleaseEGLObjectsKHR).  Pure: unit-tested.
bool unseen_enqueue_name(const char *name);

}  // namespace cldmabuf
