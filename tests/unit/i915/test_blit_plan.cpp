// Exhaustive-ish checks of the blit planner.  The interpreter and the limit
// checker below are written independently of layer/i915 (they only read the
// Blit fields), following the tiling formulas in the reference notes (IGT
// lib/intel_bufops.c:308-364) and the limits in docs/blitter.md.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>

#include "layer/i915/blit_plan.hpp"

using namespace cldmabuf::i915;

namespace {

// ---- independent model ----------------------------------------------------

uint64_t tiled_addr(Tiling t, uint64_t pitch, uint64_t xb, uint64_t y) {
    switch (t) {
    case Tiling::X:
        return ((y / 8) * (pitch / 512) + xb / 512) * 4096 + (y % 8) * 512 + xb % 512;
    case Tiling::Y:
        return ((y / 32) * (pitch / 128) + xb / 128) * 4096 + ((xb % 128) / 16) * 512 +
               (y % 32) * 16 + xb % 16;
    default:
        return y * pitch + xb;
    }
}

std::string limits_violation(const Blit &b) {
    const int cpp = int(b.bpp / 8);
    if (b.bpp != 8 && b.bpp != 16 && b.bpp != 32) return "bpp";
    const int32_t v[] = {b.dst_x1, b.dst_y1, b.dst_x2, b.dst_y2, b.src_x, b.src_y};
    for (int32_t c : v)
        if (c < 0 || c > 32767) return "coord range";
    if (b.dst_x2 <= b.dst_x1 || b.dst_y2 <= b.dst_y1) return "empty rect";
    if (b.src_x + (b.dst_x2 - b.dst_x1) > 32767 || b.src_y + (b.dst_y2 - b.dst_y1) > 32767)
        return "src extent";
    auto side = [&](Tiling t, uint64_t off, uint32_t pitch) -> std::string {
        if (t == Tiling::Linear) {
            if (off % 64) return "linear base not 64B aligned";
            if (pitch % 4 || pitch > 32767) return "linear pitch";
        } else {
            const uint32_t tw = t == Tiling::X ? 512 : 128;
            if (off % 4096) return "tiled base not 4K aligned";
            if (pitch == 0 || pitch % tw || pitch / 4 > 32767) return "tiled pitch";
        }
        return "";
    };
    if (auto s = side(b.src_tiling, b.src_offset, b.src_pitch); !s.empty()) return "src " + s;
    if (auto s = side(b.dst_tiling, b.dst_offset, b.dst_pitch); !s.empty()) return "dst " + s;
    (void)cpp;
    return "";
}

// Runs the blits byte by byte.  false on any out-of-buffer access.
bool interpret(const BlitPlan &plan, const std::vector<uint8_t> &src, std::vector<uint8_t> &dst) {
    for (const Blit &b : plan.blits) {
        const uint32_t cpp = b.bpp / 8;
        for (int32_t y = b.dst_y1; y < b.dst_y2; ++y)
            for (int32_t x = b.dst_x1; x < b.dst_x2; ++x) {
                const uint64_t sx = uint64_t(b.src_x + (x - b.dst_x1)) * cpp;
                const uint64_t sy = uint64_t(b.src_y + (y - b.dst_y1));
                for (uint32_t k = 0; k < cpp; ++k) {
                    const uint64_t sa = b.src_offset + tiled_addr(b.src_tiling, b.src_pitch, sx + k, sy);
                    const uint64_t da = b.dst_offset + tiled_addr(b.dst_tiling, b.dst_pitch, uint64_t(x) * cpp + k, y);
                    if (sa >= src.size() || da >= dst.size()) return false;
                    dst[da] = src[sa];
                }
            }
    }
    return true;
}

// Linear-only coverage check that scales to 64 MiB: every blit row maps a dst
// byte interval to a src interval at a constant delta; the union must be
// exactly [dst_off, dst_off+n) with no overlap.
bool covers_1d(const BlitPlan &plan, uint64_t src_off, uint64_t dst_off, uint64_t n, std::string *why) {
    std::vector<std::pair<uint64_t, uint64_t>> iv;
    for (const Blit &b : plan.blits) {
        const uint64_t cpp = b.bpp / 8, w = uint64_t(b.dst_x2 - b.dst_x1) * cpp;
        for (int32_t y = b.dst_y1; y < b.dst_y2; ++y) {
            const uint64_t d = b.dst_offset + uint64_t(y) * b.dst_pitch + uint64_t(b.dst_x1) * cpp;
            const uint64_t s = b.src_offset + uint64_t(b.src_y + y - b.dst_y1) * b.src_pitch + uint64_t(b.src_x) * cpp;
            if (d - dst_off != s - src_off) { *why = "delta"; return false; }
            iv.emplace_back(d, d + w);
        }
    }
    std::sort(iv.begin(), iv.end());
    uint64_t at = dst_off;
    for (auto [a, e] : iv) {
        if (a != at) { *why = "gap/overlap at " + std::to_string(at); return false; }
        at = e;
    }
    if (at != dst_off + n) { *why = "end " + std::to_string(at); return false; }
    return true;
}

void check_limits(const BlitPlan &plan) {
    for (const Blit &b : plan.blits) {
        const std::string v = limits_violation(b);
        INFO("bpp " << b.bpp << " src_off " << b.src_offset << " dst_off " << b.dst_offset
             << " pitches " << b.src_pitch << "/" << b.dst_pitch << " rect " << b.dst_x1 << ","
             << b.dst_y1 << "-" << b.dst_x2 << "," << b.dst_y2 << " src " << b.src_x << "," << b.src_y);
        REQUIRE(v.empty());
    }
}

std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
    std::vector<uint8_t> v(n);
    uint32_t s = seed * 2654435761u + 1;
    for (auto &c : v) { s = s * 1103515245u + 12345u; c = uint8_t(s >> 16); }
    return v;
}

}  // namespace

