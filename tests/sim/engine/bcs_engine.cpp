// The virtual Gen9 BCS: command parser (check_batch) and executor
// (execute_batch).  See docs/virtual-gen9-engine.md for what is and is
// not modelled, with citations.
//
// Parser model: Linux i915_cmd_parser.c (read at freebsd/drm-kmod @129bf0f2,
// drivers/gpu/drm/i915/i915_cmd_parser.c): gen9_blt_cmds[] :473-509,
// gen9_blt_regs[] :683-706, gen9_blt_get_cmd_length_mask() :791-800,
// find_cmd() :1101-1122, check_cmd() :1240-1340, intel_engine_cmd_parser()
// loop :1480-1532.  No code was copied; the rules are re-expressed here.
#include "bcs_engine.hpp"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

#include "tiling.hpp"

namespace vgen9 {

namespace {

using tiling::Tiling;

constexpr uint32_t kMiBatchBufferEnd = 0x05000000;  // MI_INSTR(0x0a, 0)
constexpr uint32_t kClientMi = 0;
constexpr uint32_t kClientBc = 2;  // 2D / blitter client

constexpr uint32_t client_of(uint32_t h) { return h >> 29; }
constexpr uint32_t mi_opcode(uint32_t h) { return (h >> 23) & 0x3F; }
constexpr uint32_t bc_opcode(uint32_t h) { return (h >> 22) & 0x7F; }

// MI opcodes (gt/intel_gpu_commands.h).
enum : uint32_t {
    kMiNoop = 0x00,
    kMiUserInterrupt = 0x02,
    kMiWaitForEvent = 0x03,
    kMiFlush = 0x04,
    kMiArbCheck = 0x05,
    kMiReportHead = 0x07,
    kMiArbOnOff = 0x08,
    kMiBatchBufferEndOp = 0x0A,
    kMiSuspendFlush = 0x0B,
    kMiLoadScanLinesIncl = 0x12,
    kMiLoadScanLinesExcl = 0x13,
    kMiStoreDwordImm = 0x20,
    kMiLoadRegisterImm = 0x22,
    kMiUpdateGtt = 0x23,
    kMiStoreRegisterMem = 0x24,
    kMiFlushDw = 0x26,
    kMiLoadRegisterMem = 0x29,
    kMiLoadRegisterReg = 0x2A,
    kMiBatchBufferStart = 0x31,
};

// 2D opcodes (bits 28:22).
enum : uint32_t {
    kXyFastCopyBlt = 0x42,
    kXySrcCopyBlt = 0x53,
};

constexpr uint32_t kBcsSwctrl = 0x22200;
constexpr uint32_t kRegMask = 0x007FFFFC;  // .reg.mask in gen9_blt_cmds[]

// gen9_blt_regs[] expanded (i915_cmd_parser.c:683-706).  BSD_RING_BASE is
// 0x04000 in i915_reg.h:290 (the Gen4/5 base; the kernel table uses it as is).
bool reg_whitelisted(uint32_t reg) {
    switch (reg) {
    case 0x02358: case 0x0235C:   // RING_TIMESTAMP(RENDER_RING_BASE) + UDW
    case 0x04358: case 0x0435C:   // RING_TIMESTAMP(BSD_RING_BASE) + UDW
    case kBcsSwctrl:              // BCS_SWCTRL
    case 0x22358: case 0x2235C:   // RING_TIMESTAMP(BLT_RING_BASE) + UDW
    case 0x223A8:                 // RING_CTX_TIMESTAMP(BLT_RING_BASE)
        return true;
    default:
        // GEN8_RING_CS_GPR(BLT_RING_BASE, 0..15) + UDW: 0x22600..0x2267C
        return reg >= 0x22600 && reg <= 0x2267C && (reg & 3) == 0;
    }
}

std::string hex32(uint32_t v) {
    char b[16];
    std::snprintf(b, sizeof b, "0x%08X", v);
    return b;
}

// How the parser sees one command header.
struct Desc {
    enum Kind { Unknown, Fixed, Masked } kind = Unknown;
    uint32_t value = 0;       // fixed length or length mask
    uint32_t reg_step = 0;    // != 0: register command; step between regs (0xFFFF: "length")
    bool bb_start = false;
};

Desc parser_desc(uint32_t h) {
    Desc d;
    const uint32_t cl = client_of(h);
    if (cl == kClientMi) {
        switch (mi_opcode(h)) {
        case kMiNoop: case kMiUserInterrupt: case kMiWaitForEvent: case kMiFlush:
        case kMiArbCheck: case kMiReportHead: case kMiArbOnOff: case kMiSuspendFlush:
            d.kind = Desc::Fixed; d.value = 1; return d;
        case kMiLoadScanLinesIncl: case kMiLoadScanLinesExcl: case kMiFlushDw:
            d.kind = Desc::Masked; d.value = 0x3F; return d;
        case kMiStoreDwordImm: case kMiUpdateGtt:
            d.kind = Desc::Masked; d.value = 0x3FF; return d;
        case kMiLoadRegisterImm:
            d.kind = Desc::Masked; d.value = 0xFF; d.reg_step = 2; return d;
        case kMiStoreRegisterMem: case kMiLoadRegisterMem:
            d.kind = Desc::Fixed; d.value = 4; d.reg_step = 0xFFFF; return d;
        case kMiLoadRegisterReg:
            d.kind = Desc::Masked; d.value = 0xFF; d.reg_step = 1; return d;
        case kMiBatchBufferStart:
            d.kind = Desc::Masked; d.value = 0xFF; d.bb_start = true; return d;
        default:
            // Unlisted MI command: default descriptor, length mask 0xFF, skip.
            d.kind = Desc::Masked; d.value = 0xFF; return d;
        }
    }
    if (cl == kClientBc) {  // no 2D command is listed: default descriptor
        d.kind = Desc::Masked; d.value = 0xFF; return d;
    }
    return d;  // any other client: gen9_blt_get_cmd_length_mask() returns 0
}

void say(const LogFn &log, const std::string &s) {
    if (log) log(s);
}

constexpr uint64_t kAddrMask48 = (uint64_t{1} << 48) - 1;

struct Surface {
    uint64_t base = 0;   // 48-bit GPU address
    int64_t pitch = 0;   // bytes (tiled pitches already converted from dwords)
    Tiling tiling = Tiling::Linear;
};

const char *tiling_name(Tiling t) {
    return t == Tiling::X ? "X" : t == Tiling::Y ? "Y" : "linear";
}

// Moves bytes between a row buffer and one surface row, in contiguous runs.
class RowMover {
public:
    explicit RowMover(AddressSpace &as) : as_(as) {}

