// The copy route's transfers of a handoff (layer/handoff/acquire_release.cpp):
// which imports move which way, the ICD's Write/Read from the mapping (or
// the registered one, layer/handoff/staging.hpp), and the fast path's
// device copies done at once on the caller's thread.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/handoff/staging.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {

using ImportList = std::vector<std::shared_ptr<Import>>;
class ReleaseWriteBack;
// One release command's write-back of each import of its list (alias_merge.hpp), in the list's order.
using WriteBackList = std::vector<std::shared_ptr<ReleaseWriteBack>>;

// Device copies of Route::copy imports: whole buffers, or for images the
// pixels at the plane's offset with the dma-buf's own pitches.
size_t copy_bytes(const Import &import);
// The device reads the object: its copy must hold the dma-buf's bytes.
bool copied_in(const Import &import);
// The device may write the object: the dma-buf must get its bytes back.
bool copied_out(const Import &import);

// The pinned staging of each import where it takes that route, else nullptr.
using StagingList = std::vector<std::shared_ptr<PinnedStaging>>;
StagingList stagings_of(const ImportList &list, cl_command_queue queue, bool (*moves)(const Import &));

void count_copy(const Import &import, bool staged, std::atomic<uint64_t> &direction);

// `from`: where the bytes come from instead of the dma-buf (an aliased
// import's snapshot, layer/handoff/alias_merge.hpp), with the same layout.
cl_int copy_to_device(cl_command_queue queue, const Import &import, cl_uint n, const cl_event *waits,
                      cl_event *done, const void *from = nullptr);
// `into`: where the bytes go instead of the dma-buf (the merge's scratch of
// an aliased import, layer/handoff/alias_merge.hpp), with the same layout.
cl_int copy_to_dmabuf(cl_command_queue queue, const Import &import, cl_uint n, const cl_event *waits,
                      cl_event *done, cl_bool blocking = CL_FALSE, void *into = nullptr);

// Copy-route imports up to this size take the fast path.
constexpr size_t fast_copy_limit = size_t{1} << 20;
// Above it: never a fast transfer (an image, or a buffer without a registration).
bool slow_transfer(const Import &import);
// Above it, a registered buffer: fast on acquire, or on release on the quiet queue.
bool large_registered_transfer(const Import &import);

// The fast acquire's device copies (see the .cpp); *command becomes the
// event that completes after all of them.
cl_int fast_copies_in(cl_command_queue queue, const ImportList &list, cl_event *command);
// The fast release's device copies, read back at once before SYNC END.
cl_int fast_copies_out(cl_command_queue queue, const ImportList &list, const WriteBackList &write_backs,
                       cl_event marker);

}  // namespace cldmabuf