TEST_CASE("CopyBuffer: random small copies are byte-exact", "[i915][plan]") {
    std::mt19937_64 rng(0x1915);
    for (int iter = 0; iter < 4000; ++iter) {
        const uint64_t sizes[] = {1, 3, 4, 63, 64, 255, 256, 257, 4096, 32703, 32704, 32705,
                                  32767, 32768, 65408, 65409, 100000, 131072 + 5};
        uint64_t n = (iter % 3 == 0) ? sizes[rng() % std::size(sizes)] : 1 + rng() % 140000;
        const uint64_t so = (iter % 5 == 0) ? 4 * (rng() % 64) : rng() % 5000;
        const uint64_t dof = (iter % 7 == 0) ? so + 4 * (rng() % 16) : rng() % 5000;
        BlitPlan plan;
        REQUIRE(plan_copy_buffer({so, dof, n}, &plan) == 0);
        check_limits(plan);
        auto src = pattern(so + n + 64, iter);
        std::vector<uint8_t> dst(dof + n + 64, 0xEE), ref = dst;
        std::memcpy(ref.data() + dof, src.data() + so, n);
        INFO("iter " << iter << " n " << n << " so " << so << " do " << dof);
        REQUIRE(interpret(plan, src, dst));
        REQUIRE(dst == ref);
        CHECK(plan.bytes == n);
    }
}

TEST_CASE("CopyBuffer: large sizes up to 64 MiB cover exactly, few blits", "[i915][plan]") {
    std::mt19937_64 rng(42);
    for (int iter = 0; iter < 600; ++iter) {
        uint64_t n = 1 + rng() % (64ull << 20);
        if (iter < 8) n = (64ull << 20) - (iter % 4);
        const uint64_t so = rng() % 8192, dof = (iter % 2) ? so + 4 * (rng() % 100) : rng() % 8192;
        BlitPlan plan;
        REQUIRE(plan_copy_buffer({so, dof, n}, &plan) == 0);
        check_limits(plan);
        std::string why;
        INFO("n " << n << " so " << so << " do " << dof);
        REQUIRE(covers_1d(plan, so, dof, n, &why));
        CHECK(plan.blits.size() <= 4);  // head + body + remainder + tail at most
        // 32 bpp whenever both offsets are 4-aligned and the copy is not tiny.
        if ((so | dof) % 4 == 0 && n >= 4096) CHECK(plan.blits[0].bpp == 32);
    }
    BlitPlan plan;
    REQUIRE(plan_copy_buffer({0, 0, 64ull << 20}, &plan) == 0);
    CHECK(plan.blits.size() == 2);  // 2052 rows of 32704 B + one remainder row
    REQUIRE(plan_copy_buffer({0, 0, 32704}, &plan) == 0);
    CHECK(plan.blits.size() == 1);
    REQUIRE(plan_copy_buffer({0, 0, 0}, &plan) == 0);
    CHECK(plan.blits.empty());
}