    bool scratch_hit() const { return scratch_hit_; }

    // Read `n` bytes at byte x `xB` of row `y` into `out` (unit = cpp).
    void read(const Surface &s, int64_t xB, int64_t y, uint64_t n, uint32_t unit, uint8_t *out) {
        walk(s, xB, y, n, unit, [&](uint8_t *p, uint64_t off, uint64_t len) {
            if (p) std::memcpy(out + off, p, len);
            else std::memset(out + off, 0, len);
        });
    }

    // Write `n` bytes from `in`; for cpp == 4 with mask4 != 0xF only the
    // enabled bytes of each pixel are stored (bit i = byte i).
    void write(const Surface &s, int64_t xB, int64_t y, uint64_t n, uint32_t unit, const uint8_t *in,
               uint32_t mask4) {
        walk(s, xB, y, n, unit, [&](uint8_t *p, uint64_t off, uint64_t len) {
            if (!p) return;  // dropped
            if (mask4 == 0xF || unit != 4) {
                std::memcpy(p, in + off, len);
                return;
            }
            for (uint64_t i = 0; i < len; i += 4)
                for (uint32_t b = 0; b < 4; ++b)
                    if (mask4 & (1u << b)) p[i + b] = in[off + i + b];
        });
    }

private:
    // Resolve the address of byte (xB, y); false when it has none (negative
    // coordinate on a tiled surface).
    static bool address(const Surface &s, int64_t xB, int64_t y, uint64_t *addr) {
        if (s.tiling == Tiling::Linear) {
            const int64_t off = y * s.pitch + xB;
            *addr = (s.base + static_cast<uint64_t>(off)) & kAddrMask48;
            return true;
        }
        if (xB < 0 || y < 0) return false;
        *addr = (s.base + tiling::tiled_offset(s.tiling, static_cast<uint64_t>(xB),
                                                static_cast<uint64_t>(y),
                                                static_cast<uint64_t>(s.pitch))) &
                kAddrMask48;
        return true;
    }

