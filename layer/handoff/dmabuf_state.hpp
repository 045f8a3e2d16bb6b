// One object per dma-buf, holding everything the handoff knows about that
// memory, keyed as the layer keys dma-bufs (layer/core/dmabuf_aliases.hpp:
// the file's device and inode).  Its state and transitions are the pure
// DmabufState / dmabuf_step (layer/handoff/dmabuf_transitions.hpp, read it
// first); this object adds what those ids stand for — each view's snapshot
// bytes, each hand-over's fence, each opening's step — and one lock.
//
// Imports are views onto it: an import's handoff knows nothing of the
// dma-buf that this object does not hold.  What stays per import is what
// only that import has: its own device copy and the ICD objects over it
// (pinned staging, a tiled image's shadow, the blitter's GEM handle), its
// fds and its mapping (the failed-acquire shield detaches that mapping).
//
// The lock: everything under it is bookkeeping, a zero-timeout poll, an
// event status query or a memcpy of the mapping (a snapshot, a merge).  No
// kernel call that can wait (DMA_BUF_IOCTL_SYNC, a fence wait with a
// timeout), no clWaitForEvents or clFinish: the callers take the actions a
// transition returns and carry out those that can wait after unlocking.
//
// Records live while a view or an opening does; the import's teardown
// (forget_import_state, before its fds close) removes its view, retires its
// openings and abandons the fences handed to them.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "layer/core/command_dependencies.hpp"
#include "layer/core/registry.hpp"
#include "layer/handoff/dmabuf_transitions.hpp"
#include "layer/sync/dmabuf_bridge.hpp"

namespace cldmabuf {

class AcquireOpening;

// A hand-over whose release may wait for a user event: what the release
// waits for, and a dup of its import's fd for the fence to go in through
// once the event ended (layer/handoff/acquire_opening.cpp, narrowing).
struct WideHandOver {
    WideHandOver(MayWaitFor w, int dup_fd) : waits(std::move(w)), fd(dup_fd) {}
    ~WideHandOver();
    WideHandOver(const WideHandOver &) = delete;
    WideHandOver &operator=(const WideHandOver &) = delete;
    MayWaitFor waits;
    int fd;
};

struct DmabufRecord {
    std::mutex mutex;
    std::condition_variable changed;  // an opening left opening or opening_ahead (actions.wake)
    DmabufState state;
    // What the state's ids stand for.  Under `mutex`.
    // A view's snapshot (armed), which its upload reads (alias_merge.hpp,
    // upload_source): sized once, it never moves while the view lives.
    std::unordered_map<ViewId, std::vector<uint8_t>> uploaded;
    std::unordered_map<DmabufId, std::shared_ptr<sync::DmabufSignal>> fences;  // a hand-over's fence
    std::unordered_map<DmabufId, std::weak_ptr<AcquireOpening>> openings;    // an opening's step
    std::unordered_map<DmabufId, std::unique_ptr<WideHandOver>> wide;        // a hand-over to narrow
    // Applies `event` (under `mutex`): the state moves on, the fences of
    // abandoned hand-overs are forgotten (their releases signal them), the
    // fences of completed ones are moved into `attach` for the caller to
    // attach after unlocking, and waiters are woken when asked.
    DmabufActions apply(const DmabufEvent &event, std::vector<std::shared_ptr<sync::DmabufSignal>> *attach = nullptr);
};

// The record of `import`'s dma-buf, `import` met as one of its views.
std::shared_ptr<DmabufRecord> dmabuf_record(const Import &import);

// `fn` for every dma-buf's record, none of their locks held.
void for_each_dmabuf_record(void (*fn)(DmabufRecord &));

// Uploaded on acquire and written back on release: the copy route, neither
// READ_ONLY nor WRITE_ONLY, not a tiled shadow (layer/handoff/transfers.hpp,
// copied_in/copied_out).  Only such a view keeps snapshots; the one test of
// the route the dma-buf's state needs, asked before taking its lock.
bool copied_both_ways(const Import &import);

// The view id of an import.
inline ViewId view_id(const Import &import) { return reinterpret_cast<uintptr_t>(&import); }

}  // namespace cldmabuf
