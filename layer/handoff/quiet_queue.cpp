#include "layer/handoff/quiet_queue.hpp"

#include <mutex>

#include "layer/enqueue_epoch.hpp"

namespace cldmabuf {
namespace {

// A mutex, not two atomics: a torn pair (one queue's handle with another's
// epoch) could claim quiet for a queue that never was.  Taken once per
// clFinish and handoff, next to system calls and ICD calls.
struct QuietRecord {
    std::mutex mutex;
    cl_command_queue queue = nullptr;
    uint64_t epoch = 0;
};

QuietRecord &record() {
    static QuietRecord *r = new QuietRecord;  // never destroyed: clFinish may come from a late destructor
    return *r;
}

}  // namespace

void note_quiet_queue(cl_command_queue queue, uint64_t epoch) {
    QuietRecord &r = record();
    std::lock_guard lock(r.mutex);
    // A later epoch only: two threads noting at once must not leave the
    // older point standing for the newer one.
    if (r.queue == queue && r.epoch > epoch) return;
    r.queue = queue;
    r.epoch = epoch;
}

bool queue_still_quiet(cl_command_queue queue, uint64_t epoch_after_own_count) {
    if (unseen_enqueues() || queue == nullptr) return false;
    QuietRecord &r = record();
    std::lock_guard lock(r.mutex);
    return r.queue == queue && r.epoch + 1 == epoch_after_own_count;
}

}  // namespace cldmabuf
