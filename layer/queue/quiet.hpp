// The quiet queue: the one command queue the layer last saw with nothing of
// the application's left to run, and the enqueue word then
// (layer/queue/epoch.hpp).  While the word has moved only by the handoff's
// own begin since, no command entered or left any queue of the process, so a
// handoff on that queue has nothing to wait for and need not ask its marker
// (on a slow ICD, rusticl or PoCL under the VM lane's TCG, a marker completes
// hundreds of microseconds after its flush, past the fast path's watch, and
// a round of acquire + release + clFinish that asked it would cost three
// times the ICD's floor).
//
// What makes a queue quiet (note_quiet_queue):
//   - clFinish returned CL_SUCCESS (the word read before it);
//   - a fast handoff found every earlier command of the queue complete (its
//     marker, watched), or was itself quiet.  What it leaves in the queue
//     are the layer's own commands, a marker and on the copy route the
//     ICD's Write from the mapping, which a release's blocking Read follows
//     in queue order.
//
// The invariant (docs/layer-rules.md, "The queue protocol"): a handoff is
// quiet only when the word it reads after its own begin equals the record's
// point + its own begin: no application command began or ended since the
// point.  A command in flight at the point (another thread's kernel, counted
// but not yet in the queue when clFinish read the word) either
// ended since, and the word moved, or has not returned to its caller yet, so
// the application cannot have ordered it before the handoff and may not rely
// on either order.
//
// One record, not one per queue: a program that alternates queues loses the
// shortcut (its handoffs then watch their markers), never correctness.
#pragma once

#include <cstdint>

#include "layer/base/cl_compat.h"
#include "layer/queue/epoch.hpp"

namespace cldmabuf {

// `queue` had nothing unfinished of the application's at `word`, of which
// `own_in_flight` commands (0 for clFinish, 1 for a handoff) are the
// recorder's own and end without leaving anything to wait for.  Returns
// whether it recorded.
bool note_quiet_queue(cl_command_queue queue, EpochWord word, uint64_t own_in_flight);

// Whether `queue` is still quiet for a handoff that began its own command
// (layer/entry/entry_chains.cpp) and read the word afterwards as `word_after_own_begin`:
// the record is this queue's, nothing else began or ended since, and no
// enqueue escapes the count (unseen_enqueues()).
bool queue_still_quiet(cl_command_queue queue, EpochWord word_after_own_begin);

}  // namespace cldmabuf
