// Pure planning: turn an OpenCL-style copy request (in bytes or elements)
// into a short list of XY_SRC_COPY_BLT rectangles that respect the Gen9
// blitter limits.  No kernel access, no encoding: see batch_builder.hpp.
//
// Limits (docs/blitter.md has the citations):
//  * coordinates are signed 16 bit: every x1,y1,x2,y2,src x/y in 0..32767;
//  * linear pitch in bytes, a multiple of 4, <= 32764; tiled pitch in dwords
//    (<= 32767), a multiple of the tile width (512 B X, 128 B Y);
//  * linear base addresses 64 B aligned (remainder goes into x), tiled base
//    addresses 4 KiB aligned (whole tiles go into the base);
//  * 32 bpp needs every byte offset, width and pitch 4-aligned, else 8 bpp.
#pragma once

#include <cstdint>
#include <vector>

#include "layer/i915/batch_encoder.hpp"

namespace cldmabuf::i915 {

inline constexpr int32_t kMaxCoord = 32767;
inline constexpr uint32_t kMaxLinearPitch = 32764;     // largest multiple of 4 <= 32767
inline constexpr uint32_t kMaxTiledPitchDwords = 32767;
inline constexpr uint32_t kWideRowPitch = 32768 - 64;   // 1D copies: Mesa's min(size, 32768-64)
inline constexpr uint64_t kSplitMinBytes = 256;         // below this an 8 bpp blit is cheaper

// One planned rectangle.  Offsets are relative to the start of the imported
// object; the batch builder adds the object's GPU address.
struct Blit {
    uint32_t bpp = 8;  // 8, 16 or 32
    Tiling src_tiling = Tiling::Linear;
    Tiling dst_tiling = Tiling::Linear;
    uint64_t src_offset = 0;  // 64 B aligned if linear, 4 KiB if tiled
    uint64_t dst_offset = 0;
    uint32_t src_pitch = 0;   // bytes
    uint32_t dst_pitch = 0;
    int32_t dst_x1 = 0, dst_y1 = 0, dst_x2 = 0, dst_y2 = 0;  // pixels, x2/y2 exclusive
    int32_t src_x = 0, src_y = 0;
};

struct BlitPlan {
    std::vector<Blit> blits;
    bool src_y_tiled = false;  // BCS_SWCTRL SRC_Y needed
    bool dst_y_tiled = false;  // BCS_SWCTRL DST_Y needed
    uint64_t bytes = 0;        // payload bytes copied
    bool needs_swctrl() const { return src_y_tiled || dst_y_tiled; }
};

// clEnqueueCopyBuffer.
struct BufferCopy {
    uint64_t src_off = 0, dst_off = 0, size = 0;
};

// clEnqueueCopyBufferRect, all in bytes / rows / slices.  A zero pitch takes
// the OpenCL default (row pitch = width, slice pitch = row pitch * height).
// src_base/dst_base are added first (sub-buffer origin inside the import).
struct RectCopy {
    uint64_t src_base = 0, dst_base = 0;
    uint64_t src_x = 0, src_y = 0, src_z = 0;
    uint64_t dst_x = 0, dst_y = 0, dst_z = 0;
    uint64_t width = 0, height = 0, depth = 1;  // bytes, rows, slices
    uint64_t src_row_pitch = 0, src_slice_pitch = 0;
    uint64_t dst_row_pitch = 0, dst_slice_pitch = 0;
};

// Image-style 2D copy; x/y/width/height in elements.
struct ImageSide {
    uint64_t offset = 0;  // start of the surface inside the import (4 KiB aligned if tiled)
    uint32_t pitch = 0;   // bytes
    Tiling tiling = Tiling::Linear;
    uint32_t x = 0, y = 0;
};
struct ImageCopy {
    uint32_t elem_size = 4;  // 1, 2, 4, 8, 16
    ImageSide src, dst;
    uint32_t width = 0, height = 0;
};

// All return 0 and fill *plan (cleared first), or -EINVAL for a request the
// blitter cannot express (bad element size, misaligned tiled surface, pitch
// out of range, overflow).
int plan_copy_buffer(const BufferCopy &req, BlitPlan *plan);
int plan_copy_rect(const RectCopy &req, BlitPlan *plan);
int plan_copy_2d(const ImageCopy &req, BlitPlan *plan);

// One past the highest byte a plan touches on each side (relative to the
// objects' starts), from the blits themselves: what the engine checks
// against the objects' sizes before it submits (tests/fuzz checks that the
// blitter never addresses past it).
void plan_extent(const BlitPlan &plan, uint64_t *src_end, uint64_t *dst_end);

// Tile geometry: width in bytes and height in rows (0 for linear).
uint32_t tile_width_bytes(Tiling t);
uint32_t tile_height_rows(Tiling t);

}  // namespace cldmabuf::i915
