// Which imports alias one dma-buf: the live imports of each dma-buf, by the
// identity of its file (st_dev, st_ino of the fd, recorded at import by
// layer/core/import_fds.cpp; every fd of one dma-buf, dup'ed or received over
// a socket, names the one inode).
//
// Why: an import on the copy route holds its own device copy.  Where a
// second import of the same dma-buf is alive, writing that copy back whole
// on release would overwrite what the other import wrote; the copy route
// then writes back only what its device changed (layer/handoff/alias_merge.hpp).
// An import without a recorded identity (a seam that cannot fstat) is not
// counted: it can alias nothing the layer can prove.
#pragma once

#include <atomic>
#include <cstddef>

namespace cldmabuf {

struct Import;

// Counts `import` under its dma-buf until its teardown (forget_import_state).
// Called once the import is committed (layer/import/record.cpp).
void note_dmabuf_import(const Import &import);

// Whether another live import shares `import`'s dma-buf.  One relaxed load
// while no dma-buf has two imports.
bool dmabuf_aliased(const Import &import);

// Live imports of `import`'s dma-buf, itself included (tests, logs).
size_t dmabuf_import_count(const Import &import);

}  // namespace cldmabuf
