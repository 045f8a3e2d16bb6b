// Glue between the layer's copy overrides (layer/copy.cpp) and the Gen9
// blitter engine: per-import GEM state cached on Import::backend, device
// matching, and the spec's argument checks for buffer copies (pure functions,
// so they can be tested without an ICD).  docs/blitter.md, "Layer
// integration".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "layer/cl_compat.h"
#include "layer/i915/blt_engine.hpp"
#include "layer/pci_address.hpp"
#include "layer/registry.hpp"

namespace cldmabuf::i915 {

// What the blitter caches on an import: its GEM handle and softpin address,
// made once on first use and released when the object is destroyed
// (on_import_destroyed resets Import::backend).  A failed import is cached
// too (`error`), so an import the node cannot take costs one ioctl, not one
// per copy.
struct BltBackend final : BackendState {
    BltEngine *engine = nullptr;
    BltImport imp;
    int error = 0;  // -errno of the failed PRIME import, or 0
    ~BltBackend() override;
};

// The GEM import of `import` on `engine`: 0 and *out, or the cached -errno
// (-EXDEV: the dma-buf is not the blitter's GPU's own, exporter_mismatch).
int blt_import_of(Import &import, BltEngine &engine, BltImport *out);

// Why the blitter on `node` (st_rdev `rdev`, 0 if unknown) must not take
// `import`'s dma-buf, naming both sides, or empty: only an i915 export whose
// exporting node is known (layer/ext/exporter.hpp) and is `node` itself.
std::string exporter_mismatch(const Import &import, const Gen9Info &node, dev_t rdev);
// CLDMABUF_BLT_EXPORTERS=own (default) | any.  `any` lets the blitter take
// every dma-buf its node can PRIME-import (e.g. system-heap memory on an
// integrated GPU, which is host RAM): an explicit opt-in, used by the VM
// lane to run the virtual Gen9's blitter over real heap buffers.
bool blt_any_exporter();
// st_rdev of the node, through the kernel seam; 0 if it cannot be stat'ed.
dev_t node_rdev(const Gen9Info &node);

// What the layer knows of an OpenCL device when it pairs it with the node.
struct DeviceFacts {
    cl_device_type type = 0;
    cl_uint vendor_id = 0;
    bool has_pci = false;  // cl_khr_pci_bus_info answered
    PciAddress pci;
};

// Whether a device with `facts` sees what the Gen9 node `node` writes into a
// zero-copy import.  A CPU device always does (same host pages).  A GPU
// device must be the node's own PCI function: compared through
// cl_khr_pci_bus_info when the ICD answers it (a node whose PCI address is
// unknown then matches nothing), else by vendor 0x8086.  Empty when it
// matches, else the fallback reason, naming both addresses where known.
std::string device_mismatch(const DeviceFacts &facts, const Gen9Info &node);

// device_mismatch for `device` against BltEngine::instance()'s node, asked
// of the ICD once per root device (a sub-device answers as its root) and
// cached; the first mismatch of a device is logged once.  nullptr when it matches, else the reason (stable storage).
const char *blt_device_mismatch(cl_device_id device);

// ---- argument checks (OpenCL 3.0, clEnqueueCopyBuffer / CopyBufferRect) ----

// One side of a copy: the cl_mem's size and where it starts inside the
// import it belongs to (a sub-buffer's origin, else 0).
struct CopySide {
    uint64_t base = 0;
    uint64_t size = 0;
};

// A rect request with the spec's default pitches filled in.
struct RectArgs {
    uint64_t src_origin[3] = {0, 0, 0}, dst_origin[3] = {0, 0, 0}, region[3] = {0, 0, 0};
    uint64_t src_row_pitch = 0, src_slice_pitch = 0, dst_row_pitch = 0, dst_slice_pitch = 0;
};

// CL_SUCCESS, CL_INVALID_VALUE (out of bounds) or CL_MEM_COPY_OVERLAP (the
// two ranges overlap inside the same import: `same_storage`).  size 0 is not
// judged here (the caller leaves it to the ICD).
cl_int check_copy_buffer(const CopySide &src, const CopySide &dst, bool same_storage, uint64_t src_offset,
                         uint64_t dst_offset, uint64_t size);

// Fills the default pitches (row = width, slice = height * row) and checks
// zero regions, pitch rules and bounds: CL_SUCCESS or CL_INVALID_VALUE.
cl_int normalize_rect(const size_t *src_origin, const size_t *dst_origin, const size_t *region,
                      size_t src_row_pitch, size_t src_slice_pitch, size_t dst_row_pitch,
                      size_t dst_slice_pitch, const CopySide &src, const CopySide &dst, RectArgs *out);

// Whether the bytes the source and destination rectangles touch intersect,
// in import coordinates (exact, row by row where the spans overlap).
bool rects_overlap(const RectArgs &r, const CopySide &src, const CopySide &dst);

}  // namespace cldmabuf::i915