    template <typename F>
    void access(uint64_t addr, bool has_addr, uint64_t off, uint64_t len, uint32_t unit, F &fn) {
        uint8_t *p = has_addr ? as_.translate(addr, len) : nullptr;
        if (p) {
            fn(p, off, len);
            return;
        }
        if (!has_addr || len <= unit) {
            fn(nullptr, off, len);
            scratch_hit_ = true;
            return;
        }
        // Part of the run may be mapped: bisect on whole pixels.
        const uint64_t half = (len / unit / 2) * unit;
        access(addr, true, off, half, unit, fn);
        access((addr + half) & kAddrMask48, true, off + half, len - half, unit, fn);
    }

    template <typename F>
    void walk(const Surface &s, int64_t xB, int64_t y, uint64_t n, uint32_t unit, F fn) {
        uint64_t done = 0;
        while (done < n) {
            const int64_t pos = xB + static_cast<int64_t>(done);
            uint64_t run = n - done;
            if (s.tiling != Tiling::Linear) {
                if (pos < 0 || y < 0) {
                    run = unit;
                } else {
                    const uint64_t c = tiling::contiguous_run(s.tiling, static_cast<uint64_t>(pos));
                    if (c < run) run = c;
                }
            }
            uint64_t addr = 0;
            const bool has = address(s, pos, y, &addr);
            access(addr, has, done, run, unit, fn);
            done += run;
        }
    }

