// Dword-for-dword checks of the Gen9 BCS encoders.  Every expected constant is
// derived by hand in its comment from the public sources:
//   [K]   kernel gt/intel_gpu_commands.h:266-281 (XY_SRC_COPY_BLT_CMD =
//         (2<<29)|(0x53<<22), BLT_WRITE_ALPHA 1<<21, BLT_WRITE_RGB 1<<20,
//         XY_SRC_COPY_BLT_SRC_TILED 1<<15, XY_SRC_COPY_BLT_DST_TILED 1<<11),
//         gt/intel_gt_regs.h:1447-1449 (BCS_SWCTRL 0x22200, SRC_Y bit0, DST_Y bit1)
//   [IGT] lib/i830_reg.h:68-71 (same XY_SRC_COPY_BLT bits), lib/intel_reg.h:2580-2600
//         (XY_FAST_COPY_BLT), tests/intel/gem_blits.c:205-281 (blit(): "3 << 24 |
//         0xcc << 16 | pitch", pitch /= 4 when tiled, "MI_FLUSH_DW_CMD | 2" + 3
//         zero dwords, LRI reset "(BCS_SRC_Y | BCS_DST_Y) << 16")
//   [M]   genxml/gen5.xml:1132-1157 (BR13 depth 26:24: 0=8bpp, 1=565, 3=32bpp;
//         ROP 23:16; pitch 15:0; BR22/BR23 y<<16|x)
// (File:line references are those of docs/blitter.md's source list.)
#include <catch2/catch_test_macros.hpp>

#include "layer/i915/batch_builder.hpp"
#include "layer/i915/batch_encoder.hpp"

using namespace cldmabuf::i915;
using V = std::vector<uint32_t>;

TEST_CASE("XY_SRC_COPY_BLT 32bpp linear, 48-bit addresses", "[i915][encoder]") {
    BltCommand c;
    c.bpp = 32;
    c.dst_pitch = 4096;
    c.src_pitch = 8192;
    c.dst_x1 = 16, c.dst_y1 = 2, c.dst_x2 = 80, c.dst_y2 = 10;
    c.src_x = 3, c.src_y = 5;
    c.dst_addr = 0x0000123456789A40ull;
    c.src_addr = 0x0000800000001000ull;
    V out;
    emit_xy_src_copy_blt(out, c);
    const V expect = {
        0x54F00008u,  // (2<<29)=0x40000000 | (0x53<<22)=0x14C00000 | alpha 0x200000 | rgb 0x100000 | len 10-2=8  [K]
        0x03CC1000u,  // depth 3<<24 (32bpp) | ROP 0xCC<<16 | dst pitch 4096=0x1000 bytes (linear)  [M][IGT]
        0x00020010u,  // BR22: y1=2 <<16 | x1=16
        0x000A0050u,  // BR23: y2=10<<16 | x2=80 (exclusive)
        0x56789A40u,  // dst address bits 31:0
        0x00001234u,  // dst address bits 47:32 (Gen8+ second address dword)
        0x00050003u,  // BR26: src y=5 <<16 | src x=3
        0x00002000u,  // BR11: src pitch 8192 bytes (linear)
        0x00001000u,  // src address 31:0
        0x00008000u,  // src address 47:32
    };
    CHECK(out == expect);
}

TEST_CASE("XY_SRC_COPY_BLT 8bpp linear: no write-enable bits, depth 0", "[i915][encoder]") {
    BltCommand c;
    c.bpp = 8;
    c.dst_pitch = 32704;  // 0x7FC0, Mesa's 32768-64 wide-row pitch
    c.src_pitch = 32704;
    c.dst_x1 = 63, c.dst_y1 = 0, c.dst_x2 = 32767, c.dst_y2 = 32767;
    c.src_x = 1;
    c.dst_addr = 0x40;
    c.src_addr = 0xFFFFFFFFC0ull;
    V out;
    emit_xy_src_copy_blt(out, c);
    const V expect = {
        0x54C00008u,  // 0x40000000 | 0x14C00000 | len 8; write A/RGB only for 32bpp  [K][IGT]
        0x00CC7FC0u,  // depth 0 (8bpp) | 0xCC<<16 | pitch 32704 = 0x7FC0  [M]
        0x0000003Fu,  // y1=0, x1=63
        0x7FFF7FFFu,  // y2=32767=0x7FFF, x2=32767: the signed 16-bit maximum  [IGT intel_batchbuffer.c:445-451]
        0x00000040u,
        0x00000000u,
        0x00000001u,  // src x=1
        0x00007FC0u,
        0xFFFFFFC0u,  // src address low dword of 0xFF_FFFF_FFC0
        0x000000FFu,  // bits 47:32 = 0xFF
    };
    CHECK(out == expect);
}

TEST_CASE("XY_SRC_COPY_BLT 16bpp, tiled sides: pitch in dwords", "[i915][encoder]") {
    BltCommand c;
    c.bpp = 16;
    c.dst_tiling = Tiling::X;
    c.src_tiling = Tiling::Y;
    c.dst_pitch = 2048;  // bytes -> 512 dwords
    c.src_pitch = 512;   // bytes -> 128 dwords
    c.dst_x1 = 0, c.dst_y1 = 0, c.dst_x2 = 4, c.dst_y2 = 1;
    c.dst_addr = 0x10000;
    c.src_addr = 0x20000;
    V out;
    emit_xy_src_copy_blt(out, c);
    REQUIRE(out.size() == 10);
    CHECK(out[0] == 0x54C08808u);  // 0x54C00008 | SRC_TILED 1<<15 (0x8000) | DST_TILED 1<<11 (0x800)  [K]
    CHECK(out[1] == 0x01CC0200u);  // depth 1<<24 (565/16bpp) | 0xCC<<16 | 2048/4 = 512 = 0x200  [M][IGT gem_blits.c blit()]
    CHECK(out[7] == 0x00000080u);  // src pitch 512/4 = 128 dwords
}

