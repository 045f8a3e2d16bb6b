// Gen9 tile address arithmetic used by the virtual BCS engine.
//
// Formulas (4 KiB tiles, tiles laid out row-major across the surface pitch,
// no bit-6 swizzling on Gen8+):
//
//   X tile: 512 B x 8 rows, row-major inside the tile
//     off = ((y/8)*(pitch/512) + xB/512)*4096 + (y%8)*512 + xB%512
//   Y tile (legacy TileY): 128 B x 32 rows, made of 8 columns of 16 B OWords,
//     each column 32 rows deep (512 B), columns in order
//     off = ((y/32)*(pitch/128) + xB/128)*4096 + ((xB%128)/16)*512 + (y%32)*16 + xB%16
//
// xB is the x position in bytes (x * cpp), pitch is in bytes.
// Sources: IGT lib/intel_bufops.c:308-364 (x_ptr/y_ptr) and i915
// gt/intel_ggtt_fencing.c:572-584 (no bit-6 swizzle on Gen8+).
// TileYf / TileYs are not modelled (the engine rejects them with -EIO).
#pragma once

#include <cstdint>

namespace vgen9::tiling {

enum class Tiling : uint8_t { Linear, X, Y };

inline constexpr uint64_t kTileBytes = 4096;
inline constexpr uint64_t kXTileWidth = 512;   // bytes
inline constexpr uint64_t kXTileHeight = 8;    // rows
inline constexpr uint64_t kYTileWidth = 128;   // bytes
inline constexpr uint64_t kYTileHeight = 32;   // rows
inline constexpr uint64_t kYOWordBytes = 16;   // one Y-tile column is 16 B wide

// Byte offset of (xB, y) in an X-tiled surface of the given pitch (bytes,
// a multiple of 512).
constexpr uint64_t x_tile_offset(uint64_t xB, uint64_t y, uint64_t pitch) {
    return ((y / kXTileHeight) * (pitch / kXTileWidth) + xB / kXTileWidth) * kTileBytes +
           (y % kXTileHeight) * kXTileWidth + xB % kXTileWidth;
}

// Byte offset of (xB, y) in a legacy-Y-tiled surface of the given pitch
// (bytes, a multiple of 128).
constexpr uint64_t y_tile_offset(uint64_t xB, uint64_t y, uint64_t pitch) {
    return ((y / kYTileHeight) * (pitch / kYTileWidth) + xB / kYTileWidth) * kTileBytes +
           ((xB % kYTileWidth) / kYOWordBytes) * (kYTileHeight * kYOWordBytes) +
           (y % kYTileHeight) * kYOWordBytes + xB % kYOWordBytes;
}

// Width of a tile in bytes (the unit the pitch must be a multiple of).
constexpr uint64_t tile_width(Tiling t) {
    return t == Tiling::X ? kXTileWidth : t == Tiling::Y ? kYTileWidth : 1;
}

// Tile height in rows (1 for linear).
constexpr uint64_t tile_height(Tiling t) {
    return t == Tiling::X ? kXTileHeight : t == Tiling::Y ? kYTileHeight : 1;
}

// Longest run of bytes starting at xB (same row) that is contiguous in
// memory: up to the end of the 512 B tile row for X, the end of the 16 B
// OWord for Y.  Linear surfaces are contiguous for the whole row (returns 0
// meaning "unbounded").
constexpr uint64_t contiguous_run(Tiling t, uint64_t xB) {
    switch (t) {
    case Tiling::X: return kXTileWidth - xB % kXTileWidth;
    case Tiling::Y: return kYOWordBytes - xB % kYOWordBytes;
    default: return 0;
    }
}

// Offset of (xB, y) for a tiled surface (t must be X or Y).
constexpr uint64_t tiled_offset(Tiling t, uint64_t xB, uint64_t y, uint64_t pitch) {
    return t == Tiling::X ? x_tile_offset(xB, y, pitch) : y_tile_offset(xB, y, pitch);
}

}  // namespace vgen9::tiling
