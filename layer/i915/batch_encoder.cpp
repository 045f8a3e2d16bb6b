#include "layer/i915/batch_encoder.hpp"

namespace cldmabuf::i915 {
namespace {

uint32_t pack_xy(int32_t x, int32_t y) {
    return (static_cast<uint32_t>(y) & 0xFFFFu) << 16 | (static_cast<uint32_t>(x) & 0xFFFFu);
}

void emit_common_tail(std::vector<uint32_t> &out, const BltCommand &cmd) {
    out.push_back(pack_xy(cmd.dst_x1, cmd.dst_y1));                      // DW2 BR22
    out.push_back(pack_xy(cmd.dst_x2, cmd.dst_y2));                      // DW3 BR23
    out.push_back(static_cast<uint32_t>(cmd.dst_addr));                  // DW4
    out.push_back(static_cast<uint32_t>(cmd.dst_addr >> 32) & 0xFFFFu);  // DW5 47:32
    out.push_back(pack_xy(cmd.src_x, cmd.src_y));                        // DW6 BR26
    out.push_back(encode_pitch(cmd.src_pitch, cmd.src_tiling));          // DW7 BR11
    out.push_back(static_cast<uint32_t>(cmd.src_addr));                  // DW8
    out.push_back(static_cast<uint32_t>(cmd.src_addr >> 32) & 0xFFFFu);  // DW9 47:32
}

uint32_t fast_tiling_bits(Tiling t) {
    switch (t) {
    case Tiling::Linear: return 0;
    case Tiling::X: return 1;
    case Tiling::Y: return 2;
    }
    return 0;
}

}  // namespace

uint32_t blt_depth_bits(uint32_t bpp) {
    switch (bpp) {
    case 8: return 0u << 24;
    case 16: return 1u << 24;  // 565
    default: return 3u << 24;  // 32 bpp
    }
}

uint32_t fast_copy_depth_bits(uint32_t bpp) {
    switch (bpp) {
    case 8: return 0u << 24;
    case 16: return 1u << 24;
    case 32: return 3u << 24;
    case 64: return 4u << 24;
    default: return 5u << 24;  // 128
    }
}

uint32_t encode_pitch(uint32_t pitch_bytes, Tiling tiling) {
    uint32_t p = tiling == Tiling::Linear ? pitch_bytes : pitch_bytes / 4;
    return p & 0xFFFFu;
}

void emit_xy_src_copy_blt(std::vector<uint32_t> &out, const BltCommand &cmd) {
    uint32_t dw0 = kXySrcCopyBlt | (kBltDwords - 2);
    if (cmd.bpp == 32) dw0 |= kBltWriteAlpha | kBltWriteRgb;
    if (cmd.src_tiling != Tiling::Linear) dw0 |= kBltSrcTiled;
    if (cmd.dst_tiling != Tiling::Linear) dw0 |= kBltDstTiled;
    out.push_back(dw0);
    out.push_back(blt_depth_bits(cmd.bpp) | kRopSrcCopy << 16 |
                  encode_pitch(cmd.dst_pitch, cmd.dst_tiling));  // DW1 BR13
    emit_common_tail(out, cmd);
}

void emit_xy_fast_copy_blt(std::vector<uint32_t> &out, const BltCommand &cmd) {
    out.push_back(kXyFastCopyBlt | fast_tiling_bits(cmd.src_tiling) << 20 |
                  fast_tiling_bits(cmd.dst_tiling) << 13 | (kBltDwords - 2));
    out.push_back(fast_copy_depth_bits(cmd.bpp) | encode_pitch(cmd.dst_pitch, cmd.dst_tiling));
    emit_common_tail(out, cmd);
}

void emit_mi_flush_dw(std::vector<uint32_t> &out) {
    out.push_back(kMiFlushDw | (kMiFlushDwDwords - 2));
    out.push_back(0);
    out.push_back(0);
    out.push_back(0);
}

void emit_lri(std::vector<uint32_t> &out, uint32_t reg, uint32_t value) {
    out.push_back(kMiLoadRegisterImm1);
    out.push_back(reg);
    out.push_back(value);
}

void emit_bcs_swctrl(std::vector<uint32_t> &out, bool src_y, bool dst_y) {
    const uint32_t mask = (kBcsSwctrlSrcY | kBcsSwctrlDstY) << 16;
    emit_lri(out, kBcsSwctrl,
             mask | (src_y ? kBcsSwctrlSrcY : 0u) | (dst_y ? kBcsSwctrlDstY : 0u));
}

void emit_batch_end(std::vector<uint32_t> &out) {
    out.push_back(kMiBatchBufferEnd);
    if (out.size() & 1) out.push_back(kMiNoop);
}

}  // namespace cldmabuf::i915
