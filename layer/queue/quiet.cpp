#include "layer/queue/quiet.hpp"

#include <mutex>

namespace cldmabuf {
namespace {

// A mutex, not two atomics: a torn pair (one queue's handle with another's
// word) could claim quiet for a queue that never was.  Taken once per
// clFinish and handoff, next to system calls and ICD calls.
struct QuietRecord {
    std::mutex mutex;
    cl_command_queue queue = nullptr;
    uint64_t point = 0;  // the word once the recorder's own commands ended: no command in flight
};

QuietRecord &record() {
    static QuietRecord *r = new QuietRecord;  // never destroyed: clFinish may come from a late destructor
    return *r;
}

}  // namespace

bool note_quiet_queue(cl_command_queue queue, EpochWord word, uint64_t own_in_flight) {
    if (queue == nullptr || word.in_flight() < own_in_flight) return false;
    // The word once the recorder's own commands have ended (each adds
    // kEpochOne - 1): the point a later handoff compares with.
    const uint64_t point = word.raw + own_in_flight * (kEpochOne - kInFlightOne);
    QuietRecord &r = record();
    std::lock_guard lock(r.mutex);
    // A later point only: two threads noting at once must not leave the
    // older point standing for the newer one.
    if (r.queue == queue && r.point > point) return false;
    r.queue = queue;
    r.point = point;
    return true;
}

bool queue_still_quiet(cl_command_queue queue, EpochWord word_after_own_begin) {
    if (unseen_enqueues() || queue == nullptr) return false;
    QuietRecord &r = record();
    std::lock_guard lock(r.mutex);
    return r.queue == queue && r.point + kInFlightOne == word_after_own_begin.raw;
}

}  // namespace cldmabuf
