// The GEM handle of each import the blitter copies, made once on first use
// and cached on Import::backend (docs/blitter.md, "GEM state").
#pragma once

#include "layer/i915/blt_engine.hpp"
#include "layer/registry.hpp"

namespace cldmabuf {

// What the blitter caches on an import: its GEM handle and softpin address,
// released when the object is destroyed (on_import_destroyed resets
// Import::backend).  A failed import is cached too (`error`), so an import
// the node cannot take costs one ioctl, not one per copy.
struct BltBackend final : BackendState {
    i915::BltEngine *engine = nullptr;
    i915::BltImport imp;
    int error = 0;  // -errno of the failed PRIME import, or 0
    ~BltBackend() override;
};

// The GEM import of `import` on `engine`: 0 and *out, or the cached -errno
// (-EXDEV: the dma-buf is not the blitter's GPU's own, exporter_mismatch in
// layer/blit/exporter_gate.hpp).
int blt_import_of(Import &import, i915::BltEngine &engine, i915::BltImport *out);

}  // namespace cldmabuf
