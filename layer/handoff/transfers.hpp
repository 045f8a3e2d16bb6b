// The device copy's transfers of one import in each step of a handoff: the
// copy route's (layer/handoff/route_copy.cpp), and a tiled shadow's whose
// ICD keeps its own copy of the shadow (route_tiled_shadow.cpp).  The ICD's
// Write/Read from the mapping (or the registered one, or through pinned
// staging: layer/handoff/staging.hpp), and on the fast path the transfers
// done at once on the caller's thread.  Each step does nothing where the
// device does not read the object (the upload: CL_MEM_WRITE_ONLY) or does
// not write it (the write-back: CL_MEM_READ_ONLY).
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/core/registry.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/handoff/handoff_route.hpp"

namespace cldmabuf {

using ImportList = std::vector<std::shared_ptr<Import>>;

// Device copies: whole buffers, or for images the pixels at the plane's
// offset with the dma-buf's own pitches (a tiled import's: its shadow's).
size_t copy_bytes(const Import &import);
// Of an import with a device copy: the device reads the object, so its copy
// must hold the dma-buf's bytes (uploaded at acquire).
bool copied_in(const Import &import);
// The device may write the object: the dma-buf gets its bytes back at release.
bool copied_out(const Import &import);

void count_copy(const Import &import, bool staged, std::atomic<uint64_t> &direction);

// `from`: where the bytes come from instead of the dma-buf (an aliased
// import's snapshot, layer/handoff/alias_merge.hpp), with the same layout.
cl_int copy_to_device(cl_command_queue queue, const Import &import, cl_uint n, const cl_event *waits,
                      cl_event *done, const void *from = nullptr);
// `into`: where the bytes go instead of the dma-buf (the merge's scratch of
// an aliased import, layer/handoff/alias_merge.hpp), with the same layout.
cl_int copy_to_dmabuf(cl_command_queue queue, const Import &import, cl_uint n, const cl_event *waits,
                      cl_event *done, cl_bool blocking = CL_FALSE, void *into = nullptr);

// Device copies up to this size take the fast path: 1 MiB (1 KiB with
// CLDMABUF_DEBUG=small-copy-limit, so that the explorer's imports reach the
// large transfers' ways).
size_t fast_copy_limit();
// Above it: never a fast transfer (an image, or a buffer without a registration).
bool slow_transfer(const Import &import);
// Above it, a registered buffer: fast on acquire, or on release on the quiet queue.
bool large_registered_transfer(const Import &import);

// The steps of HandoffRoute (layer/handoff/handoff_route.hpp) of the same names.
cl_int upload_at_once(cl_command_queue queue, const Import &import, cl_event *done);
void prepare_upload(Import &import, cl_command_queue queue, AcquireSlot *slot);
cl_int upload_in_step(Import &import, const AcquireSlot &slot);
cl_int upload_behind_gate(cl_command_queue queue, const Import &import, const AcquireSlot &slot, cl_event gate,
                          cl_event *done);
cl_int write_back_at_once(cl_command_queue queue, Import &import, const ReleaseSlot &slot, cl_event marker);
void prepare_write_back(Import &import, cl_command_queue queue, ReleaseSlot *slot);
cl_int write_back_before_step(cl_command_queue queue, const Import &import, const ReleaseSlot &slot, cl_uint n,
                              const cl_event *waits, cl_event *done);
void write_back_in_step(Import &import, const ReleaseSlot &slot, cl_int *result, IcdEvents *still_writing);

// The fast acquire's uploads, one event each (released here): *command
// becomes the event that completes after all of them, what it held is
// released (see the .cpp).  Nothing uploaded: *command unchanged.
cl_int join_uploads(cl_command_queue queue, IcdEvents &uploads, IcdEvent *command);

}  // namespace cldmabuf