TEST_CASE("CopyBufferRect: random rects are byte-exact", "[i915][plan]") {
    std::mt19937_64 rng(7);
    for (int iter = 0; iter < 3000; ++iter) {
        RectCopy r;
        const bool wide = iter % 50 == 0;  // pitches around/over the 32764 limit
        r.width = 1 + rng() % (wide ? 40000 : 300);
        r.height = 1 + rng() % (wide ? 3 : 40);
        r.depth = 1 + rng() % 4;
        auto pick_pitch = [&](uint64_t w) {
            switch (rng() % 4) {
            case 0: return uint64_t{0};                    // OpenCL default
            case 1: return w;                              // tight
            case 2: return w + rng() % 7;                  // odd
            default: return wide ? std::max<uint64_t>(w, 32760 + rng() % 8000) : w + rng() % 200;
            }
        };
        r.src_row_pitch = pick_pitch(r.width);
        r.dst_row_pitch = pick_pitch(r.width);
        const uint64_t sp = r.src_row_pitch ? r.src_row_pitch : r.width;
        const uint64_t dp = r.dst_row_pitch ? r.dst_row_pitch : r.width;
        r.src_slice_pitch = (rng() % 3 == 0) ? 0 : sp * r.height + rng() % 100;
        r.dst_slice_pitch = (rng() % 3 == 0) ? 0 : dp * r.height + (rng() % 2) * (rng() % 100);
        const uint64_t ss = r.src_slice_pitch ? r.src_slice_pitch : sp * r.height;
        const uint64_t ds = r.dst_slice_pitch ? r.dst_slice_pitch : dp * r.height;
        r.src_x = rng() % 9, r.src_y = rng() % 3, r.src_z = rng() % 2;
        r.dst_x = rng() % 9, r.dst_y = rng() % 3, r.dst_z = rng() % 2;
        if (iter % 4 == 0) { r.src_x &= ~3ull; r.dst_x &= ~3ull; }
        r.src_base = rng() % 130;
        r.dst_base = (iter % 3) ? rng() % 130 : r.src_base;
        sp > r.width ? (void)0 : (void)(r.src_x = 0);
        dp > r.width ? (void)0 : (void)(r.dst_x = 0);
        if (r.src_x + r.width > sp) r.src_x = sp - r.width;
        if (r.dst_x + r.width > dp) r.dst_x = dp - r.width;

        const uint64_t src_size = r.src_base + (r.src_z + r.depth - 1) * ss +
                                  (r.src_y + r.height - 1) * sp + r.src_x + r.width + 64;
        const uint64_t dst_size = r.dst_base + (r.dst_z + r.depth - 1) * ds +
                                  (r.dst_y + r.height - 1) * dp + r.dst_x + r.width + 64;
        auto src = pattern(src_size, iter);
        std::vector<uint8_t> dst(dst_size, 0x5A), ref = dst;
        for (uint64_t z = 0; z < r.depth; ++z)
            for (uint64_t y = 0; y < r.height; ++y)
                std::memcpy(ref.data() + r.dst_base + (r.dst_z + z) * ds + (r.dst_y + y) * dp + r.dst_x,
                            src.data() + r.src_base + (r.src_z + z) * ss + (r.src_y + y) * sp + r.src_x,
                            r.width);
        BlitPlan plan;
        INFO("iter " << iter << " w " << r.width << " h " << r.height << " d " << r.depth << " sp " << sp
             << " dp " << dp << " ss " << ss << " ds " << ds);
        REQUIRE(plan_copy_rect(r, &plan) == 0);
        check_limits(plan);
        REQUIRE(interpret(plan, src, dst));
        REQUIRE(dst == ref);
    }
}

TEST_CASE("CopyBufferRect: folding and blit counts", "[i915][plan]") {
    BlitPlan plan;
    RectCopy r;
    r.width = 256, r.height = 16, r.depth = 8;
    r.src_row_pitch = 512, r.dst_row_pitch = 1024;  // slices contiguous on both sides
    REQUIRE(plan_copy_rect(r, &plan) == 0);
    CHECK(plan.blits.size() == 1);  // one folded 128-row blit
    CHECK(plan.blits[0].dst_y2 == 128);
    r.src_slice_pitch = 512 * 16 + 4096;  // not contiguous: one blit per slice
    REQUIRE(plan_copy_rect(r, &plan) == 0);
    CHECK(plan.blits.size() == 8);
    RectCopy t;  // tight on both sides: a 1D copy
    t.width = 1000, t.height = 1000;
    REQUIRE(plan_copy_rect(t, &plan) == 0);
    CHECK(plan.blits.size() == 2);
    RectCopy o;  // odd pitch: 4 interleaved row groups, not one blit per row
    o.width = 100, o.height = 100, o.src_row_pitch = 101, o.dst_row_pitch = 100;
    REQUIRE(plan_copy_rect(o, &plan) == 0);
    CHECK(plan.blits.size() == 4);
    RectCopy bad;
    bad.width = 10, bad.height = 2, bad.src_row_pitch = 5;  // pitch < width
    CHECK(plan_copy_rect(bad, &plan) == -EINVAL);
}

