// Oracle and rule tests for the virtual Gen9 BCS engine.
//
// The oracle is deliberately independent of the engine: surfaces are kept as
// a logical row-major image and converted to/from GPU memory by walking the
// tiles in memory order (a running byte counter), never through
// tiling.hpp; copies are done pixel by pixel, as IGT gem_blits.c's
// memcpy_blt does.
#include <catch2/catch_test_macros.hpp>

#include <cerrno>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bcs_engine.hpp"

using namespace vgen9;

namespace {

// ---------------------------------------------------------------- memory
class FakeAS : public AddressSpace {
public:
    std::vector<uint8_t> &add(uint64_t gpu, size_t size, uint8_t fill = 0) {
        auto &v = regions_[gpu];
        v.assign(size, fill);
        return v;
    }
    std::vector<uint8_t> &at(uint64_t gpu) { return regions_.at(gpu); }
    uint8_t *translate(uint64_t a, uint64_t len) override {
        ++calls;
        auto it = regions_.upper_bound(a);
        if (it == regions_.begin()) return nullptr;
        --it;
        const uint64_t off = a - it->first;
        if (off > it->second.size() || len > it->second.size() - off) return nullptr;
        return it->second.data() + off;
    }
    uint64_t calls = 0;

private:
    std::map<uint64_t, std::vector<uint8_t>> regions_;
};

struct Logs {
    std::vector<std::string> lines;
    LogFn fn() {
        return [this](const std::string &s) { lines.push_back(s); };
    }
    size_t count(const std::string &needle) const {
        size_t n = 0;
        for (auto &l : lines) n += l.find(needle) != std::string::npos;
        return n;
    }
};

// ---------------------------------------------------------------- encoder
// A tiny batch encoder.  Field layout per the reference notes section 2
// ([K] gt/intel_gpu_commands.h:240-281, [IGT] lib/intel_reg.h:2580-2600).
namespace enc {
// MI_NOOP: MI client (31:29 = 0), opcode 0 -> 0x00000000.
constexpr uint32_t kNoop = 0;
// MI_BATCH_BUFFER_END: MI opcode 0x0A in bits 28:23 -> 0x0A << 23 = 0x05000000.
constexpr uint32_t kBbe = 0x0Au << 23;
// MI_FLUSH_DW: opcode 0x26 << 23 = 0x13000000; bits 7:0 = dwords - 2.
// 4-dword form (IGT): header, address lo, address hi, data.
// 5-dword form (Mesa): one more data dword.
inline void flush_dw(std::vector<uint32_t> &b, bool five = false) {
    b.push_back((0x26u << 23) | (five ? 3u : 2u));
    b.insert(b.end(), five ? 4 : 3, 0u);
}
// MI_LOAD_REGISTER_IMM(1): opcode 0x22 << 23 = 0x11000000, length 1 (3 dwords - 2);
// then the register offset and the value.
inline void lri(std::vector<uint32_t> &b, uint32_t reg, uint32_t val) {
    b.push_back((0x22u << 23) | 1u);
    b.push_back(reg);
    b.push_back(val);
}
constexpr uint32_t kBcsSwctrl = 0x22200;  // bit0 SRC_Y, bit1 DST_Y, masked (high 16 = enables)

struct Blt {
    bool fast = false;        // XY_FAST_COPY_BLT instead of XY_SRC_COPY_BLT
    uint32_t depth = 0;       // BR13 / dw1 bits 26:24 (colour depth code)
    uint32_t rop = 0xCC;      // XY_SRC_COPY_BLT only: BR13 23:16
    bool write_a = true, write_rgb = true;  // XY_SRC_COPY_BLT dw0 bits 21 / 20
    bool src_tiled = false, dst_tiled = false;  // XY_SRC_COPY_BLT dw0 bits 15 / 11
    uint32_t src_tm = 0, dst_tm = 0;  // XY_FAST_COPY_BLT dw0 21:20 / 14:13 (0 L, 1 X, 2 Y/Yf, 3 Ys)
    bool src_yf = false, dst_yf = false;  // XY_FAST_COPY_BLT dw1 bits 31 / 30
    bool clip = false;        // BR13 bit 30
    int32_t dst_pitch = 0, src_pitch = 0;  // field values (bytes if linear, dwords if tiled)
    int32_t dx1 = 0, dy1 = 0, dx2 = 0, dy2 = 0, sx1 = 0, sy1 = 0;
    uint64_t dst = 0, src = 0;  // 48-bit GPU addresses
};

inline uint32_t xy(int32_t x, int32_t y) {  // 31:16 y, 15:0 x, both s16
    return (static_cast<uint32_t>(static_cast<uint16_t>(y)) << 16) | static_cast<uint16_t>(x);
}

inline void blit(std::vector<uint32_t> &b, const Blt &c) {
    uint32_t dw0, dw1;
    if (c.fast) {
        // XY_FAST_COPY_BLT: client 2 << 29 | opcode 0x42 << 22 = 0x50800000, length 8.
        dw0 = 0x50800000u | (c.src_tm << 20) | (c.dst_tm << 13) | 8u;
        dw1 = (c.src_yf ? 1u << 31 : 0u) | (c.dst_yf ? 1u << 30 : 0u) | (c.depth << 24) |
              static_cast<uint16_t>(c.dst_pitch);
    } else {
        // XY_SRC_COPY_BLT: client 2 << 29 | opcode 0x53 << 22 = 0x54C00000, length 8.
        dw0 = 0x54C00000u | (c.write_a ? 1u << 21 : 0u) | (c.write_rgb ? 1u << 20 : 0u) |
              (c.src_tiled ? 1u << 15 : 0u) | (c.dst_tiled ? 1u << 11 : 0u) | 8u;
        dw1 = (c.clip ? 1u << 30 : 0u) | (c.depth << 24) | (c.rop << 16) |
              static_cast<uint16_t>(c.dst_pitch);
    }
    b.push_back(dw0);
    b.push_back(dw1);
    b.push_back(xy(c.dx1, c.dy1));                      // dw2 BR22 dst x1/y1
    b.push_back(xy(c.dx2, c.dy2));                      // dw3 BR23 dst x2/y2 (exclusive)
    b.push_back(static_cast<uint32_t>(c.dst));          // dw4 dst address 31:0
    b.push_back(static_cast<uint32_t>(c.dst >> 32));    // dw5 dst address 47:32
    b.push_back(xy(c.sx1, c.sy1));                      // dw6 BR26 src x1/y1
    b.push_back(static_cast<uint16_t>(c.src_pitch));    // dw7 BR11 src pitch
    b.push_back(static_cast<uint32_t>(c.src));          // dw8 src address 31:0
    b.push_back(static_cast<uint32_t>(c.src >> 32));    // dw9 src address 47:32
}

inline void end(std::vector<uint32_t> &b) {
    b.push_back(kBbe);
    if (b.size() % 2) b.push_back(kNoop);  // batch length must be a multiple of 8 bytes
}
}  // namespace enc

int run(const std::vector<uint32_t> &b, FakeAS &as, BcsState &st, Logs &logs,
        std::string *why = nullptr) {
    std::string w;
    const int c = check_batch(b.data(), b.size() * 4, &w);
    if (why) *why = w;
    if (c) return c;
    return execute_batch(b.data(), b.size() * 4, as, st, logs.fn());
}

// One blit and the batch's end, run on a fresh engine state: run()'s answer.
int run_one_blit(const enc::Blt &c, FakeAS &as, Logs &logs) {
    std::vector<uint32_t> b;
    enc::blit(b, c);
    enc::end(b);
    BcsState st;
    return run(b, as, st, logs);
}

// ---------------------------------------------------------------- oracle
enum class T { L, X, Y };
const char *tname(T t) { return t == T::L ? "L" : t == T::X ? "X" : "Y"; }

// Calls fn(memory_index, logical_index) for every byte of a surface of
// `pitch` bytes x `rows`, walking memory sequentially.  Logical index is
// row * pitch + byte-in-row.
template <typename F>
void walk_memory(T t, size_t pitch, size_t rows, F fn) {
    size_t m = 0;
    if (t == T::L) {
        for (size_t i = 0; i < pitch * rows; ++i) fn(m++, i);
        return;
    }
    if (t == T::X) {
        // X: 4 KiB tiles in row-major order; each tile is 8 rows of 512 bytes.
        for (size_t ty = 0; ty < rows / 8; ++ty)
            for (size_t tx = 0; tx < pitch / 512; ++tx)
                for (size_t r = 0; r < 8; ++r)
                    for (size_t c = 0; c < 512; ++c)
                        fn(m++, (ty * 8 + r) * pitch + tx * 512 + c);
        return;
    }
    // Y: 4 KiB tiles in row-major order; each tile is 8 columns of 16-byte
    // OWords, a column being 32 rows stored top to bottom.
    for (size_t ty = 0; ty < rows / 32; ++ty)
        for (size_t tx = 0; tx < pitch / 128; ++tx)
            for (size_t col = 0; col < 8; ++col)
                for (size_t r = 0; r < 32; ++r)
                    for (size_t c = 0; c < 16; ++c)
                        fn(m++, (ty * 32 + r) * pitch + tx * 128 + col * 16 + c);
}

std::vector<uint8_t> to_logical(T t, size_t pitch, size_t rows, const std::vector<uint8_t> &mem) {
    std::vector<uint8_t> img(pitch * rows);
    walk_memory(t, pitch, rows, [&](size_t m, size_t l) { img[l] = mem[m]; });
    return img;
}

std::vector<uint8_t> to_memory(T t, size_t pitch, size_t rows, const std::vector<uint8_t> &img) {
    std::vector<uint8_t> mem(pitch * rows);
    walk_memory(t, pitch, rows, [&](size_t m, size_t l) { mem[m] = img[l]; });
    return mem;
}

struct OSurf {
    T t;
    size_t pitch, rows;  // bytes, rows
    uint64_t gpu;
};

uint32_t env_u32(const char *name, uint32_t dflt) {
    const char *s = std::getenv(name);
    return s && *s ? static_cast<uint32_t>(std::strtoul(s, nullptr, 0)) : dflt;
}

}  // namespace