TEST_CASE("XY_FAST_COPY_BLT: tiling fields and depth", "[i915][encoder]") {
    BltCommand c;
    c.bpp = 32;
    c.src_tiling = Tiling::Y;
    c.dst_tiling = Tiling::X;
    c.dst_pitch = 4096;  // tiled -> 1024 dwords
    c.src_pitch = 256;   // tiled -> 64 dwords
    c.dst_x2 = 8, c.dst_y2 = 8;
    c.dst_addr = 0x1000, c.src_addr = 0x2000;
    V out;
    emit_xy_fast_copy_blt(out, c);
    const V expect = {
        0x50A02008u,  // (2<<29)|(0x42<<22)=0x50800000 | src tiling Y=2<<20 (0x200000) | dst X=1<<13 (0x2000) | len 8  [IGT intel_reg.h]
        0x03000400u,  // depth 3<<24 (32bpp) | dst pitch 1024 dwords; no ROP field  [IGT intel_batchbuffer.c fast copy]
        0x00000000u, 0x00080008u, 0x00001000u, 0x00000000u,
        0x00000000u, 0x00000040u, 0x00002000u, 0x00000000u,
    };
    CHECK(out == expect);
}

TEST_CASE("MI_FLUSH_DW, LRI BCS_SWCTRL, batch end and padding", "[i915][encoder]") {
    V out;
    emit_mi_flush_dw(out);
    // 0x26<<23 = 0x13000000, Gen8+ 4-dword form: length 4-2 = 2 ("MI_FLUSH_DW_CMD | 2")  [IGT gem_blits.c]
    CHECK(out == V{0x13000002u, 0, 0, 0});

    out.clear();
    emit_bcs_swctrl(out, true, false);
    // MI_LOAD_REGISTER_IMM(1) = 0x22<<23 | 1 = 0x11000001; BCS_SWCTRL = 0x22200;
    // masked write: (SRC_Y|DST_Y)<<16 = 0x30000, value SRC_Y = 1  [K intel_gt_regs.h][IGT gem_blits.c]
    CHECK(out == V{0x11000001u, 0x00022200u, 0x00030001u});
    out.clear();
    emit_bcs_swctrl(out, false, true);
    CHECK(out == V{0x11000001u, 0x00022200u, 0x00030002u});
    out.clear();
    emit_bcs_swctrl(out, false, false);
    CHECK(out == V{0x11000001u, 0x00022200u, 0x00030000u});  // reset: "(BCS_SRC_Y | BCS_DST_Y) << 16"

    out = {1, 2, 3};
    emit_batch_end(out);  // 0x0A<<23 = 0x05000000; 4 dwords = 16 bytes: no pad
    CHECK(out == V{1, 2, 3, 0x05000000u});
    out = {1, 2};
    emit_batch_end(out);  // 3 dwords -> MI_NOOP pad to 16 bytes (batch_len % 8 == 0, [K] i915_gem_execbuffer.c:2230)
    CHECK(out == V{1, 2, 0x05000000u, 0x00000000u});
}

TEST_CASE("Batch layout: linear plan and Y-tiled plan", "[i915][encoder]") {
    BlitPlan plan;
    Blit b;
    b.bpp = 32;
    b.src_pitch = b.dst_pitch = 256;
    b.dst_x2 = 64, b.dst_y2 = 4;
    b.src_offset = 0x40;
    b.dst_offset = 0x1000;
    plan.blits.push_back(b);
    V out;
    build_batch(out, plan, 0x100000, 0x200000);
    REQUIRE(out.size() == 12);  // 10 + BBE + NOOP
    CHECK(out[0] == 0x54F00008u);
    CHECK(out[4] == 0x00201000u);  // dst 0x200000 + 0x1000
    CHECK(out[8] == 0x00100040u);  // src 0x100000 + 0x40
    CHECK(out[10] == 0x05000000u);
    CHECK(out[11] == 0u);

    plan.blits[0].src_tiling = Tiling::Y;
    plan.src_y_tiled = true;
    build_batch(out, plan, 0x100000, 0x200000);
    // flush(4) + LRI(3) + blit(10) + flush(4) + LRI(3) + BBE(1) = 25 -> pad 26
    REQUIRE(out.size() == 26);
    CHECK(out[0] == 0x13000002u);
    CHECK(out[4] == 0x11000001u);
    CHECK(out[6] == 0x00030001u);
    CHECK(out[7] == 0x54F08008u);  // SRC_TILED
    CHECK(out[8] == 0x03CC0100u);  // dst linear pitch 256 bytes
    CHECK(out[14] == 64u);         // src pitch 256/4
    CHECK(out[17] == 0x13000002u);
    CHECK(out[23] == 0x00030000u);
    CHECK(out[24] == 0x05000000u);
    CHECK(out.size() % 2 == 0);
}
