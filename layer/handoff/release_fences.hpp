// Release's fence in the dma-buf: a release that goes the
// queued way puts a layer fence into each written import's dma-buf as its
// writer at enqueue (layer/sync/dmabuf_bridge.hpp), so implicit-sync
// consumers wait until the release step ran; the step signals it when its
// work is done, whatever its result.  Nothing is attached (the release
// behaves as before) for:
//   * CL_MEM_READ_ONLY imports: the device wrote nothing;
//   * tiled-shadow imports: the release's re-tile is a blitter execbuffer
//     on that dma-buf, which would wait for the fence (implicit sync);
//   * an import an earlier layer step has not finished with that waits for
//     the dma-buf's fences when it runs (a map, a blitter copy, a tiled
//     shadow's step; host_steps_unfinished_on counts them apart from
//     acquires, and counts an earlier release with them although its
//     SYNC END waits for nothing): the release's fence would hold it until
//     the timeout.  Counted over every import of the dma-buf: its fences
//     are one (layer/core/dmabuf_aliases.hpp);
//   * (not attached now, but later) a dma-buf with a queued acquire, through
//     any of its imports, that has not run its opening and that the release
//     may wait for (the pipelined acquire + kernel + release; what each
//     command may wait for is layer/core/command_dependencies.hpp): the
//     fence is handed to those acquires, and the last to do its SYNC START
//     attaches it (layer/handoff/acquire_opening.hpp).  SYNC START waits for
//     every fence of the dma-buf, so a fence attached before would hold the
//     acquire until the release ran: a cycle.  An unopened acquire the
//     release does not wait for takes no hand-over: the fence goes in now
//     and that acquire's fence wait orders it after the release;
//   * the fast path (the release is done at once);
//   * CLDMABUF_EXPLICIT_FENCES=off, no fence source (sw_sync or vgem), or a
//     dma-buf that refused IMPORT_SYNC_FILE once (not asked again; logged
//     once at debug level).
#pragma once

#include <memory>
#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/core/icd_ref.hpp"
#include "layer/core/registry.hpp"
#include "layer/sync/dmabuf_bridge.hpp"

namespace cldmabuf {

using ReleaseFences = std::vector<std::shared_ptr<sync::DmabufSignal>>;

// For a release about to be enqueued on `queue` with that wait list.
ReleaseFences attach_release_fences(const std::vector<std::shared_ptr<Import>> &list, cl_command_queue queue,
                                    cl_uint num_events, const cl_event *wait_list);
// Signals every fence (the release step's last act).
void signal_release_fences(const ReleaseFences &fences);
// The same, once every event of `writers` completed (released then): a
// failed release whose write-back outlived its wait still
// writes the dma-buf, and a consumer let in by the fence would read
// half-written bytes.  The failure is on the release's event at once; the
// fence stays pending while the ICD writes (the fence's own deadline, the
// watchdog, still bounds it).
void signal_release_fences_after(const ReleaseFences &fences, IcdEvents writers);

}  // namespace cldmabuf