    AddressSpace &as_;
    bool scratch_hit_ = false;
};

struct Blit {
    const char *name;
    Surface dst, src;
    uint32_t cpp;
    int32_t dx1, dy1, dx2, dy2, sx1, sy1;
    uint32_t mask4;  // 32bpp channel write mask, 0xF otherwise
};

void run_blit(const Blit &b, AddressSpace &as, const LogFn &log) {
    if (b.dx2 <= b.dx1 || b.dy2 <= b.dy1) return;  // empty rectangle: nothing drawn
    const uint64_t w = static_cast<uint64_t>(b.dx2 - b.dx1);
    const int64_t h = b.dy2 - b.dy1;
    const uint64_t row_bytes = w * b.cpp;
    std::vector<uint8_t> row(row_bytes);
    RowMover mv(as);
    for (int64_t r = 0; r < h; ++r) {
        mv.read(b.src, int64_t{b.sx1} * b.cpp, b.sy1 + r, row_bytes, b.cpp, row.data());
        if (b.mask4 != 0)
            mv.write(b.dst, int64_t{b.dx1} * b.cpp, b.dy1 + r, row_bytes, b.cpp, row.data(),
                     b.mask4);
    }
    if (mv.scratch_hit()) {
        char msg[320];
        std::snprintf(msg, sizeof msg,
                      "vgen9: %s touched unmapped GPU memory (scratch page: reads zero, writes "
                      "dropped): dst 0x%" PRIx64 " pitch %" PRId64 " %s rect (%d,%d)-(%d,%d), "
                      "src 0x%" PRIx64 " pitch %" PRId64 " %s at (%d,%d), cpp %u",
                      b.name, b.dst.base, b.dst.pitch, tiling_name(b.dst.tiling), b.dx1, b.dy1,
                      b.dx2, b.dy2, b.src.base, b.src.pitch, tiling_name(b.src.tiling), b.sx1,
                      b.sy1, b.cpp);
        say(log, msg);
    }
}

int hang(const LogFn &log, size_t dw, const std::string &why) {
    say(log, "vgen9: GPU hang (-EIO) at batch dword " + std::to_string(dw) + ": " + why);
    return -EIO;
}

// Checks a tiled surface; returns an empty string when it is usable.
std::string tiled_problem(const char *which, const Surface &s) {
    if (s.tiling == Tiling::Linear) return {};
    const int64_t tw = static_cast<int64_t>(tiling::tile_width(s.tiling));
    if (s.pitch <= 0 || s.pitch % tw != 0)
        return std::string(which) + " " + tiling_name(s.tiling) + "-tiled pitch " +
               std::to_string(s.pitch) + " B is not a positive multiple of the tile width " +
               std::to_string(tw);
    if (s.base % tiling::kTileBytes != 0)
        return std::string(which) + " " + tiling_name(s.tiling) +
               "-tiled base address is not 4 KiB aligned";
    return {};
}

inline int16_t lo16(uint32_t v) { return static_cast<int16_t>(v & 0xFFFF); }
inline int16_t hi16(uint32_t v) { return static_cast<int16_t>(v >> 16); }
inline uint64_t addr48(uint32_t lo, uint32_t hi) {
    return (uint64_t{hi & 0xFFFF} << 32) | lo;
}

// DW2-DW6, DW8 and DW9 mean the same in XY_SRC_COPY_BLT and XY_FAST_COPY_BLT:
// the destination rectangle and address, the source origin and address.
void read_rectangles(const uint32_t *c, Blit &b) {
    b.dx1 = lo16(c[2]); b.dy1 = hi16(c[2]);
    b.dx2 = lo16(c[3]); b.dy2 = hi16(c[3]);
    b.dst.base = addr48(c[4], c[5]);
    b.sx1 = lo16(c[6]); b.sy1 = hi16(c[6]);
    b.src.base = addr48(c[8], c[9]);
}

int exec_src_copy(const uint32_t *c, size_t at, const BcsState &st, AddressSpace &as,
                  const LogFn &log) {
    const uint32_t dw0 = c[0], br13 = c[1];
    if ((br13 >> 26) & 1) return hang(log, at, "XY_SRC_COPY_BLT BR13 bit 26 set (reserved depth bit)");
    if ((br13 >> 30) & 1) return hang(log, at, "XY_SRC_COPY_BLT clipping enable not modelled");
    const uint32_t rop = (br13 >> 16) & 0xFF;
    if (rop != 0xCC) return hang(log, at, "XY_SRC_COPY_BLT ROP " + hex32(rop) + " not modelled (only 0xCC)");
    static constexpr uint32_t kCpp[4] = {1, 2, 2, 4};
    Blit b{};
    b.name = "XY_SRC_COPY_BLT";
    b.cpp = kCpp[(br13 >> 24) & 3];
    b.mask4 = 0xF;
    if (b.cpp == 4) b.mask4 = ((dw0 >> 20) & 1 ? 0x7u : 0u) | ((dw0 >> 21) & 1 ? 0x8u : 0u);
    const bool src_tiled = (dw0 >> 15) & 1, dst_tiled = (dw0 >> 11) & 1;
    b.dst.tiling = !dst_tiled ? Tiling::Linear : (st.bcs_swctrl & 2) ? Tiling::Y : Tiling::X;
    b.src.tiling = !src_tiled ? Tiling::Linear : (st.bcs_swctrl & 1) ? Tiling::Y : Tiling::X;
    b.dst.pitch = lo16(br13) * (dst_tiled ? 4 : 1);
    b.src.pitch = lo16(c[7]) * (src_tiled ? 4 : 1);
    read_rectangles(c, b);
    if (b.dx2 <= b.dx1 || b.dy2 <= b.dy1) return 0;
    for (auto [nm, s] : {std::pair{"dst", &b.dst}, std::pair{"src", &b.src}}) {
        const std::string p = tiled_problem(nm, *s);
        if (!p.empty()) return hang(log, at, std::string("XY_SRC_COPY_BLT ") + p);
        if (s->tiling == Tiling::Linear && (s->pitch % 4 != 0 || s->base % 64 != 0))
            say(log, std::string("vgen9: warning: XY_SRC_COPY_BLT linear ") + nm +
                         " pitch not a multiple of 4 or base not 64 B aligned (Mesa brw_blit.c rules)");
    }
    run_blit(b, as, log);
    return 0;
}

int exec_fast_copy(const uint32_t *c, size_t at, AddressSpace &as, const LogFn &log) {
    const uint32_t dw0 = c[0], dw1 = c[1];
    uint32_t cpp = 0;
    switch ((dw1 >> 24) & 7) {
    case 0: cpp = 1; break;
    case 1: cpp = 2; break;
    case 3: cpp = 4; break;
    case 4: cpp = 8; break;
    case 5: cpp = 16; break;
    default: return hang(log, at, "XY_FAST_COPY_BLT reserved colour depth " + std::to_string((dw1 >> 24) & 7));
    }
    Blit b{};
    b.name = "XY_FAST_COPY_BLT";
    b.cpp = cpp;
    b.mask4 = 0xF;
    const uint32_t tm[2] = {(dw0 >> 13) & 3, (dw0 >> 20) & 3};  // dst, src
    const bool yf[2] = {((dw1 >> 30) & 1) != 0, ((dw1 >> 31) & 1) != 0};
    Surface *surf[2] = {&b.dst, &b.src};
    const char *nm[2] = {"dst", "src"};
    for (int i = 0; i < 2; ++i) {
        switch (tm[i]) {
        case 0: surf[i]->tiling = Tiling::Linear; break;
        case 1: return hang(log, at, std::string("XY_FAST_COPY_BLT ") + nm[i] + " tiling X: not supported by fast copy on SKL");
        case 2:
            if (yf[i]) return hang(log, at, std::string("XY_FAST_COPY_BLT ") + nm[i] + " TileYf not modelled");
            surf[i]->tiling = Tiling::Y;
            break;
        default: return hang(log, at, std::string("XY_FAST_COPY_BLT ") + nm[i] + " TileYs not modelled");
        }
    }
    b.dst.pitch = lo16(dw1) * (b.dst.tiling != Tiling::Linear ? 4 : 1);
    b.src.pitch = lo16(c[7]) * (b.src.tiling != Tiling::Linear ? 4 : 1);
    read_rectangles(c, b);
    if (b.dx2 <= b.dx1 || b.dy2 <= b.dy1) return 0;
    const int32_t x1[2] = {b.dx1, b.sx1};
    for (int i = 0; i < 2; ++i) {
        const std::string p = tiled_problem(nm[i], *surf[i]);
        if (!p.empty()) return hang(log, at, std::string("XY_FAST_COPY_BLT ") + p);
        if (surf[i]->tiling == Tiling::Linear &&
            (surf[i]->pitch < 0 || surf[i]->pitch % 16 != 0 || surf[i]->base % 64 != 0 ||
             (int64_t{x1[i]} * cpp) % 16 != 0))
            say(log, std::string("vgen9: warning: XY_FAST_COPY_BLT linear ") + nm[i] +
                         ": pitch must be >= 0 and a multiple of 16, base 64 B aligned, x*cpp 16 B "
                         "aligned (Mesa bcee124ef75^ intel_blit.c rules)");
    }
    run_blit(b, as, log);
    return 0;
}

}  // namespace

int check_batch(const uint32_t *batch, size_t len_bytes, std::string *why) {
    auto fail = [&](int err, const std::string &s) {
        if (why) *why = s;
        return err;
    };
    if (len_bytes == 0 || len_bytes % 4 != 0 || !batch)
        return fail(-EINVAL, "batch length " + std::to_string(len_bytes) + " is zero or not dword aligned");
    const size_t n = len_bytes / 4;
    size_t i = 0;
    for (;;) {
        const uint32_t h = batch[i];
        if (h == kMiBatchBufferEnd) return 0;
        const Desc d = parser_desc(h);
        if (d.kind == Desc::Unknown)
            return fail(-EINVAL, "CMD: Unrecognized command " + hex32(h) + " at dword " + std::to_string(i));
        const uint32_t len = d.kind == Desc::Fixed ? d.value : (h & d.value) + 2;
        if (n - i < len)
            return fail(-EINVAL, "CMD: Command length exceeds batch length: " + hex32(h) + " length=" +
                                     std::to_string(len) + " at dword " + std::to_string(i) +
                                     " of " + std::to_string(n));
        if (d.reg_step) {
            const uint32_t step = d.reg_step == 0xFFFF ? len : d.reg_step;
            for (uint32_t off = 1; off < len; off += step) {
                const uint32_t reg = batch[i + off] & kRegMask;
                if (!reg_whitelisted(reg))
                    return fail(-EACCES, "CMD: Rejected register " + hex32(reg) + " in command " + hex32(h) +
                                             " at dword " + std::to_string(i));
            }
        }
        if (d.bb_start) {
            // Bitmask rule: dw0 bits 22:0 must be exactly MI_BATCH_PPGTT_HSW | 1.
            if ((h & 0x007FFFFF) != ((1u << 8) | 1u))
                return fail(-EACCES, "CMD: Rejected MI_BATCH_BUFFER_START " + hex32(h) + " (bitmask)");
            if (len != 3)
                return fail(-EINVAL, "CMD: Recursive BB_START with bad length " + std::to_string(len));
            // The kernel validates the jump target (check_bbstart) and stops
            // parsing here; the target is not checked by this model.
            return 0;
        }
        i += len;
        if (i >= n) return fail(-EINVAL, "CMD: Got to the end of the buffer w/o a BBE cmd!");
    }
}

int execute_batch(const uint32_t *batch, size_t len_bytes, AddressSpace &as, BcsState &state,
                  const LogFn &log) {
    const size_t n = len_bytes / 4;
    size_t i = 0;
    for (;;) {
        if (i >= n) return hang(log, i, "ran off the end of the batch without MI_BATCH_BUFFER_END");
        const uint32_t h = batch[i];
        const uint32_t cl = client_of(h);
        uint32_t len = 0;
        if (cl == kClientMi) {
            switch (mi_opcode(h)) {
            case kMiNoop:
                len = 1;
                break;
            case kMiBatchBufferEndOp:
                return 0;
            case kMiFlushDw: {
                len = (h & 0x3F) + 2;
                if (len != 4 && len != 5)
                    return hang(log, i, "MI_FLUSH_DW with " + std::to_string(len) + " dwords (expected 4 or 5)");
                if (n - i < len) return hang(log, i, "MI_FLUSH_DW runs past the batch end");
                if ((h >> 14) & 3)
                    return hang(log, i, "MI_FLUSH_DW post-sync operation not modelled");
                break;  // the engine is synchronous: a flush has nothing to do
            }
            case kMiLoadRegisterImm: {
                len = (h & 0xFF) + 2;
                if (n - i < len) return hang(log, i, "MI_LOAD_REGISTER_IMM runs past the batch end");
                if (len % 2 == 0) return hang(log, i, "MI_LOAD_REGISTER_IMM with an odd number of payload dwords");
                if ((h >> 8) & 0xF) return hang(log, i, "MI_LOAD_REGISTER_IMM byte-write disables not modelled");
                for (uint32_t off = 1; off + 1 < len; off += 2) {
                    const uint32_t reg = batch[i + off] & kRegMask;
                    const uint32_t val = batch[i + off + 1];
                    if (reg == kBcsSwctrl) {
                        const uint32_t m = val >> 16;  // masked register: high half = write enable
                        state.bcs_swctrl = ((state.bcs_swctrl & ~m) | (val & m)) & 0xFFFF;
                    } else if (reg_whitelisted(reg)) {
                        say(log, "vgen9: LRI to " + hex32(reg) + " accepted and ignored (not modelled)");
                    } else {
                        return hang(log, i, "MI_LOAD_REGISTER_IMM to non-whitelisted register " + hex32(reg));
                    }
                }
                break;
            }
            default:
                return hang(log, i, "unsupported MI command " + hex32(h) + " (opcode " +
                                        hex32(mi_opcode(h)) + ")");
            }
        } else if (cl == kClientBc) {
            const uint32_t op = bc_opcode(h);
            if (op != kXySrcCopyBlt && op != kXyFastCopyBlt)
                return hang(log, i, "unsupported 2D command " + hex32(h) + " (opcode " + hex32(op) + ")");
            len = (h & 0xFF) + 2;
            const char *nm = op == kXySrcCopyBlt ? "XY_SRC_COPY_BLT" : "XY_FAST_COPY_BLT";
            if (len != 10)
                return hang(log, i, std::string(nm) + " with " + std::to_string(len) +
                                        " dwords (the Gen8+ form has 10)");
            if (n - i < len) return hang(log, i, std::string(nm) + " runs past the batch end");
            const int r = op == kXySrcCopyBlt ? exec_src_copy(batch + i, i, state, as, log)
                                              : exec_fast_copy(batch + i, i, as, log);
            if (r) return r;
        } else {
            return hang(log, i, "unsupported command " + hex32(h) + " (client " + std::to_string(cl) + ")");
        }
        i += len;
    }
}

}  // namespace vgen9