TEST_CASE("2D image copies with L/X/Y tiling are byte-exact", "[i915][plan]") {
    std::mt19937_64 rng(99);
    const Tiling tilings[] = {Tiling::Linear, Tiling::X, Tiling::Y};
    const uint32_t elems[] = {1, 2, 4, 8, 16};
    for (int iter = 0; iter < 1500; ++iter) {
        ImageCopy c;
        c.elem_size = elems[rng() % 5];
        c.src.tiling = tilings[rng() % 3];
        c.dst.tiling = tilings[rng() % 3];
        c.width = 1 + rng() % 200;
        c.height = 1 + rng() % 70;
        auto setup = [&](ImageSide &s) {
            s.x = rng() % 50;
            s.y = rng() % 40;
            const uint64_t row = uint64_t(s.x + c.width) * c.elem_size;
            if (s.tiling == Tiling::Linear) {
                s.pitch = uint32_t((row + 3) / 4 * 4 + 4 * (rng() % 8));
                s.offset = (rng() % 200) * c.elem_size;
                if (c.src.tiling == Tiling::Linear && c.dst.tiling == Tiling::Linear) s.pitch += rng() % 4;
                return uint64_t(s.offset + uint64_t(s.y + c.height) * s.pitch);
            }
            const uint32_t tw = s.tiling == Tiling::X ? 512 : 128, th = s.tiling == Tiling::X ? 8 : 32;
            s.pitch = uint32_t((row + tw - 1) / tw * tw + tw * (rng() % 3));
            s.offset = 4096 * (rng() % 3);
            return uint64_t(s.offset + (s.y + c.height + th) / th * th * uint64_t(s.pitch));
        };
        const uint64_t ssize = setup(c.src), dsize = setup(c.dst);
        auto src = pattern(ssize, iter);
        std::vector<uint8_t> dst(dsize, 0x11), ref = dst;
        for (uint32_t y = 0; y < c.height; ++y)
            for (uint64_t xb = 0; xb < uint64_t(c.width) * c.elem_size; ++xb)
                ref[c.dst.offset + tiled_addr(c.dst.tiling, c.dst.pitch, uint64_t(c.dst.x) * c.elem_size + xb, c.dst.y + y)] =
                    src[c.src.offset + tiled_addr(c.src.tiling, c.src.pitch, uint64_t(c.src.x) * c.elem_size + xb, c.src.y + y)];
        BlitPlan plan;
        INFO("iter " << iter << " es " << c.elem_size << " tiling " << int(c.src.tiling) << "->" << int(c.dst.tiling)
             << " w " << c.width << " h " << c.height);
        REQUIRE(plan_copy_2d(c, &plan) == 0);
        check_limits(plan);
        CHECK(plan.src_y_tiled == (c.src.tiling == Tiling::Y));
        CHECK(plan.dst_y_tiled == (c.dst.tiling == Tiling::Y));
        REQUIRE(interpret(plan, src, dst));
        REQUIRE(dst == ref);
        if (c.src.tiling != Tiling::Linear || c.dst.tiling != Tiling::Linear) CHECK(plan.blits.size() == 1);
    }
}

TEST_CASE("2D: rows beyond 32767 and bad surfaces", "[i915][plan]") {
    ImageCopy c;
    c.elem_size = 4;
    c.src.tiling = Tiling::Y;
    c.src.pitch = 128;
    c.dst.tiling = Tiling::Linear;
    c.dst.pitch = 128;
    c.width = 32, c.height = 40000;
    c.src.y = 5;
    BlitPlan plan;
    REQUIRE(plan_copy_2d(c, &plan) == 0);
    check_limits(plan);
    CHECK(plan.blits.size() == 2);
    const uint64_t ssize = (40005 + 32) / 32 * 32 * 128ull, dsize = 40000 * 128ull;
    auto src = pattern(ssize, 3);
    std::vector<uint8_t> dst(dsize), ref(dsize);
    for (uint32_t y = 0; y < c.height; ++y)
        for (uint32_t xb = 0; xb < 128; ++xb) ref[y * 128 + xb] = src[tiled_addr(Tiling::Y, 128, xb, y + 5)];
    REQUIRE(interpret(plan, src, dst));
    CHECK(dst == ref);

    ImageCopy bad = c;
    bad.src.offset = 64;  // tiled base must be 4 KiB aligned
    CHECK(plan_copy_2d(bad, &plan) == -EINVAL);
    bad = c;
    bad.src.pitch = 192;  // not a multiple of the 128 B Y tile width
    CHECK(plan_copy_2d(bad, &plan) == -EINVAL);
    bad = c;
    bad.elem_size = 3;
    CHECK(plan_copy_2d(bad, &plan) == -EINVAL);
    bad = c;
    bad.dst.pitch = 130;  // linear side of a tiled copy: pitch must be 4-aligned
    CHECK(plan_copy_2d(bad, &plan) == -EINVAL);
}