// ============================================================ random oracle
TEST_CASE("random XY_SRC_COPY_BLT / XY_FAST_COPY_BLT copies match the CPU oracle", "[oracle]") {
    const uint32_t seed = env_u32("VGEN9_SEED", 0x6E9B17u);
    const uint32_t iters = env_u32("VGEN9_ITERS", 3600);
    std::printf("vgen9-engine oracle: seed=0x%X iterations=%u (override with VGEN9_SEED / VGEN9_ITERS)\n",
                seed, iters);
    std::mt19937_64 rng(seed);
    auto rnd = [&](uint64_t n) { return n ? rng() % n : 0; };  // [0, n)

    unsigned n_src = 0, n_fast = 0, n_y_swctrl = 0;
    for (uint32_t it = 0; it < iters; ++it) {
        const bool fast = rnd(100) < 40;
        uint32_t cpp, depth;
        if (fast) {
            static const uint32_t kDepth[5] = {0, 1, 3, 4, 5};
            const uint32_t k = rnd(5);
            depth = kDepth[k];
            cpp = 1u << k;  // 1, 2, 4, 8, 16
        } else {
            depth = rnd(4);
            static const uint32_t kCpp[4] = {1, 2, 2, 4};
            cpp = kCpp[depth];
        }
        auto pick_tiling = [&]() {
            if (fast) return rnd(2) ? T::Y : T::L;
            const uint64_t r = rnd(3);
            return r == 0 ? T::L : r == 1 ? T::X : T::Y;
        };
        auto make = [&](T t, uint64_t gpu) {
            OSurf s{t, 0, 0, gpu};
            if (t == T::X) { s.pitch = 512 * (1 + rnd(4)); s.rows = 8 * (1 + rnd(8)); }
            else if (t == T::Y) { s.pitch = 128 * (1 + rnd(8)); s.rows = 32 * (1 + rnd(3)); }
            else {
                s.pitch = fast ? 16 * (1 + rnd(64)) : 4 * (1 + rnd(256));
                if (s.pitch < cpp) s.pitch = cpp;
                s.rows = 1 + rnd(64);
            }
            return s;
        };
        // Distinct, 48-bit, sometimes above 4 GiB; tiled bases 4 KiB aligned,
        // linear ones 64 B aligned.
        const uint64_t hi = rnd(4) == 0 ? (rnd(0xFFFF) + 1) << 32 : 0;
        const T dt = pick_tiling(), stt = pick_tiling();
        OSurf src = make(stt, hi + 0x10000000 + 0x1000 * rnd(256) + (stt == T::L ? 64 * rnd(64) : 0));
        OSurf dst = make(dt, hi + 0x40000000 + 0x1000 * rnd(256) + (dt == T::L ? 64 * rnd(64) : 0));

        const size_t sw = src.pitch / cpp, dw = dst.pitch / cpp;
        const size_t maxw = std::min(sw, dw), maxh = std::min(src.rows, dst.rows);
        size_t w = rnd(8) == 0 ? maxw : 1 + rnd(maxw);
        size_t h = rnd(8) == 0 ? maxh : 1 + rnd(maxh);
        size_t dx = rnd(dw - w + 1), sx = rnd(sw - w + 1);
        const size_t dy = rnd(dst.rows - h + 1), sy = rnd(src.rows - h + 1);
        if (fast) {  // linear fast copy: x * cpp must be 16 B aligned
            const size_t a = cpp >= 16 ? 1 : 16 / cpp;
            if (dst.t == T::L) dx -= dx % a;
            if (src.t == T::L) sx -= sx % a;
        }
        bool wa = true, wrgb = true;
        if (!fast && cpp == 4) {
            const uint64_t r = rnd(10);
            if (r == 7) wa = false;
            else if (r == 8) wrgb = false;
            else if (r == 9) wa = wrgb = false;
        }

        FakeAS as;
        auto &smem = as.add(src.gpu, src.pitch * src.rows);
        auto &dmem = as.add(dst.gpu, dst.pitch * dst.rows);
        for (auto &b : smem) b = static_cast<uint8_t>(rng());
        for (auto &b : dmem) b = static_cast<uint8_t>(rng());
        const std::vector<uint8_t> src_before = smem;

        // Oracle.
        const auto s_img = to_logical(src.t, src.pitch, src.rows, smem);
        auto d_img = to_logical(dst.t, dst.pitch, dst.rows, dmem);
        for (size_t r = 0; r < h; ++r)
            for (size_t x = 0; x < w; ++x)
                for (size_t b = 0; b < cpp; ++b) {
                    if (cpp == 4 && !fast && ((b == 3 && !wa) || (b < 3 && !wrgb))) continue;
                    d_img[(dy + r) * dst.pitch + (dx + x) * cpp + b] =
                        s_img[(sy + r) * src.pitch + (sx + x) * cpp + b];
                }
        const auto expect = to_memory(dst.t, dst.pitch, dst.rows, d_img);

        // Batch.
        enc::Blt c;
        c.fast = fast;
        c.depth = depth;
        c.write_a = wa;
        c.write_rgb = wrgb;
        const bool s_tiled = src.t != T::L, d_tiled = dst.t != T::L;
        c.src_tiled = s_tiled;
        c.dst_tiled = d_tiled;
        c.src_tm = src.t == T::Y ? 2 : 0;
        c.dst_tm = dst.t == T::Y ? 2 : 0;
        c.dst_pitch = static_cast<int32_t>(d_tiled ? dst.pitch / 4 : dst.pitch);
        c.src_pitch = static_cast<int32_t>(s_tiled ? src.pitch / 4 : src.pitch);
        c.dx1 = static_cast<int32_t>(dx); c.dy1 = static_cast<int32_t>(dy);
        c.dx2 = static_cast<int32_t>(dx + w); c.dy2 = static_cast<int32_t>(dy + h);
        c.sx1 = static_cast<int32_t>(sx); c.sy1 = static_cast<int32_t>(sy);
        c.dst = dst.gpu;
        c.src = src.gpu;
        std::vector<uint32_t> b;
        const uint32_t swbits = (!fast && src.t == T::Y ? 1u : 0u) | (!fast && dst.t == T::Y ? 2u : 0u);
        if (swbits) {  // [M] brw_blit.c:71-122, [IGT] gem_blits.c:205-281
            enc::flush_dw(b, rnd(2));
            enc::lri(b, enc::kBcsSwctrl, (3u << 16) | swbits);
            enc::blit(b, c);
            enc::flush_dw(b, rnd(2));
            enc::lri(b, enc::kBcsSwctrl, 3u << 16);
            ++n_y_swctrl;
        } else {
            enc::blit(b, c);
        }
        enc::end(b);
        (fast ? n_fast : n_src)++;

        BcsState st;
        Logs logs;
        std::string why;
        const int rc = run(b, as, st, logs, &why);
        char desc[400];
        std::snprintf(desc, sizeof desc,
                      "iter %u %s cpp %u src %s pitch %zu rows %zu @0x%llx (%zu,%zu) -> dst %s pitch %zu "
                      "rows %zu @0x%llx (%zu,%zu) size %zux%zu wa %d wrgb %d",
                      it, fast ? "FAST" : "SRC", cpp, tname(src.t), src.pitch, src.rows,
                      static_cast<unsigned long long>(src.gpu), sx, sy, tname(dst.t), dst.pitch,
                      dst.rows, static_cast<unsigned long long>(dst.gpu), dx, dy, w, h, wa, wrgb);
        INFO(desc);
        INFO(why);
        REQUIRE(rc == 0);
        REQUIRE(st.bcs_swctrl == 0);
        REQUIRE(logs.lines.empty());
        REQUIRE(smem == src_before);
        long first_bad = -1;
        for (size_t i = 0; i < expect.size(); ++i)
            if (expect[i] != dmem[i]) { first_bad = static_cast<long>(i); break; }
        INFO("first mismatching destination byte: " << first_bad);
        REQUIRE(first_bad == -1);
    }
    std::printf("vgen9-engine oracle: %u XY_SRC_COPY_BLT (%u with Y via BCS_SWCTRL), %u XY_FAST_COPY_BLT\n",
                n_src, n_y_swctrl, n_fast);
    if (!std::getenv("VGEN9_ITERS")) CHECK(n_src + n_fast >= 3000);
}

