// Which imports alias one dma-buf: the live imports of each dma-buf, by the
// identity of its file (st_dev, st_ino of the fd, recorded at import by
// layer/core/import_fds.cpp; every fd of one dma-buf, dup'ed or received over
// a socket, names the one inode).
//
// Why: two imports of one dma-buf are one memory outside OpenCL, so what the
// layer does to "the dma-buf" holds for all of them:
//  - the copy route: an import holds its own device copy; where a second
//    import of the same dma-buf is alive, writing that copy back whole on
//    release would overwrite what the other import wrote, so the copy route
//    writes back only what its device changed (layer/handoff/alias_merge.hpp);
//  - the release fence (layer/handoff/release_fences.hpp): SYNC START waits
//    for every fence of the dma-buf, whichever import's fd put it there, so
//    "the acquire ahead of the release" means any import's acquire of that
//    dma-buf (layer/handoff/acquire_opening.hpp keys its openings by
//    dmabuf_key).
// An import without a recorded identity (a seam that cannot fstat) is not
// counted: it can alias nothing the layer can prove, and is its own key.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "layer/base/cl_compat.h"

namespace cldmabuf {

struct Import;

// One dma-buf: its file's identity, or (unidentified) the one import.
struct DmabufKey {
    dev_t dev = 0;
    ino_t ino = 0;
    const Import *alone = nullptr;
    bool operator==(const DmabufKey &o) const { return dev == o.dev && ino == o.ino && alone == o.alone; }
};
struct DmabufKeyHash {
    size_t operator()(const DmabufKey &k) const {
        return std::hash<unsigned long long>()(static_cast<unsigned long long>(k.ino) * 1000003u ^
                                               static_cast<unsigned long long>(k.dev)) ^
               std::hash<const void *>()(k.alone);
    }
};
DmabufKey dmabuf_key(const Import &import);

// Counts `import` under its dma-buf until its teardown (forget_import_state).
// Called once the import is committed (layer/import/record.cpp).  Where it
// makes the dma-buf aliased (a second or later live import), the alias
// listener is called after, on this thread, outside this file's lock.
void note_dmabuf_import(const Import &import);

// Whether another live import shares `import`'s dma-buf.  One relaxed load
// while no dma-buf has two imports.
bool dmabuf_aliased(const Import &import);

// Live imports of `import`'s dma-buf, itself included (tests, logs).
size_t dmabuf_import_count(const Import &import);

// The cl_mem of every live import of `import`'s dma-buf, its own first.
std::vector<cl_mem> dmabuf_alias_mems(const Import &import);

// Told when `import` made its dma-buf aliased (the copy route's merge
// snapshots the imports of that dma-buf acquired while they were alone).
// One listener, installed by a static object of the feature that listens.
using AliasListener = void (*)(const Import &import);
void set_alias_listener(AliasListener listener);

}  // namespace cldmabuf
