// Pinned staging for the copy route (imports of devices that do not share
// host memory, e.g. NVIDIA): the dma-buf's mapping is pageable memory, and
// ICDs move pageable memory far slower than pinned (page-locked) memory.
// So a buffer import's device copy is filled and written back through a
// CL_MEM_ALLOC_HOST_PTR buffer the ICD allocates (pinned where the ICD pins
// it), mapped once, in chunks: the CPU copies one chunk between the mapping
// and the staging memory while the ICD's DMA moves the previous one.
//
// Before any of that, a buffer import's mapping is offered to the ICD as
// the host memory of a CL_MEM_USE_HOST_PTR buffer (its "registration"): an
// ICD that pins such memory (NVIDIA) then moves the ICD's own Write/Read
// straight from the mapping at its pinned rate, with no CPU copy, on the
// staging's queue inside the step; only where the ICD refuses does pinned
// staging take over.  A registered import keeps its mapping's pages pinned
// for its lifetime (no device memory on NVIDIA: the buffer is never used there).
// A registered buffer's acquire takes the fast path at any size
// (layer/handoff/acquire_release.cpp).
//
// CLDMABUF_STAGING=auto (default: for devices without host-unified memory
// the registration, else pinned staging; direct for the rest) | register
// (the registration on every device, else pinned staging: for testing) |
// pinned (pinned staging always, no registration) | off (the ICD's
// Write/ReadBuffer straight from the mapping).  Images always go direct.
#pragma once

#include <cstdint>
#include <memory>

#include "layer/base/cl_compat.h"
#include "layer/core/registry.hpp"

namespace cldmabuf {

enum class StagingChoice { automatic, registered, pinned, off };
StagingChoice staging_choice();

// The staging memory and in-order queue of one (context, device), shared by
// every import that uses it; freed (on the layer's worker) with the last one.
class PinnedStaging;

// The staging `import` (a buffer import on the copy route) uses with
// `queue`'s device, made on first use and remembered on the import; nullptr
// when staging is off for this device, or when the ICD refused the staging
// (counted in stats as a staging fallback, logged once per device: the
// direct route is taken then).  A registered import gets it too: its
// transfers use the staging's queue, not its slots.
std::shared_ptr<PinnedStaging> staging_for(Import &import, cl_command_queue queue);

// dma-buf mapping -> device copy (whole buffer) and device copy -> mapping,
// through `staging`, synchronously: they run on the layer's worker inside
// the acquire/release host step, after every earlier command of the
// application's queue and before every later one.  CL_SUCCESS or the ICD's
// error (one log line).  `from`: an aliased import's snapshot
// (layer/handoff/alias_merge.hpp, note_upload), read instead of the mapping,
// through the slots even for a registered import.
cl_int staged_to_device(PinnedStaging &staging, const Import &import, const void *from = nullptr);
// The registration's own mapping of the import's dma-buf (its pages pinned
// by the ICD), or nullptr: transfers from and to it go at the ICD's pinned
// rate (counted as direct transfers).
void *registered_mapping(const Import &import);
// A transfer that outlives its wait (10 s + CLDMABUF_FENCE_TIMEOUT_MS) fails
// the step, and its slot is not used again until the ICD completed it (the
// next transfer through this staging is refused until then).  A registered
// import's Read that outlives it still writes the dma-buf's pages: its event
// goes to `still_writing` (retained, the caller's) so that the release's
// fences are signalled only once it completed.
cl_int staged_to_dmabuf(PinnedStaging &staging, const Import &import, cl_event *still_writing);
// A registered import's device copy -> its registered mapping, on the
// staging's queue after `after` (the release's marker on the application's
// queue), waited for on the calling thread: the quiet release's transfer
// (layer/handoff/acquire_release.cpp).
cl_int registered_to_dmabuf_after(PinnedStaging &staging, const Import &import, cl_event after);

}  // namespace cldmabuf
