// The copy route with two imports of one dma-buf: the release of an aliased
// import writes back only the bytes its device changed.  The rule and its
// states are pure functions in layer/handoff/copy_cycle.hpp (read it first);
// each import's cycle is a view of its dma-buf's state
// (layer/handoff/dmabuf_state.hpp), which also keeps the snapshots; this
// file takes the snapshots and merges as that state's transitions say.
//
// When the alias appears matters; each case keeps the invariant:
// - before the acquire ran: the acquire sees it and keeps its snapshot;
// - after the acquire ran, before its release ran ("late aliases": the
//   import was alone when it uploaded): the new import's creation
//   snapshots it then (layer/core/dmabuf_aliases.hpp's listener).  While it
//   is acquired nothing else writes the dma-buf (no other import existed to
//   release into it, and the external side waits for the release), so the
//   dma-buf still holds what it uploaded;
// - the release was enqueued before the acquire ran (pipelined, or both
//   behind a wait list): the release's destination is decided when it is
//   enqueued (decide_release), what the acquire keeps when it runs; each
//   release command has its own scratch, so pipelined releases never share
//   one.  A scratch release whose acquire kept no snapshot (the alias went
//   away meanwhile) writes its device copy back whole from the scratch.
// Not covered, and why:
// - an alias made after a release was enqueued direct: that release's Read
//   goes straight into the dma-buf, whole (tests/unit/test_copy_cycle_explorer.cpp
//   counts the orders that meet this case and checks nothing else is excused);
// - CL_MEM_WRITE_ONLY imports are not uploaded, so there is nothing to
//   compare with: written back whole;
// - tiled images (layer/blit/tiled_shadow.hpp) go through their linear
//   shadow and the blitter's re-tile, not through these transfers;
// - imports of the dma-buf in another process: the layer sees only its own;
// - an alias made after a queued acquire was enqueued alone, whose own
//   release writes the dma-buf before that acquire's Write runs: the Write
//   reads the dma-buf, not the snapshot.
// Only aliased imports pay (a snapshot, a scratch and a compare of their
// size); an import alone on its dma-buf is written back whole, as before.
#pragma once

#include <cstddef>
#include <memory>

#include "layer/core/registry.hpp"

namespace cldmabuf {

// Where the device copy's bytes sit on the host: the buffer's mapping (or the
// ICD's registration of it, layer/handoff/staging.hpp), or the image's pixels
// at the plane offset.
void *copy_route_host(const Import &import);

// Acquire, CPU bracket open, before the upload of a copy-route import that
// the device reads: the import is held; aliased (or `from_snapshot`), it
// keeps the bytes about to be uploaded.  Returns where it kept them (the
// import's snapshot, upload_source's) or nullptr: the upload reads them from
// there, not from the dma-buf.  The upload is an ICD command that runs
// later, and another import's release may write the dma-buf before it does:
// read from the dma-buf, the device copy would differ from the snapshot, and
// the merge would write the other import's bytes back as they were when the
// upload ran.
const void *note_upload(const Import &import, bool from_snapshot = false);

// Acquire, when its upload command is enqueued ahead of the step that calls
// note_upload (the queued path's Write behind the gate): for a copy-route
// import copied both ways that is aliased now, the storage of its snapshot,
// which the Write reads and note_upload(import, true) fills (the same
// bytes, at the same offsets as the dma-buf's); else nullptr (the Write
// reads the dma-buf).  The storage is one per import, sized once, and lives
// until the import's teardown, after the ICD destroyed its buffer: it
// outlives the command.
const void *upload_source(const Import &import);

// One release command's write-back of one import: where its Read goes.
class ReleaseWriteBack;

// Release, once per import when the command is enqueued: nullptr for an
// import that is not copied both ways (its Read goes into the dma-buf).
std::shared_ptr<ReleaseWriteBack> decide_release(const Import &import);

// Where the command's Read{Buffer,Image} puts the device copy instead of
// copy_route_host(): its own scratch with the same layout (pitches), or
// nullptr (the Read goes into the dma-buf).
void *release_scratch(const ReleaseWriteBack *write_back);

// The release ran (its Read completed; `apply` false after a failed command
// before it): a scratch write-back merges the bytes that differ from the
// snapshot into the dma-buf (or, with no snapshot, copies the scratch
// whole); the import is no longer held.  Called for every import the
// release copied back.  Returns the bytes merged.
size_t finish_release(const Import &import, const ReleaseWriteBack *write_back, bool apply = true);

}  // namespace cldmabuf
