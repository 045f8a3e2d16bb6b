// After an acquire failed in side-table mode (layer/core/failed_events.hpp), the
// ICD's commands behind it still run: the layer cannot terminate them.  What
// it can do before the step's gate opens is take the dma-buf away from them:
// the import's mapping (the pages a zero-copy ICD uses in place, and what a
// copy-route import's Write reads from and its release's Read writes into)
// is replaced with anonymous zero pages (mmap MAP_FIXED over the same
// addresses).  The commands behind then run on those pages, never on the
// dma-buf's unsynchronised bytes, and nothing they write reaches the dma-buf.
//
// The dma-buf's mapping comes back once every queue whose failure fenced the
// import off has been drained by clFinish (the layer's clFinish reports the
// failure then), at the import's next acquire on another queue (which first
// waits for a marker on each of those queues: every command enqueued there
// before it has finished), or at the import's teardown.
//
// What it cannot do: the commands' events still report CL_COMPLETE (only the
// acquire's event, clFinish and the layer's later steps report the failure),
// and an ICD that pinned the pages at import (a GPU's userptr) keeps using
// the dma-buf's pages.  Tiled images (their ICD object lives over the
// blitter's shadow, which a failed de-tile leaves untouched) and the copy
// route's registered mappings (NVIDIA, which propagates) are not shielded.
#pragma once

#include <vector>

#include "layer/base/cl_compat.h"

namespace cldmabuf {

struct Import;

// Fences `import` off for the commands of `queue` behind its failed acquire.
// Idempotent per (import, queue).  False when the mapping could not be
// replaced (logged) or the import has no mapping to replace.
bool shield_import(Import &import, cl_command_queue queue);
// `queue` ran dry (clFinish returned): imports fenced off by it alone get
// their dma-buf mapping back.
void queue_drained(cl_command_queue queue);
// Whether `import` is fenced off now.
bool import_shielded(const Import &import);
// The queues whose commands behind a failed acquire may still run on
// `import`'s detached pages (empty when it is not fenced off).
std::vector<cl_command_queue> shield_queues(const Import &import);
// An acquire on `queue`, after markers on `drained` completed: when every
// queue of the import's shield is `queue` or in `drained`, the dma-buf is
// mapped again and true returned; false when it stays fenced off (a
// failure on another queue came since: logged).  True when not fenced off.
bool reattach_import(const Import &import, cl_command_queue queue, const std::vector<cl_command_queue> &drained);
// Cheap check: any import fenced off.
bool any_import_shielded();

}  // namespace cldmabuf
