// Tiled (I915_FORMAT_MOD_X_TILED / _Y_TILED) image imports on a device the
// Gen9 blitter serves.  The ICD never sees the tiles: it gets a linear
// shadow (a GEM object of the node's own, mapped for the CPU), which the
// blitter fills from the dma-buf on acquire (de-tile) and writes back on
// release when the image is writable (re-tile).  docs/images.md, "Tiled
// imports".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/i915/blit_plan.hpp"
#include "layer/i915/blt_engine.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {

// What a tiled import keeps, in the blitter's side table (attach_tiled).
struct TiledImage {
    i915::BltEngine *engine = nullptr;
    i915::BltShadow shadow;
    i915::Tiling tiling = i915::Tiling::X;
    uint32_t elem = 0;               // bytes per pixel
    uint32_t width = 0, height = 0;  // pixels, rows
    uint32_t tiled_pitch = 0;        // bytes, in the dma-buf
    uint64_t plane_offset = 0;       // bytes, in the dma-buf (4 KiB aligned)
    uint32_t shadow_pitch = 0;       // bytes, what the ICD is given
    TiledImage() = default;
    TiledImage(const TiledImage &) = delete;
    TiledImage &operator=(const TiledImage &) = delete;
    ~TiledImage();
};

// The tiling a modifier names (X or Y), or false for any other modifier.
bool tiling_of_modifier(uint64_t modifier, i915::Tiling *tiling);

// The tiled surface's pitch: the descriptor's, or when 0 the row rounded up
// to whole tiles.
size_t tiled_row_pitch(i915::Tiling tiling, size_t row_bytes, size_t desc_pitch);

// Checks a consented tiled 2D import and makes its shadow: the blitter is
// there and serves every device, the element size is one the blitter copies,
// the pitch is a whole number of tiles, the plane offset is tile-aligned, the
// tiled surface (whole tile rows) fits the dma-buf, and both blits plan.
// CL_SUCCESS and *out, or the error with a reason (nothing allocated).
struct TiledRequest {
    i915::Tiling tiling = i915::Tiling::X;
    cl_mem_object_type type = 0;
    size_t elem = 0, width = 0, height = 0;
    size_t row_pitch = 0;        // tiled pitch (bytes)
    uint64_t plane_offset = 0;
    uint64_t dmabuf_size = 0;
};
// The pure part of those checks (image type, element size, pitch, plane
// offset, whole tile rows inside the dma-buf), in that order: CL_SUCCESS or
// the error with a reason (layer/blit/tiled_layout.cpp).
cl_int check_tiled_layout(const TiledRequest &req, std::string *why);
cl_int prepare_tiled_image(const TiledRequest &req, const std::vector<cl_device_id> &devices,
                           std::unique_ptr<TiledImage> *out, std::string *why);

// Where the ICD's pixels are on the host for an image import: the shadow of
// a tiled import, else the dma-buf mapping at the plane offset.
struct HostPixels {
    char *ptr = nullptr;
    size_t row_pitch = 0, slice_pitch = 0;
};
HostPixels host_pixels(const Import &import);

// The tiled state of an import, or nullptr for every other import.
TiledImage *tiled_of(const Import &import);
// Keeps `tiled` for `import` until its teardown (layer/core/import_state.hpp).
void attach_tiled(const Import &import, std::unique_ptr<TiledImage> tiled);

// Acquire: bounded wait for the dma-buf's writers, one BLT batch dma-buf →
// shadow, bounded wait for its fence.  CL_SUCCESS or an error status after
// one log line.
cl_int detile(Import &import);
// Release of a writable image: one BLT batch shadow → dma-buf (the dma-buf
// written, so it carries the batch's fence), waited for (bounded).
cl_int retile(Import &import);

}  // namespace cldmabuf
