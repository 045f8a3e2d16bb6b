// Whose dma-bufs the blitter copies: only those its own GPU exported
// (docs/blitter.md, "Layer integration"; docs/layer-rules.md, "Who exported
// the dma-buf").  i915 would PRIME-import another device's or a heap's
// dma-buf too, but that memory is not this GPU's to copy.
#pragma once

#include <string>
#include <sys/types.h>

#include "layer/i915/gen9_probe.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {

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
