// The quiet queue: the one command queue the layer last saw with nothing of
// the application's left to run, and the enqueue epoch then
// (layer/enqueue_epoch.hpp).  While the epoch has not moved since, no
// command went to any queue of the process, so a handoff on that queue has
// nothing to wait for and need not ask its marker (issue #18: on a slow ICD,
// rusticl or PoCL under the VM lane's TCG, a marker completes hundreds of
// microseconds after its flush, past the fast path's watch, and a round of
// acquire + release + clFinish then cost three times the floor).
//
// What makes a queue quiet (note_quiet_queue):
//   - clFinish returned CL_SUCCESS (the epoch read before it: a command
//     counted after that read may be after the finish);
//   - a fast handoff found every earlier command of the queue complete
//     (its marker, watched), or was itself quiet: its work is done when it
//     returns.  What it leaves in the queue are the layer's own commands, a
//     marker and on the copy route the ICD's Write from the mapping, which
//     a release's blocking Read follows in queue order.
// The same reasoning as the epoch's: a command the application enqueues
// after the quiet point, ordered after it by the application, bumps the
// epoch; one racing it on another thread may be on either side, and the
// application cannot rely on its order either way.
//
// One record, not one per queue: a program that alternates queues loses the
// shortcut (its handoffs watch their markers as before), never correctness.
#pragma once

#include <cstdint>

#include "layer/cl_compat.h"

namespace cldmabuf {

// `queue` had nothing unfinished of the application's at `epoch`.
void note_quiet_queue(cl_command_queue queue, uint64_t epoch);

// Whether `queue` is still quiet for a command of the layer that counted
// itself once (layer/entry_chains.cpp) and read enqueue_epoch() afterwards
// as `epoch_after_own_count`: the record is this queue's, nothing else was
// counted since, and no enqueue escapes the count (unseen_enqueues()).
bool queue_still_quiet(cl_command_queue queue, uint64_t epoch_after_own_count);

}  // namespace cldmabuf