// ============================================================ parser rules
TEST_CASE("parser: -EINVAL cases", "[parser]") {
    std::string why;
    SECTION("empty or unaligned batch") {
        uint32_t b[2] = {enc::kBbe, 0};
        CHECK(check_batch(b, 0, &why) == -EINVAL);
        CHECK(check_batch(b, 6, &why) == -EINVAL);
    }
    SECTION("no MI_BATCH_BUFFER_END") {
        std::vector<uint32_t> b(8, enc::kNoop);
        CHECK(check_batch(b.data(), b.size() * 4, &why) == -EINVAL);
        CHECK(why.find("BBE") != std::string::npos);
    }
    SECTION("blit ends exactly at the batch end without BBE") {
        std::vector<uint32_t> b;
        enc::Blt c;
        c.dst_pitch = c.src_pitch = 64;
        enc::blit(b, c);
        CHECK(check_batch(b.data(), b.size() * 4, &why) == -EINVAL);
    }
    SECTION("command runs past the batch end") {
        std::vector<uint32_t> b;
        enc::Blt c;
        enc::blit(b, c);
        b.resize(6);  // truncated XY_SRC_COPY_BLT (needs 10 dwords)
        CHECK(check_batch(b.data(), b.size() * 4, &why) == -EINVAL);
        CHECK(why.find("exceeds") != std::string::npos);
    }
    SECTION("MI_FLUSH_DW length uses mask 0x3F: 0x13000042 is 4 dwords, not 0x44") {
        std::vector<uint32_t> b = {(0x26u << 23) | 0x42u, 0, 0, 0, enc::kBbe, 0};
        CHECK(check_batch(b.data(), b.size() * 4, &why) == 0);
    }
    SECTION("non-MI, non-2D client (3D PIPE_CONTROL) is unrecognised") {
        std::vector<uint32_t> b = {0x7A000004u, 0, 0, 0, 0, 0, enc::kBbe, 0};
        CHECK(check_batch(b.data(), b.size() * 4, &why) == -EINVAL);
        CHECK(why.find("Unrecognized") != std::string::npos);
    }
    SECTION("BBE is recognised by exact value: 0x05000001 is a 3-dword unlisted MI command") {
        std::vector<uint32_t> b = {0x05000001u, 0, 0, enc::kBbe};  // 3 dwords, then BBE
        CHECK(check_batch(b.data(), b.size() * 4, &why) == 0);
        std::vector<uint32_t> b2 = {0x05000001u, enc::kBbe};  // swallows the BBE -> runs past end
        CHECK(check_batch(b2.data(), b2.size() * 4, &why) == -EINVAL);
    }
    SECTION("MI_BATCH_BUFFER_START with a bad length") {
        std::vector<uint32_t> b = {(0x31u << 23) | (1u << 8) | 2u, 0, 0, 0, enc::kBbe, 0};
        CHECK(check_batch(b.data(), b.size() * 4, &why) == -EACCES);  // bitmask rule fires first
    }
}

