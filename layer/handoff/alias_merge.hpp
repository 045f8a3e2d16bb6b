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
// an import alone on its dma-buf is written back whole, as before.  Not
// covered, and why:
// - an import whose acquire ran before its alias existed took no snapshot;
//   its release writes back whole (the merge cannot know what it changed);
// - CL_MEM_WRITE_ONLY imports are not uploaded, so there is nothing to
//   compare with: written back whole;
// - tiled images (layer/blit/tiled_shadow.hpp) go through their linear
//   shadow and the blitter's re-tile, not through these transfers.
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
// aliased and the device may write it; else forgets any earlier snapshot.
void note_upload(const Import &import);

// Release: whether this import's write-back is a merge (its acquire kept a
// snapshot).  One relaxed load while no import has one.
bool merges_release(const Import &import);

// Where the release's Read{Buffer,Image} puts the device copy instead of
// copy_route_host(): a scratch with the same layout (pitches).  Only while
// merges_release().
void *release_scratch(const Import &import);

// After that Read completed: writes the bytes that differ from the snapshot
// into the dma-buf (copy_route_host()), then forgets the snapshot.  `apply`
// false (a failed command before it): forgets it and writes nothing.
// Returns the bytes written.
size_t merge_release(const Import &import, bool apply = true);

}  // namespace cldmabuf
