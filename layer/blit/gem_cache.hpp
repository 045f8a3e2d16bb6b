// The GEM handle of each import the blitter copies, made once on first use
// and kept in the blitter's own side table (layer/core/import_state.hpp) until the
// import's teardown (docs/blitter.md, "GEM state").
#pragma once

#include "layer/i915/blt_engine.hpp"
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
// (-EXDEV: the dma-buf is not the blitter's GPU's own, exporter_mismatch in
// layer/blit/exporter_gate.hpp).
int blt_import_of(Import &import, i915::BltEngine &engine, i915::BltImport *out);

}  // namespace cldmabuf