TEST_CASE("parser: -EACCES for registers outside the Gen9 BCS whitelist", "[parser]") {
    std::string why;
    auto lri_batch = [](uint32_t reg) {
        std::vector<uint32_t> b;
        enc::lri(b, reg, 0);
        enc::end(b);
        return b;
    };
    for (uint32_t reg : {0x2000u, 0x22204u, 0x2358u + 8, 0x12358u, 0x22680u, 0x7300u}) {
        auto b = lri_batch(reg);
        INFO("reg " << reg);
        CHECK(check_batch(b.data(), b.size() * 4, &why) == -EACCES);
    }
    // Whitelist (i915_cmd_parser.c gen9_blt_regs[]): timestamps, BCS_SWCTRL, CTX timestamp, GPRs.
    for (uint32_t reg : {0x2358u, 0x235Cu, 0x4358u, 0x435Cu, 0x22200u, 0x22358u, 0x2235Cu, 0x223A8u,
                         0x22600u, 0x22604u, 0x2267Cu}) {
        auto b = lri_batch(reg);
        INFO("reg " << reg);
        CHECK(check_batch(b.data(), b.size() * 4, &why) == 0);
    }
    // Register bits outside 0x007FFFFC are ignored by the check.
    auto b = lri_batch(0x22200u | 0x3u | 0x80000000u);
    CHECK(check_batch(b.data(), b.size() * 4, &why) == 0);
    // Multi-register LRI: every register is checked.
    std::vector<uint32_t> m = {(0x22u << 23) | 3u, 0x22200u, 0x30000u, 0x2000u, 0, enc::kBbe};
    CHECK(check_batch(m.data(), m.size() * 4, &why) == -EACCES);
    // SRM / LRM (fixed 4 dwords) and LRR are register commands too.
    std::vector<uint32_t> srm = {(0x24u << 23) | 2u, 0x2000u, 0, 0, enc::kBbe, 0};
    CHECK(check_batch(srm.data(), srm.size() * 4, &why) == -EACCES);
    std::vector<uint32_t> lrr = {(0x2Au << 23) | 1u, 0x22600u, 0x2000u, enc::kBbe};
    CHECK(check_batch(lrr.data(), lrr.size() * 4, &why) == -EACCES);
    // BB_START must be exactly PPGTT | length 1 in bits 22:0.
    std::vector<uint32_t> bbs = {(0x31u << 23) | 1u, 0, 0, enc::kBbe};  // GGTT
    CHECK(check_batch(bbs.data(), bbs.size() * 4, &why) == -EACCES);
}

