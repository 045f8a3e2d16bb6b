#include "layer/i915/blit_plan.hpp"

#include <algorithm>
#include <cerrno>
#include <numeric>

namespace cldmabuf::i915 {
namespace {

constexpr uint64_t kLinearBaseAlign = 64;   // Gen8+ linear surface base
constexpr uint64_t kTileBytes = 4096;

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Multiplier g such that g * pitch is a multiple of 4.
uint64_t pitch_group(uint64_t pitch) { return 4 / std::gcd<uint64_t, uint64_t>(pitch % 4 ? pitch % 4 : 4, 4); }

// Rows of `w` bytes at s + r*sp -> d + r*dp, r < rows, one bpp.  The caller
// guarantees: s, d, w multiples of cpp; if rows > 1, sp/dp multiples of 4
// and <= kMaxLinearPitch.  Splits into <= 32767-row, <= 32767-pixel pieces,
// each with a 64 B aligned base and the remainder in x.
void emit_rows(uint64_t s, uint64_t d, uint64_t w, uint64_t rows, uint64_t sp, uint64_t dp,
               uint32_t cpp, std::vector<Blit> &out) {
    for (uint64_t r0 = 0; r0 < rows;) {
        const uint64_t nr = std::min<uint64_t>(rows - r0, kMaxCoord);
        for (uint64_t c0 = 0; c0 < w;) {
            const uint64_t so = s + r0 * sp + c0;
            const uint64_t dO = d + r0 * dp + c0;
            const uint64_t sx = (so % kLinearBaseAlign) / cpp;
            const uint64_t dx = (dO % kLinearBaseAlign) / cpp;
            const uint64_t max_px = kMaxCoord - std::max(sx, dx);
            const uint64_t nc = std::min<uint64_t>(w - c0, max_px * cpp);
            Blit b;
            b.bpp = cpp * 8;
            b.src_offset = so - so % kLinearBaseAlign;
            b.dst_offset = dO - dO % kLinearBaseAlign;
            if (nr > 1) {
                b.src_pitch = static_cast<uint32_t>(sp);
                b.dst_pitch = static_cast<uint32_t>(dp);
            } else {
                // One row: the pitch is never used; give a valid one anyway.
                const uint32_t p = static_cast<uint32_t>(
                    std::min<uint64_t>(align_up(nc + 64, 4), kMaxLinearPitch));
                b.src_pitch = b.dst_pitch = p;
            }
            b.src_x = static_cast<int32_t>(sx);
            b.src_y = 0;
            b.dst_x1 = static_cast<int32_t>(dx);
            b.dst_y1 = 0;
            b.dst_x2 = static_cast<int32_t>(dx + nc / cpp);
            b.dst_y2 = static_cast<int32_t>(nr);
            out.push_back(b);
            c0 += nc;
        }
        r0 += nr;
    }
}

// One column strip at a fixed bpp, any pitches: rows whose pitch is not
// 4-aligned are split into g interleaved groups with pitch g*p (g in 1,2,4),
// and a pitch beyond the limit degrades to one blit per row.
void emit_strip(uint64_t s, uint64_t d, uint64_t w, uint64_t h, uint64_t sp, uint64_t dp,
                uint32_t cpp, std::vector<Blit> &out) {
    if (w == 0 || h == 0) return;
    if (h == 1) {
        emit_rows(s, d, w, 1, 0, 0, cpp, out);
        return;
    }
    const uint64_t g = std::lcm(pitch_group(sp), pitch_group(dp));
    if (g * sp > kMaxLinearPitch || g * dp > kMaxLinearPitch) {
        for (uint64_t r = 0; r < h; ++r) emit_rows(s + r * sp, d + r * dp, w, 1, 0, 0, cpp, out);
        return;
    }
    for (uint64_t k = 0; k < std::min(g, h); ++k) {
        const uint64_t rows = (h - k + g - 1) / g;
        emit_rows(s + k * sp, d + k * dp, w, rows, g * sp, g * dp, cpp, out);
    }
}

// A linear rectangle in bytes: picks 32 bpp when everything is 4-aligned,
// splits off 8 bpp head/tail columns when both sides share the same
// misalignment and the rows are wide, else 8 bpp.
void linear_rect(uint64_t s, uint64_t d, uint64_t w, uint64_t h, uint64_t sp, uint64_t dp,
                 std::vector<Blit> &out) {
    if (w == 0 || h == 0) return;
    const bool pitches4 = h == 1 || ((sp | dp) % 4 == 0);
    if (pitches4 && (s | d | w) % 4 == 0) {
        emit_strip(s, d, w, h, sp, dp, 4, out);
        return;
    }
    if (pitches4 && s % 4 == d % 4 && w >= kSplitMinBytes) {
        const uint64_t head = (4 - s % 4) % 4;
        const uint64_t body = (w - head) & ~uint64_t{3};
        const uint64_t tail = w - head - body;
        emit_strip(s, d, head, h, sp, dp, 1, out);
        emit_strip(s + head, d + head, body, h, sp, dp, 4, out);
        emit_strip(s + head + body, d + head + body, tail, h, sp, dp, 1, out);
        return;
    }
    emit_strip(s, d, w, h, sp, dp, 1, out);
}

// A contiguous byte range: one wide-pitch 2D blit plus a remainder row.
void linear_1d(uint64_t s, uint64_t d, uint64_t n, std::vector<Blit> &out) {
    if (n == 0) return;
    auto body = [&out](uint64_t so, uint64_t dO, uint64_t len) {
        if (len <= kWideRowPitch) {
            linear_rect(so, dO, len, 1, 0, 0, out);
            return;
        }
        const uint64_t rows = len / kWideRowPitch;
        const uint64_t rem = len % kWideRowPitch;
        linear_rect(so, dO, kWideRowPitch, rows, kWideRowPitch, kWideRowPitch, out);
        if (rem) linear_rect(so + rows * kWideRowPitch, dO + rows * kWideRowPitch, rem, 1, 0, 0, out);
    };
    if ((s | d) % 4 == 0 || s % 4 != d % 4 || n < kSplitMinBytes) {
        if ((s | d) % 4 == 0 && n % 4 != 0 && n >= kSplitMinBytes) {
            const uint64_t main = n & ~uint64_t{3};
            body(s, d, main);
            linear_rect(s + main, d + main, n - main, 1, 0, 0, out);
        } else {
            body(s, d, n);
        }
        return;
    }
    // Same misalignment on both sides: 8 bpp head, 32 bpp middle, 8 bpp tail.
    const uint64_t head = (4 - s % 4) % 4;
    const uint64_t mid = (n - head) & ~uint64_t{3};
    linear_rect(s, d, head, 1, 0, 0, out);
    body(s + head, d + head, mid);
    linear_rect(s + head + mid, d + head + mid, n - head - mid, 1, 0, 0, out);
}

bool add_overflows(uint64_t a, uint64_t b) { return a + b < a; }

bool mul_overflows(uint64_t a, uint64_t b) { return b != 0 && a > UINT64_MAX / b; }

}  // namespace

uint32_t tile_width_bytes(Tiling t) {
    return t == Tiling::X ? 512 : t == Tiling::Y ? 128 : 0;
}

uint32_t tile_height_rows(Tiling t) {
    return t == Tiling::X ? 8 : t == Tiling::Y ? 32 : 0;
}

int plan_copy_buffer(const BufferCopy &req, BlitPlan *plan) {
    *plan = BlitPlan{};
    if (add_overflows(req.src_off, req.size) || add_overflows(req.dst_off, req.size))
        return -EINVAL;
    linear_1d(req.src_off, req.dst_off, req.size, plan->blits);
    plan->bytes = req.size;
    return 0;
}

int plan_copy_rect(const RectCopy &req, BlitPlan *plan) {
    *plan = BlitPlan{};
    const uint64_t w = req.width, h = req.height, dd = req.depth;
    if (w == 0 || h == 0 || dd == 0) return 0;
    const uint64_t sp = req.src_row_pitch ? req.src_row_pitch : w;
    const uint64_t dp = req.dst_row_pitch ? req.dst_row_pitch : w;
    if (mul_overflows(sp, h) || mul_overflows(dp, h)) return -EINVAL;
    const uint64_t ss = req.src_slice_pitch ? req.src_slice_pitch : sp * h;
    const uint64_t ds = req.dst_slice_pitch ? req.dst_slice_pitch : dp * h;
    if (sp < w || dp < w || ss < sp * h || ds < dp * h) return -EINVAL;
    // Last byte touched on each side must not overflow.
    auto extent_ok = [&](uint64_t base, uint64_t x, uint64_t y, uint64_t z, uint64_t p,
                         uint64_t slice) {
        if (mul_overflows(z + dd, slice) || mul_overflows(y + h, p)) return false;
        const uint64_t a = (z + dd - 1) * slice, b = (y + h - 1) * p;
        return !add_overflows(a, b) && !add_overflows(a + b, x + w) &&
               !add_overflows(a + b + x + w, base);
    };
    if (!extent_ok(req.src_base, req.src_x, req.src_y, req.src_z, sp, ss) ||
        !extent_ok(req.dst_base, req.dst_x, req.dst_y, req.dst_z, dp, ds))
        return -EINVAL;
    const uint64_t s0 = req.src_base + req.src_z * ss + req.src_y * sp + req.src_x;
    const uint64_t d0 = req.dst_base + req.dst_z * ds + req.dst_y * dp + req.dst_x;
    const bool folded = dd == 1 || (ss == sp * h && ds == dp * h);
    if (folded) {
        if (w == sp && w == dp)
            linear_1d(s0, d0, w * h * dd, plan->blits);  // fully contiguous
        else
            linear_rect(s0, d0, w, h * dd, sp, dp, plan->blits);
    } else {
        for (uint64_t z = 0; z < dd; ++z)
            linear_rect(s0 + z * ss, d0 + z * ds, w, h, sp, dp, plan->blits);
    }
    plan->bytes = w * h * dd;
    return 0;
}

int plan_copy_2d(const ImageCopy &req, BlitPlan *plan) {
    *plan = BlitPlan{};
    const uint32_t es = req.elem_size;
    if (es != 1 && es != 2 && es != 4 && es != 8 && es != 16) return -EINVAL;
    if (req.width == 0 || req.height == 0) return 0;
    plan->bytes = uint64_t{req.width} * req.height * es;

    if (req.src.tiling == Tiling::Linear && req.dst.tiling == Tiling::Linear) {
        RectCopy r;
        r.src_base = req.src.offset;
        r.dst_base = req.dst.offset;
        r.src_x = uint64_t{req.src.x} * es;
        r.src_y = req.src.y;
        r.dst_x = uint64_t{req.dst.x} * es;
        r.dst_y = req.dst.y;
        r.width = uint64_t{req.width} * es;
        r.height = req.height;
        r.src_row_pitch = req.src.pitch;
        r.dst_row_pitch = req.dst.pitch;
        if (r.src_row_pitch < r.width || r.dst_row_pitch < r.width) return -EINVAL;
        const uint64_t bytes = plan->bytes;
        const int ret = plan_copy_rect(r, plan);
        plan->bytes = bytes;
        return ret;
    }

    // At least one tiled side: fixed bpp, pixels of up to 4 bytes.
    const uint32_t cpp = std::min<uint32_t>(es, 4);
    const uint32_t scale = es / cpp;  // 8 and 16 byte elements: 2 or 4 pixels each
    for (const ImageSide *side : {&req.src, &req.dst}) {
        if (side->tiling == Tiling::Linear) {
            if (side->pitch % 4 || side->pitch > kMaxLinearPitch || side->offset % cpp) return -EINVAL;
        } else {
            const uint32_t tw = tile_width_bytes(side->tiling);
            if (side->offset % kTileBytes || side->pitch == 0 || side->pitch % tw ||
                side->pitch / 4 > kMaxTiledPitchDwords)
                return -EINVAL;
        }
        if ((uint64_t{side->x} + req.width) * es > side->pitch) return -EINVAL;
    }
    plan->src_y_tiled = req.src.tiling == Tiling::Y;
    plan->dst_y_tiled = req.dst.tiling == Tiling::Y;

    struct Pos {
        uint64_t base;
        uint32_t lx, ly;  // pixels / rows inside the base
    };
    // Normalise (x pixels, y rows) on one side to a legal base + small coords.
    auto locate = [cpp](const ImageSide &side, uint64_t xpx, uint64_t y) {
        const uint64_t xb = xpx * cpp;
        if (side.tiling == Tiling::Linear) {
            const uint64_t a = side.offset + y * side.pitch + xb;
            return Pos{a - a % kLinearBaseAlign, static_cast<uint32_t>((a % kLinearBaseAlign) / cpp), 0};
        }
        const uint64_t tw = tile_width_bytes(side.tiling), th = tile_height_rows(side.tiling);
        const uint64_t base = side.offset + (y / th) * th * side.pitch + (xb / tw) * kTileBytes;
        return Pos{base, static_cast<uint32_t>((xb % tw) / cpp), static_cast<uint32_t>(y % th)};
    };

    const uint64_t total_px = uint64_t{req.width} * scale;
    for (uint64_t r0 = 0; r0 < req.height;) {
        const uint64_t sy = req.src.y + r0, dy = req.dst.y + r0;
        const uint32_t sly = locate(req.src, 0, sy).ly, dly = locate(req.dst, 0, dy).ly;
        const uint64_t nr = std::min<uint64_t>(req.height - r0, kMaxCoord - std::max(sly, dly));
        for (uint64_t c0 = 0; c0 < total_px;) {
            const Pos sp = locate(req.src, uint64_t{req.src.x} * scale + c0, sy);
            const Pos dp = locate(req.dst, uint64_t{req.dst.x} * scale + c0, dy);
            const uint64_t nc = std::min<uint64_t>(total_px - c0, kMaxCoord - std::max(sp.lx, dp.lx));
            Blit b;
            b.bpp = cpp * 8;
            b.src_tiling = req.src.tiling;
            b.dst_tiling = req.dst.tiling;
            b.src_offset = sp.base;
            b.dst_offset = dp.base;
            b.src_pitch = req.src.pitch;
            b.dst_pitch = req.dst.pitch;
            b.src_x = static_cast<int32_t>(sp.lx);
            b.src_y = static_cast<int32_t>(sp.ly);
            b.dst_x1 = static_cast<int32_t>(dp.lx);
            b.dst_y1 = static_cast<int32_t>(dp.ly);
            b.dst_x2 = static_cast<int32_t>(dp.lx + nc);
            b.dst_y2 = static_cast<int32_t>(dp.ly + nr);
            plan->blits.push_back(b);
            c0 += nc;
        }
        r0 += nr;
    }
    return 0;
}

// Highest byte (exclusive) a plan touches on each side, from the blits
// themselves: the last row of each rectangle.
void plan_extent(const BlitPlan &plan, uint64_t *src_end, uint64_t *dst_end) {
    *src_end = *dst_end = 0;
    for (const Blit &b : plan.blits) {
        const uint32_t cpp = b.bpp / 8;
        const int32_t w = b.dst_x2 - b.dst_x1, h = b.dst_y2 - b.dst_y1;
        auto side_end = [&](Tiling t, uint64_t off, uint32_t pitch, int32_t x, int32_t y) {
            if (t == Tiling::Linear)
                return off + uint64_t(y + h - 1) * pitch + uint64_t(x + w) * cpp;
            // One past the last tile touched (the base already holds whole tiles).
            const uint64_t th = tile_height_rows(t), tw = tile_width_bytes(t);
            const uint64_t last_row = uint64_t(y + h - 1) / th, last_col = (uint64_t(x + w) * cpp - 1) / tw;
            return off + (last_row * (pitch / tw) + last_col + 1) * 4096;
        };
        *src_end = std::max(*src_end, side_end(b.src_tiling, b.src_offset, b.src_pitch, b.src_x, b.src_y));
        *dst_end = std::max(*dst_end, side_end(b.dst_tiling, b.dst_offset, b.dst_pitch, b.dst_x1, b.dst_y1));
    }
}

}  // namespace cldmabuf::i915
