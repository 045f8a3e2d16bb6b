#include "layer/queue/epoch.hpp"

#include <cstring>

#include "layer/base/log.hpp"

namespace cldmabuf {

namespace enqueue_epoch_detail {
std::atomic<uint64_t> word{0};
std::atomic<bool> unseen{false};
}  // namespace enqueue_epoch_detail

bool unseen_enqueue_name(const char *name) {
    if (!name || std::strncmp(name, "clEnqueue", 9) != 0) return false;
    // Both loaders answer these names with their own dispatcher (ocl-icd's
    // function list of KHR names, the Khronos loader's ICD-aware
    // extensions), which jumps through the dispatch table: the layer's slot.
    // The D3D/DX9 slots have no function type on Linux and are never called.
    static const char *const through_the_table[] = {"clEnqueueAcquireEGLObjectsKHR",
                                                   "clEnqueueReleaseEGLObjectsKHR"};
    for (const char *seen : through_the_table)
        if (!std::strcmp(name, seen)) return false;
    return true;
}

void note_unseen_enqueue(const char *name) {
    if (enqueue_epoch_detail::unseen.exchange(true, std::memory_order_relaxed)) return;
    LOG_DEBUG("%s: the application calls this enqueue without the layer seeing it; semaphore waits and signals "
              "are no longer chained to blitter copies automatically (CLDMABUF_BLT_SEMAPHORE_FENCES=auto)",
              name);
}

}  // namespace cldmabuf