TEST_CASE("parser passes what Gen9 BCS does not reject; the executor hangs on it", "[parser][exec]") {
    FakeAS as;
    BcsState st;
    std::string why;
    const std::vector<std::vector<uint32_t>> cmds = {
        {0x10000002u, 0, 0, 0},             // MI_STORE_DWORD_IMM (gen8 4-dword form)
        {0x04000000u},                      // MI_ARB_ON_OFF (rejected on gen7, allowed on gen9)
        {0x02800000u},                      // MI_ARB_CHECK
        {0x54000005u, 0, 0, 0, 0, 0, 0},    // XY_COLOR_BLT (2D opcode 0x50), unlisted 2D
        {(0x31u << 23) | (1u << 8) | 1u, 0x1000, 0},  // MI_BATCH_BUFFER_START (jump not validated)
    };
    for (const auto &c : cmds) {
        std::vector<uint32_t> b = c;
        enc::end(b);
        Logs logs;
        INFO("cmd " << c[0]);
        CHECK(check_batch(b.data(), b.size() * 4, &why) == 0);
        CHECK(execute_batch(b.data(), b.size() * 4, as, st, logs.fn()) == -EIO);
        CHECK(logs.count("hang") == 1);
    }
}

// ============================================================ executor rules
TEST_CASE("BCS_SWCTRL masked-register semantics within a batch", "[exec]") {
    FakeAS as;
    Logs logs;
    BcsState st;
    std::vector<uint32_t> b;
    enc::lri(b, enc::kBcsSwctrl, (1u << 16) | 1u);  // set SRC_Y
    enc::end(b);
    REQUIRE(run(b, as, st, logs) == 0);
    CHECK(st.bcs_swctrl == 1);
    b.clear();
    enc::lri(b, enc::kBcsSwctrl, 3u);  // no write enables: no change
    enc::end(b);
    REQUIRE(run(b, as, st, logs) == 0);
    CHECK(st.bcs_swctrl == 1);
    b.clear();
    enc::lri(b, enc::kBcsSwctrl, (2u << 16) | 2u);  // set DST_Y only
    enc::end(b);
    REQUIRE(run(b, as, st, logs) == 0);
    CHECK(st.bcs_swctrl == 3);
    b.clear();
    enc::lri(b, enc::kBcsSwctrl, 1u << 16);  // clear SRC_Y only
    enc::end(b);
    REQUIRE(run(b, as, st, logs) == 0);
    CHECK(st.bcs_swctrl == 2);
    b.clear();
    enc::lri(b, enc::kBcsSwctrl, 3u << 16);  // reset both
    enc::end(b);
    REQUIRE(run(b, as, st, logs) == 0);
    CHECK(st.bcs_swctrl == 0);
    CHECK(logs.lines.empty());
}

