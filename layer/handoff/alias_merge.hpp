// The copy route with two imports of one dma-buf (issue #32).
//
// An import on the copy route works on its own device copy: the acquire
// uploads the dma-buf's bytes into it, the release writes it back.  Where
// another import of the same dma-buf is alive (layer/core/dmabuf_aliases.hpp),
// a whole write-back would put this copy's stale bytes over what the other
// import wrote meanwhile (acquire both, write through the first, release
// both: the second's unchanged copy undid the first's write).
//
// The invariant: the release of an aliased copy-route import writes into the
// dma-buf exactly the bytes its device copy holds that differ from what its
// acquire uploaded; every other byte of the dma-buf is left as it is.  So
// the acquire keeps what it uploaded (a snapshot, taken with the CPU access
// bracket open, right before the upload reads the same bytes), the release
// reads the device copy into a scratch buffer instead of the dma-buf, and
// the merge writes only the differing bytes.  Exact, byte by byte: no
// digest that a change could collide with.  Two imports that both change
// one byte: the later release's value stays (as two writers of one buffer).
//
// Only aliased imports pay for it (a snapshot and a compare of their size);
// an import alone on its dma-buf is written back whole, as before.
//
// When the alias appears matters; each case keeps the invariant:
// - before the acquire ran: the acquire sees it and keeps its snapshot;
// - after the acquire ran, before the release was enqueued ("late
//   aliases": the import was alone when it uploaded): the new import's
//   creation snapshots it then (layer/core/dmabuf_aliases.hpp's listener).
//   While it is acquired nothing else writes the dma-buf (no other import
//   existed to release into it, and the external side waits for the
//   release), so the dma-buf still holds what it uploaded;
// - the release was enqueued before the acquire ran (both behind a wait
//   list): what the release does is decided when it is enqueued
//   (decide_release: merge if the import is aliased then), what the acquire
//   keeps when it runs.  A merging release whose acquire found no alias
//   (it went away meanwhile) writes its device copy back whole from the
//   scratch.
// Not covered, and why:
// - an alias made after the release was enqueued without a merge: that
//   release writes back whole (its Read goes straight into the dma-buf);
// - after a release that failed before it ran, the next acquire of that
//   import does not watch for late aliases (the failed release left its
//   decision behind); an alias present at that acquire is seen as usual;
// - CL_MEM_WRITE_ONLY imports are not uploaded, so there is nothing to
//   compare with: written back whole;
// - tiled images (layer/blit/tiled_shadow.hpp) go through their linear
//   shadow and the blitter's re-tile, not through these transfers;
// - imports of the dma-buf in another process: the layer sees only its own.
#pragma once

#include <cstddef>

#include "layer/core/registry.hpp"

namespace cldmabuf {

// Where the device copy's bytes sit on the host: the buffer's mapping (or the
// ICD's registration of it, layer/handoff/staging.hpp), or the image's pixels
// at the plane offset.
void *copy_route_host(const Import &import);

// Acquire, CPU bracket open, before the upload of a copy-route import that
// the device reads: keeps the bytes about to be uploaded when the import is
// aliased and the device may write it; else forgets any earlier snapshot and
// (unless its release is already decided) watches for a late alias.
void note_upload(const Import &import);

// Release, once per import when it is enqueued (before merges_release): a
// copy-route import copied both ways merges if its acquire kept a snapshot
// or its dma-buf is aliased now.  One field test for other imports.
void decide_release(const Import &import);

// Whether this release's write-back is a merge (decide_release's answer).
// One relaxed load while no import merges.
bool merges_release(const Import &import);

// Where the release's Read{Buffer,Image} puts the device copy instead of
// copy_route_host(): a scratch with the same layout (pitches) while
// merges_release(), else nullptr (the Read goes into the dma-buf).
void *release_scratch(const Import &import);

// The release ran (its write-back, Read included, completed; `apply` false
// after a failed command before it): a merging release writes the bytes
// that differ from the snapshot into the dma-buf (or, with no snapshot, the
// whole scratch), then the import's release state is forgotten.  Called for
// every import the release copied back.  Returns the bytes merged.
size_t finish_release(const Import &import, bool apply = true);

}  // namespace cldmabuf
