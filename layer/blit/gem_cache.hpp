// The GEM handle of each import the blitter copies, made once on first use
// and kept in the blitter's own side table (layer/core/import_state.hpp) until the
// import's teardown (docs/blitter.md, "GEM state") — and the gate before it,
// whose dma-bufs the blitter takes: only those its own GPU exported
// (docs/blitter.md, "Layer integration"; docs/layer-rules.md, "Who exported
// the dma-buf").  i915 would PRIME-import another device's or a heap's
// dma-buf too, but that memory is not this GPU's to copy.
#pragma once

#include <string>
#include <sys/types.h>

#include "layer/i915/blt_engine.hpp"
#include "layer/i915/gen9_probe.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {

// What the blitter keeps for an import: its GEM handle and softpin address,
// released at the import's teardown.  A failed import is kept too (`error`),
// so an import the node cannot take costs one ioctl, not one per copy.
struct BltBackend {
    i915::BltEngine *engine = nullptr;
    i915::BltImport imp;
    int error = 0;  // -errno of the failed PRIME import, or 0
    BltBackend() = default;
    BltBackend(const BltBackend &) = delete;
    BltBackend &operator=(const BltBackend &) = delete;
    ~BltBackend();
};

// The GEM import of `import` on `engine`: 0 and *out, or the cached -errno
// (-EXDEV: the dma-buf is not the blitter's GPU's own, exporter_mismatch).
int blt_import_of(Import &import, i915::BltEngine &engine, i915::BltImport *out);

// The exporter gate.

// Why the blitter on `node` (st_rdev `rdev`, 0 if unknown) must not take
// `import`'s dma-buf, naming both sides, or empty: only an i915 export whose
// exporting node is known (layer/dmabuf/exporter.hpp) and is `node` itself.
std::string exporter_mismatch(const Import &import, const i915::Gen9Info &node, dev_t rdev);

// CLDMABUF_BLT_EXPORTERS=own (default) | any.  `any` lets the blitter take
// every dma-buf its node can PRIME-import (e.g. system-heap memory on an
// integrated GPU, which is host RAM): an explicit opt-in, used by the VM
// lane to run the virtual Gen9's blitter over real heap buffers.
bool blt_any_exporter();

// st_rdev of the node, through the kernel seam; 0 if it cannot be stat'ed.
dev_t node_rdev(const i915::Gen9Info &node);

}  // namespace cldmabuf