TEST_CASE("BCS_SWCTRL set and reset in one batch changes how the blit reads Y", "[exec]") {
    // Source: 128 B x 32 rows Y-tiled, byte value = its memory index & 0xFF,
    // copied as 8bpp X-interpreted vs Y-interpreted into a linear dst.
    FakeAS as;
    auto &s = as.add(0x100000, 4096);
    for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<uint8_t>(i * 7 + 3);
    auto &d = as.add(0x200000, 128 * 32);
    enc::Blt c;
    c.depth = 0;
    c.src_tiled = true;
    c.src_pitch = 128 / 4;  // dwords
    c.dst_pitch = 128;
    c.dx2 = 32;  // first 32 bytes of row 1
    c.dy1 = 1;
    c.dy2 = 2;
    c.sy1 = 1;
    c.dst = 0x200000;
    c.src = 0x100000;
    std::vector<uint32_t> b;
    enc::flush_dw(b);
    enc::lri(b, enc::kBcsSwctrl, (1u << 16) | 1u);
    enc::blit(b, c);
    enc::flush_dw(b, true);
    enc::lri(b, enc::kBcsSwctrl, 3u << 16);
    enc::end(b);
    BcsState st;
    Logs logs;
    REQUIRE(run(b, as, st, logs) == 0);
    CHECK(st.bcs_swctrl == 0);
    // Y tile: row 1 bytes 0..15 at memory 16..31, bytes 16..31 at 512+16..512+31.
    for (int x = 0; x < 32; ++x) {
        const size_t m = x < 16 ? 16 + x : 512 + 16 + (x - 16);
        CHECK(d[128 + x] == s[m]);
    }
    // Without the LRI, the pitch-128 "tiled" source is X-tiled: 128 is not a
    // multiple of 512, so the engine refuses (-EIO).
    b.clear();
    enc::blit(b, c);
    enc::end(b);
    CHECK(run(b, as, st, logs) == -EIO);
}

TEST_CASE("unsupported encodings hang with -EIO and one log line", "[exec]") {
    FakeAS as;
    as.add(0x100000, 1 << 16);
    as.add(0x200000, 1 << 16);
    auto base = [] {
        enc::Blt c;
        c.dst_pitch = c.src_pitch = 256;
        c.dx2 = 16;
        c.dy2 = 4;
        c.dst = 0x200000;
        c.src = 0x100000;
        return c;
    };
    std::vector<std::pair<const char *, enc::Blt>> cases;
    { auto c = base(); c.rop = 0xF0; cases.push_back({"ROP 0xF0", c}); }
    { auto c = base(); c.rop = 0x66; cases.push_back({"ROP XOR", c}); }
    { auto c = base(); c.clip = true; cases.push_back({"clip enable", c}); }
    { auto c = base(); c.fast = true; c.dst_tm = 1; c.dst_pitch = 128; cases.push_back({"fast X", c}); }
    { auto c = base(); c.fast = true; c.src_tm = 2; c.src_yf = true; c.src_pitch = 32; cases.push_back({"fast Yf", c}); }
    { auto c = base(); c.fast = true; c.dst_tm = 3; c.dst_pitch = 32; cases.push_back({"fast Ys", c}); }
    { auto c = base(); c.fast = true; c.depth = 2; cases.push_back({"fast depth 2", c}); }
    { auto c = base(); c.dst_tiled = true; c.dst_pitch = 100; cases.push_back({"X pitch 400 B", c}); }
    { auto c = base(); c.dst_tiled = true; c.dst_pitch = 128; c.dst = 0x200040; cases.push_back({"tiled base unaligned", c}); }
    for (auto &[name, c] : cases) {
        INFO(name);
        std::vector<uint32_t> b;
        enc::blit(b, c);
        enc::end(b);
        BcsState st;
        Logs logs;
        CHECK(run(b, as, st, logs) == -EIO);
        CHECK(logs.lines.size() == 1);
        CHECK(logs.count("-EIO") == 1);
    }
    SECTION("pre-Gen8 8-dword XY_SRC_COPY_BLT") {
        std::vector<uint32_t> b = {0x54C00006u, 0xCC0100u, 0, 0x00010001u, 0x200000, 0, 64, 0x100000};
        enc::end(b);
        BcsState st;
        Logs logs;
        CHECK(run(b, as, st, logs) == -EIO);
    }
    SECTION("MI_FLUSH_DW with a post-sync write") {
        std::vector<uint32_t> b = {(0x26u << 23) | (1u << 14) | 2u, 0x1000, 0, 0};
        enc::end(b);
        BcsState st;
        Logs logs;
        CHECK(run(b, as, st, logs) == -EIO);
    }
    SECTION("executor without a BBE") {
        std::vector<uint32_t> b = {0, 0};
        BcsState st;
        Logs logs;
        CHECK(execute_batch(b.data(), 8, as, st, logs.fn()) == -EIO);
    }
}

