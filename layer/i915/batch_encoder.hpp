// Pure Gen9 BCS command encoders: each appends dwords to a std::vector.
//
// Field layouts follow the public sources cited in docs/blitter.md:
//   XY_SRC_COPY_BLT  - kernel gt/intel_gpu_commands.h (XY_SRC_COPY_BLT_CMD,
//                      BLT_WRITE_RGBA, *_TILED), IGT lib/intel_batchbuffer.c,
//                      Mesa genxml/gen5.xml (8-dword form; Gen8+ widens the
//                      two addresses to 48 bits, giving 10 dwords).
//   XY_FAST_COPY_BLT - IGT lib/intel_reg.h, lib/intel_batchbuffer.c.
//   MI_FLUSH_DW, MI_LOAD_REGISTER_IMM, BCS_SWCTRL - kernel gt/intel_gpu_commands.h,
//                      gt/intel_gt_regs.h, IGT tests/intel/gem_blits.c.
// No kernel access here: this file only produces dwords.
#pragma once

#include <cstdint>
#include <vector>

namespace cldmabuf::i915 {

enum class Tiling : uint8_t { Linear = 0, X = 1, Y = 2 };

// Opcodes and fields (see docs/blitter.md for the derivations).
inline constexpr uint32_t kMiNoop = 0x00000000u;
inline constexpr uint32_t kMiBatchBufferEnd = 0x0Au << 23;       // 0x05000000
inline constexpr uint32_t kMiFlushDw = 0x26u << 23;              // 0x13000000, + length
inline constexpr uint32_t kMiLoadRegisterImm1 = (0x22u << 23) | 1; // 0x11000001
inline constexpr uint32_t kBcsSwctrl = 0x22200u;                 // MMIO, masked register
inline constexpr uint32_t kBcsSwctrlSrcY = 1u << 0;
inline constexpr uint32_t kBcsSwctrlDstY = 1u << 1;
inline constexpr uint32_t kXySrcCopyBlt = (2u << 29) | (0x53u << 22);  // 0x54C00000
inline constexpr uint32_t kXyFastCopyBlt = (2u << 29) | (0x42u << 22); // 0x50800000
inline constexpr uint32_t kBltWriteAlpha = 1u << 21;
inline constexpr uint32_t kBltWriteRgb = 1u << 20;
inline constexpr uint32_t kBltSrcTiled = 1u << 15;
inline constexpr uint32_t kBltDstTiled = 1u << 11;
inline constexpr uint32_t kRopSrcCopy = 0xCCu;
inline constexpr unsigned kBltDwords = 10;      // Gen8+ 48-bit form
inline constexpr unsigned kMiFlushDwDwords = 4; // Gen8+ form used by IGT

// One rectangle copy.  Pitches are given in BYTES; the encoder converts to
// dwords for a tiled side.  Coordinates are pixels; x2/y2 are exclusive.
// Addresses are GPU virtual addresses (only the low 48 bits are encoded).
struct BltCommand {
    uint32_t bpp = 32;  // XY_SRC_COPY_BLT: 8, 16, 32.  XY_FAST_COPY_BLT: 8..128
    Tiling src_tiling = Tiling::Linear;
    Tiling dst_tiling = Tiling::Linear;
    uint32_t dst_pitch = 0;
    uint32_t src_pitch = 0;
    int32_t dst_x1 = 0, dst_y1 = 0, dst_x2 = 0, dst_y2 = 0;
    int32_t src_x = 0, src_y = 0;
    uint64_t dst_addr = 0;
    uint64_t src_addr = 0;
};

// XY_SRC_COPY_BLT, ROP 0xCC, 10 dwords.  bpp must be 8, 16 or 32.
void emit_xy_src_copy_blt(std::vector<uint32_t> &out, const BltCommand &cmd);
// XY_FAST_COPY_BLT (Gen9), 10 dwords.  Tiling: Linear/X/Y(legacy Y = 2).
void emit_xy_fast_copy_blt(std::vector<uint32_t> &out, const BltCommand &cmd);
// MI_FLUSH_DW, 4-dword Gen8+ form, no post-sync operation.
void emit_mi_flush_dw(std::vector<uint32_t> &out);
// MI_LOAD_REGISTER_IMM of one register.
void emit_lri(std::vector<uint32_t> &out, uint32_t reg, uint32_t value);
// LRI BCS_SWCTRL with both mask bits set: writes SRC_Y/DST_Y exactly.
void emit_bcs_swctrl(std::vector<uint32_t> &out, bool src_y, bool dst_y);
// MI_BATCH_BUFFER_END then MI_NOOP padding so the batch is a multiple of 8 bytes.
void emit_batch_end(std::vector<uint32_t> &out);

// Field helpers (exposed for tests).
uint32_t blt_depth_bits(uint32_t bpp);       // XY_SRC_COPY_BLT BR13 26:24
uint32_t fast_copy_depth_bits(uint32_t bpp); // XY_FAST_COPY_BLT DW1 26:24
uint32_t encode_pitch(uint32_t pitch_bytes, Tiling tiling);

}  // namespace cldmabuf::i915