TEST_CASE("scratch-page behaviour for unmapped accesses", "[exec]") {
    SECTION("destination rows past the object are dropped, one log line") {
        FakeAS as;
        auto &s = as.add(0x100000, 256 * 32, 0xAB);
        auto &d = as.add(0x200000, 4096, 0x00);  // 16 rows of 256 B
        enc::Blt c;
        c.dst_pitch = c.src_pitch = 256;
        c.dx2 = 256;
        c.dy2 = 20;  // rows 16..19 fall outside
        c.dst = 0x200000;
        c.src = 0x100000;
        Logs logs;
        REQUIRE(run_one_blit(c, as, logs) == 0);
        CHECK(logs.lines.size() == 1);
        CHECK(logs.count("scratch") == 1);
        for (auto v : d) CHECK(v == 0xAB);
        (void)s;
    }
    SECTION("a row straddling the end of the object is written up to the end") {
        FakeAS as;
        as.add(0x100000, 4096, 0x5A);
        auto &d = as.add(0x200000, 100, 0x00);
        enc::Blt c;
        c.dst_pitch = c.src_pitch = 256;
        c.depth = 3;  // 32bpp
        c.dx2 = 40;   // 160 bytes, only 100 mapped
        c.dy2 = 1;
        c.dst = 0x200000;
        c.src = 0x100000;
        Logs logs;
        REQUIRE(run_one_blit(c, as, logs) == 0);
        CHECK(logs.count("scratch") == 1);
        for (auto v : d) CHECK(v == 0x5A);
    }
    SECTION("unmapped source reads as zero") {
        FakeAS as;
        auto &d = as.add(0x200000, 64 * 4, 0xEE);
        enc::Blt c;
        c.dst_pitch = c.src_pitch = 64;
        c.dx2 = 64;
        c.dy2 = 4;
        c.dst = 0x200000;
        c.src = 0xDEAD0000;  // nothing there
        Logs logs;
        REQUIRE(run_one_blit(c, as, logs) == 0);
        CHECK(logs.count("scratch") == 1);
        for (auto v : d) CHECK(v == 0);
    }
}

TEST_CASE("edge coordinates", "[exec]") {
    SECTION("x2 <= x1 or y2 <= y1 draws nothing and touches no memory") {
        FakeAS as;
        auto &d = as.add(0x200000, 4096, 0x11);
        as.add(0x100000, 4096, 0x22);
        for (auto [x1, y1, x2, y2] : {std::array{5, 0, 5, 4}, std::array{6, 0, 5, 4},
                                      std::array{0, 3, 4, 3}, std::array{0, 4, 4, 1}}) {
            enc::Blt c;
            c.dst_pitch = c.src_pitch = 64;
            c.dx1 = x1; c.dy1 = y1; c.dx2 = x2; c.dy2 = y2;
            c.dst = 0x200000;
            c.src = 0x100000;
            Logs logs;
            as.calls = 0;
            REQUIRE(run_one_blit(c, as, logs) == 0);
            CHECK(as.calls == 0);
            CHECK(logs.lines.empty());
        }
        for (auto v : d) CHECK(v == 0x11);
    }
    SECTION("x = 32766..32767 at 8bpp linear") {
        FakeAS as;
        auto &d = as.add(0x200000, 2 * 32767 + 64, 0);
        auto &s = as.add(0x100000, 2 * 32767 + 64, 0);
        s[32767 + 32766] = 0x77;  // src row 1, x 32766 (pitch 32767)
        enc::Blt c;
        c.dst_pitch = c.src_pitch = 32767;
        c.dx1 = 32766; c.dx2 = 32767; c.dy1 = 1; c.dy2 = 2;
        c.sx1 = 32766; c.sy1 = 1;
        c.dst = 0x200000;
        c.src = 0x100000;
        Logs logs;
        REQUIRE(run_one_blit(c, as, logs) == 0);
        CHECK(logs.count("scratch") == 0);
        CHECK(d[32767 + 32766] == 0x77);
        size_t nonzero = 0;
        for (auto v : d) nonzero += v != 0;
        CHECK(nonzero == 1);
    }
    SECTION("negative x on a linear surface addresses below the base") {
        FakeAS as;
        auto &d = as.add(0x200000 - 64, 64 + 256, 0);  // object begins 64 B below the blit base
        auto &s = as.add(0x100000, 256, 0);
        for (int i = 0; i < 8; ++i) s[i] = static_cast<uint8_t>(0x90 + i);
        enc::Blt c;
        c.dst_pitch = c.src_pitch = 64;
        c.dx1 = -4; c.dx2 = 4; c.dy1 = 0; c.dy2 = 1;  // dst bytes base-4 .. base+3
        c.dst = 0x200000;
        c.src = 0x100000;
        Logs logs;
        REQUIRE(run_one_blit(c, as, logs) == 0);
        for (int i = 0; i < 8; ++i) CHECK(d[60 + i] == 0x90 + i);
        CHECK(logs.lines.empty());
    }
    SECTION("negative coordinates on a tiled surface hit the scratch page") {
        FakeAS as;
        auto &d = as.add(0x200000, 4096, 0);
        as.add(0x100000, 4096, 0x33);
        enc::Blt c;
        c.dst_tiled = true;
        c.dst_pitch = 512 / 4;
        c.src_pitch = 64;
        c.dx1 = -2; c.dx2 = 2; c.dy1 = -1; c.dy2 = 1;
        c.dst = 0x200000;
        c.src = 0x100000;
        Logs logs;
        REQUIRE(run_one_blit(c, as, logs) == 0);
        CHECK(logs.count("scratch") == 1);
        // only row 0, x 0..1 are addressable: X-tile bytes 0 and 1
        size_t nonzero = 0;
        for (auto v : d) nonzero += v != 0;
        CHECK(nonzero == 2);
        CHECK(d[0] == 0x33);
        CHECK(d[1] == 0x33);
    }
    SECTION("negative source y on linear surfaces reads rows above the base") {
        FakeAS as;
        auto &s = as.add(0x100000 - 128, 128 + 128, 0);
        for (int i = 0; i < 64; ++i) s[64 + i] = static_cast<uint8_t>(i + 1);  // row -1
        auto &d = as.add(0x200000, 64, 0);
        enc::Blt c;
        c.dst_pitch = c.src_pitch = 64;
        c.dx2 = 64; c.dy2 = 1;
        c.sy1 = -1;
        c.dst = 0x200000;
        c.src = 0x100000;
        Logs logs;
        REQUIRE(run_one_blit(c, as, logs) == 0);
        for (int i = 0; i < 64; ++i) CHECK(d[i] == i + 1);
    }
}

TEST_CASE("32bpp write-enable bits pick the channels written", "[exec]") {
    for (int mode = 0; mode < 4; ++mode) {
        const bool wa = mode & 2, wrgb = mode & 1;
        FakeAS as;
        auto &s = as.add(0x100000, 16, 0);
        for (int i = 0; i < 16; ++i) s[i] = static_cast<uint8_t>(0xA0 + i);
        auto &d = as.add(0x200000, 16, 0x01);
        enc::Blt c;
        c.depth = 3;
        c.write_a = wa;
        c.write_rgb = wrgb;
        c.dst_pitch = c.src_pitch = 16;
        c.dx2 = 4; c.dy2 = 1;
        c.dst = 0x200000;
        c.src = 0x100000;
        Logs logs;
        REQUIRE(run_one_blit(c, as, logs) == 0);
        for (int i = 0; i < 16; ++i) {
            const bool alpha = (i % 4) == 3;
            const bool written = alpha ? wa : wrgb;
            INFO("mode " << mode << " byte " << i);
            CHECK(d[i] == (written ? 0xA0 + i : 0x01));
        }
    }
    // 8/16bpp ignore the bits: everything is copied.
    FakeAS as;
    as.add(0x100000, 16, 0x42);
    auto &d = as.add(0x200000, 16, 0);
    enc::Blt c;
    c.depth = 1;
    c.write_a = c.write_rgb = false;
    c.dst_pitch = c.src_pitch = 16;
    c.dx2 = 8; c.dy2 = 1;
    c.dst = 0x200000;
    c.src = 0x100000;
    Logs logs;
    REQUIRE(run_one_blit(c, as, logs) == 0);
    for (auto v : d) CHECK(v == 0x42);
}

TEST_CASE("48-bit addresses use dw5/dw9 bits 15:0", "[exec]") {
    FakeAS as;
    const uint64_t hi_src = 0xFFFF00000000ull + 0x1000, hi_dst = 0x812300000000ull;
    auto &s = as.add(hi_src, 64, 0x9C);
    auto &d = as.add(hi_dst, 64, 0);
    enc::Blt c;
    c.dst_pitch = c.src_pitch = 64;
    c.dx2 = 64; c.dy2 = 1;
    c.dst = hi_dst;
    c.src = hi_src;
    std::vector<uint32_t> b;
    enc::blit(b, c);
    b[5] |= 0xABCD0000u;  // bits 31:16 of the high dword are ignored
    enc::end(b);
    BcsState st;
    Logs logs;
    REQUIRE(run(b, as, st, logs) == 0);
    CHECK(d == s);
}

TEST_CASE("64 MiB linear 8bpp copy is fast", "[perf]") {
    FakeAS as;
    const int32_t pitch = 32704;           // Mesa's 32768-64 style pitch
    const int32_t rows = (64 << 20) / pitch + 1;  // 2053 rows -> 67,141,312 B
    auto &s = as.add(0x100000000ull, size_t(pitch) * rows);
    auto &d = as.add(0x200000000ull, size_t(pitch) * rows);
    for (size_t i = 0; i < s.size(); i += 4093) s[i] = static_cast<uint8_t>(i);
    enc::Blt c;
    c.dst_pitch = c.src_pitch = pitch;
    c.dx2 = pitch;
    c.dy2 = rows;
    c.dst = 0x200000000ull;
    c.src = 0x100000000ull;
    std::vector<uint32_t> b;
    enc::blit(b, c);
    enc::end(b);
    BcsState st;
    Logs logs;
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE(run(b, as, st, logs) == 0);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("vgen9-engine: 64 MiB linear 8bpp copy (%d rows x %d B) took %.1f ms, %llu translate calls\n",
                rows, pitch, ms, static_cast<unsigned long long>(as.calls));
    CHECK(d == s);
    CHECK(ms < 1000.0);
}
