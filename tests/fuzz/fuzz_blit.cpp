// Fuzz target 3: the Gen9 blit planner and batch encoder (layer/i915:
// blit_plan, batch_builder, batch_encoder) behind the spec's copy checks
// (layer/blit/copy_checks), with the virtual Gen9's command parser and
// engine (tests/sim/engine) as the oracle.
//
// Three request shapes, as the layer makes them: clEnqueueCopyBuffer
// (sub-buffer sides, one import or two), clEnqueueCopyBufferRect (the rect
// the checks normalised, as layer/blit/buffer_copy.cpp builds it) and
// image-style 2D copies with X/Y-tiled sides (layer/blit/tiled_shadow.cpp).
// For every request the layer would send to the blitter, asserted:
//  * the spec's overlap rule for one buffer (rects_overlap) is exact: it
//    agrees with the byte sets of the two rectangles;
//  * the plan exists (buffer copies; a rect or 2D copy may be refused, it
//    then goes to the ICD), copies exactly the requested bytes once, and
//    plan_extent (the bound BltEngine::submit_plan checks) stays inside the
//    objects the checks accepted;
//  * the batch passes the i915 command parser model (check_batch) and is no
//    longer than batch_dwords_for says;
//  * executed on two random objects softpinned apart, it never addresses
//    outside them (every translation lands in one object), raises no engine
//    warning, and leaves the destination bit-exactly equal to a CPU
//    reference copy (memcpy / rect / tiled addressing) with every other
//    byte untouched.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bcs_engine.hpp"
#include "fuzz_input.hpp"
#include "layer/blit/copy_checks.hpp"
#include "layer/i915/batch_builder.hpp"
#include "layer/i915/blit_plan.hpp"
#include "tiling.hpp"

using namespace cldmabuf;
using i915::Tiling;

namespace {

constexpr uint64_t kSrcGpu = uint64_t{1} << 32;  // softpinned GPU addresses, far apart
constexpr uint64_t kDstGpu = uint64_t{3} << 32;
constexpr uint64_t kMaxObject = 4u << 20;         // bigger objects are planned and parsed, not run

struct Object {
    uint64_t gpu = 0;
    std::vector<uint8_t> bytes;
};

// The execbuffer's address space: exactly the objects, nothing else.
class Space : public vgen9::AddressSpace {
public:
    Space(Object *a, Object *b) : objs_{a, b} {}
    uint8_t *translate(uint64_t addr, uint64_t len) override {
        for (Object *o : objs_) {
            if (!o) continue;
            const uint64_t size = o->bytes.size();
            if (addr >= o->gpu && addr - o->gpu <= size && len <= size - (addr - o->gpu))
                return o->bytes.data() + (addr - o->gpu);
        }
        outside = true;
        return nullptr;
    }
    bool outside = false;

private:
    Object *objs_[2];
};

void fill(std::vector<uint8_t> &v, uint32_t seed) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    size_t i = 0;
    for (; i + 8 <= v.size(); i += 8) {  // splitmix64, a word at a time: objects are large
        x += 0x9E3779B97F4A7C15ull;
        uint64_t z = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        std::memcpy(v.data() + i, &z, 8);
    }
    for (; i < v.size(); ++i) v[i] = static_cast<uint8_t>(x >> (8 * (i % 8)));
}

// Plans are judged the same way whatever made them.
void check_plan_and_run(const i915::BlitPlan &plan, uint64_t want_bytes, Object &src, Object &dst, bool same,
                        const std::vector<uint8_t> &expected_dst) {
    uint64_t covered = 0;
    for (const i915::Blit &b : plan.blits) {
        FUZZ_ASSERT(b.bpp == 8 || b.bpp == 16 || b.bpp == 32);
        FUZZ_ASSERT(b.dst_x2 > b.dst_x1 && b.dst_y2 > b.dst_y1);  // no empty blit
        FUZZ_ASSERT(b.dst_x1 >= 0 && b.dst_y1 >= 0 && b.src_x >= 0 && b.src_y >= 0);
        FUZZ_ASSERT(b.dst_x2 <= i915::kMaxCoord && b.dst_y2 <= i915::kMaxCoord);
        FUZZ_ASSERT(int64_t{b.src_x} + (b.dst_x2 - b.dst_x1) <= i915::kMaxCoord &&
                    int64_t{b.src_y} + (b.dst_y2 - b.dst_y1) <= i915::kMaxCoord);
        covered += uint64_t(b.dst_x2 - b.dst_x1) * uint64_t(b.dst_y2 - b.dst_y1) * (b.bpp / 8);
    }
    FUZZ_ASSERT(plan.bytes == want_bytes);
    FUZZ_ASSERT(covered == want_bytes);  // every byte once
    uint64_t src_end = 0, dst_end = 0;
    i915::plan_extent(plan, &src_end, &dst_end);
    const Object &dobj = same ? src : dst;
    if (src_end > src.bytes.size() || dst_end > dobj.bytes.size())
        std::fprintf(stderr, "fuzz: plan_extent src %llu of %zu, dst %llu of %zu bytes\n",
                     static_cast<unsigned long long>(src_end), src.bytes.size(),
                     static_cast<unsigned long long>(dst_end), dobj.bytes.size());
    FUZZ_ASSERT(src_end <= src.bytes.size() && dst_end <= dobj.bytes.size());

    std::vector<uint32_t> batch;
    i915::build_batch(batch, plan, src.gpu, same ? src.gpu : dst.gpu);
    FUZZ_ASSERT(batch.size() <= i915::batch_dwords_for(plan));
    FUZZ_ASSERT(batch.size() % 2 == 0);
    std::string why;
    if (vgen9::check_batch(batch.data(), batch.size() * 4, &why) != 0) {
        std::fprintf(stderr, "fuzz: the command parser rejects the batch: %s\n", why.c_str());
        FUZZ_ASSERT(!"batch parses");
    }
    if (src.bytes.size() > kMaxObject || dobj.bytes.size() > kMaxObject) return;
    Space space(&src, same ? nullptr : &dst);
    vgen9::BcsState state;
    std::string log;
    const int r = vgen9::execute_batch(batch.data(), batch.size() * 4, space, state,
                                       [&log](const std::string &s) { log += s + "\n"; });
    if (r != 0 || !log.empty()) std::fprintf(stderr, "fuzz: engine said: %s", log.c_str());
    FUZZ_ASSERT(r == 0);
    FUZZ_ASSERT(!space.outside);
    FUZZ_ASSERT(log.empty());
    FUZZ_ASSERT(state.bcs_swctrl == 0);  // the batch leaves BCS_SWCTRL as it found it
    const std::vector<uint8_t> &got = same ? src.bytes : dst.bytes;
    if (got != expected_dst) {
        size_t i = 0;
        while (got[i] == expected_dst[i]) ++i;
        std::fprintf(stderr, "fuzz: first wrong destination byte at %zu\n", i);
        FUZZ_ASSERT(!"bit-exact copy");
    }
}

Object make_object(FuzzedDataProvider &in, uint64_t gpu, uint64_t size) {
    Object o;
    o.gpu = gpu;
    o.bytes.resize(size);
    fill(o.bytes, in.ConsumeIntegral<uint32_t>());
    return o;
}

void copy_buffer(FuzzedDataProvider &in) {
    const bool same = in.ConsumeBool();
    Object src = make_object(in, kSrcGpu, fuzz::size(in, 256 << 10) % (kMaxObject + 1));
    Object dst = same ? Object{} : make_object(in, kDstGpu, fuzz::size(in, 256 << 10) % (kMaxObject + 1));
    Object &dobj = same ? src : dst;
    // Each side may be a sub-buffer of its import.
    CopySide s, d;
    s.base = std::min<uint64_t>(fuzz::size(in, 70000), src.bytes.size());
    s.size = std::min<uint64_t>(fuzz::size(in, 256 << 10), src.bytes.size() - s.base);
    d.base = std::min<uint64_t>(fuzz::size(in, 70000), dobj.bytes.size());
    d.size = std::min<uint64_t>(fuzz::size(in, 256 << 10), dobj.bytes.size() - d.base);
    const uint64_t so = fuzz::size(in, 70000), dof = fuzz::size(in, 70000), n = fuzz::size(in, 256 << 10);
    if (check_copy_buffer(s, d, same, so, dof, n) != CL_SUCCESS || n == 0) return;
    i915::BlitPlan plan;
    FUZZ_ASSERT(i915::plan_copy_buffer({s.base + so, d.base + dof, n}, &plan) == 0);
    std::vector<uint8_t> expected = dobj.bytes;
    std::memcpy(expected.data() + d.base + dof, src.bytes.data() + s.base + so, n);
    check_plan_and_run(plan, n, src, dst, same, expected);
}

void copy_rect(FuzzedDataProvider &in) {
    const bool same = in.ConsumeBool();
    Object src = make_object(in, kSrcGpu, fuzz::size(in, 512 << 10) % (kMaxObject + 1));
    Object dst = same ? Object{} : make_object(in, kDstGpu, fuzz::size(in, 512 << 10) % (kMaxObject + 1));
    Object &dobj = same ? src : dst;
    CopySide s{0, src.bytes.size()}, d{0, dobj.bytes.size()};
    if (in.ConsumeBool()) {  // sub-buffers
        s.base = std::min<uint64_t>(fuzz::size(in, 4096), s.size);
        s.size -= s.base;
        d.base = std::min<uint64_t>(fuzz::size(in, 4096), d.size);
        d.size -= d.base;
    }
    size_t so[3], dor[3], region[3];
    for (int i = 0; i < 3; ++i) {
        so[i] = fuzz::size(in, i == 0 ? 40000 : 64);
        dor[i] = fuzz::size(in, i == 0 ? 40000 : 64);
        region[i] = fuzz::size(in, i == 0 ? 40000 : i == 1 ? 64 : 8);
    }
    const size_t srp = fuzz::size(in, 70000), ssp = fuzz::size(in, 1 << 20);
    const size_t drp = fuzz::size(in, 70000), dsp = fuzz::size(in, 1 << 20);
    RectArgs r;
    if (normalize_rect(so, dor, region, srp, ssp, drp, dsp, s, d, &r) != CL_SUCCESS) return;
    // One buffer: the spec's pitch rule and CL_MEM_COPY_OVERLAP (layer/blit/owned_sides.cpp).
    // rects_overlap is exact: checked against the byte sets when they are small.
    if (same && r.region[0] * r.region[1] * r.region[2] <= (1u << 16)) {
        std::vector<uint8_t> touched(src.bytes.size());
        for (uint64_t z = 0; z < r.region[2]; ++z)
            for (uint64_t y = 0; y < r.region[1]; ++y)
                std::memset(touched.data() + s.base + (r.src_origin[2] + z) * r.src_slice_pitch +
                                (r.src_origin[1] + y) * r.src_row_pitch + r.src_origin[0],
                            1, r.region[0]);
        bool overlap = false;
        for (uint64_t z = 0; z < r.region[2] && !overlap; ++z)
            for (uint64_t y = 0; y < r.region[1] && !overlap; ++y) {
                const uint8_t *row = touched.data() + d.base + (r.dst_origin[2] + z) * r.dst_slice_pitch +
                                     (r.dst_origin[1] + y) * r.dst_row_pitch + r.dst_origin[0];
                overlap = std::memchr(row, 1, r.region[0]) != nullptr;
            }
        FUZZ_ASSERT(rects_overlap(r, s, d) == overlap);
    }
    if (same && (!same_buffer_pitches_allowed(r) || rects_overlap(r, s, d))) return;
    i915::RectCopy rc;
    rc.src_base = s.base, rc.dst_base = d.base;
    rc.src_x = r.src_origin[0], rc.src_y = r.src_origin[1], rc.src_z = r.src_origin[2];
    rc.dst_x = r.dst_origin[0], rc.dst_y = r.dst_origin[1], rc.dst_z = r.dst_origin[2];
    rc.width = r.region[0], rc.height = r.region[1], rc.depth = r.region[2];
    rc.src_row_pitch = r.src_row_pitch, rc.src_slice_pitch = r.src_slice_pitch;
    rc.dst_row_pitch = r.dst_row_pitch, rc.dst_slice_pitch = r.dst_slice_pitch;
    i915::BlitPlan plan;
    if (i915::plan_copy_rect(rc, &plan) != 0) return;  // the ICD copies it
    std::vector<uint8_t> expected = dobj.bytes;
    for (uint64_t z = 0; z < rc.depth; ++z)
        for (uint64_t y = 0; y < rc.height; ++y)
            std::memcpy(expected.data() + d.base + (rc.dst_z + z) * rc.dst_slice_pitch +
                            (rc.dst_y + y) * rc.dst_row_pitch + rc.dst_x,
                        src.bytes.data() + s.base + (rc.src_z + z) * rc.src_slice_pitch +
                            (rc.src_y + y) * rc.src_row_pitch + rc.src_x,
                        rc.width);
    check_plan_and_run(plan, rc.width * rc.height * rc.depth, src, dst, same, expected);
}

// Byte `xb` of row `y` of an image side, in its object.
uint64_t side_addr(const i915::ImageSide &s, uint64_t xb, uint64_t y) {
    if (s.tiling == Tiling::Linear) return s.offset + y * s.pitch + xb;
    const auto t = s.tiling == Tiling::X ? vgen9::tiling::Tiling::X : vgen9::tiling::Tiling::Y;
    return s.offset + vgen9::tiling::tiled_offset(t, xb, y, s.pitch);
}

i915::ImageSide image_side(FuzzedDataProvider &in) {
    i915::ImageSide s;
    s.tiling = static_cast<Tiling>(in.ConsumeIntegralInRange<int>(0, 2));
    s.offset = in.ConsumeBool() ? 4096 * in.ConsumeIntegralInRange<uint64_t>(0, 8) : fuzz::size(in, 9000);
    s.pitch = static_cast<uint32_t>(in.ConsumeBool() ? 128 * in.ConsumeIntegralInRange<uint32_t>(1, 64)
                                                     : fuzz::size(in, 140000));
    s.x = static_cast<uint32_t>(fuzz::size(in, 600));
    s.y = static_cast<uint32_t>(fuzz::size(in, 100));
    return s;
}

void copy_2d(FuzzedDataProvider &in) {
    i915::ImageCopy c;
    c.elem_size = static_cast<uint32_t>(fuzz::pick(in, {1, 2, 4, 8, 16, 3}));
    c.src = image_side(in);
    c.dst = image_side(in);
    c.width = static_cast<uint32_t>(fuzz::size(in, 300));
    c.height = static_cast<uint32_t>(fuzz::size(in, 80));
    // The surfaces the layer copies lie inside imports it mapped: a request
    // spanning more than 1 GiB on a side has no such import (and would plan
    // a blit per row of it).
    for (const i915::ImageSide *sd : {&c.src, &c.dst})
        if (sd->offset + (uint64_t{sd->y} + c.height) * std::max<uint64_t>(sd->pitch, 1) > (uint64_t{1} << 30)) return;
    i915::BlitPlan plan;
    if (i915::plan_copy_2d(c, &plan) != 0 || plan.blits.empty()) return;
    // The objects: exactly as large as the plan says it reaches, plus maybe some.
    uint64_t src_end = 0, dst_end = 0;
    i915::plan_extent(plan, &src_end, &dst_end);
    const uint64_t slack = in.ConsumeIntegralInRange<uint64_t>(0, 64);
    const uint64_t es = c.elem_size;
    // The region itself must lie inside what plan_extent reports.
    for (uint64_t y = 0; y < c.height; y += std::max<uint64_t>(1, c.height - 1)) {
        FUZZ_ASSERT(side_addr(c.src, (c.src.x + uint64_t{c.width}) * es - 1, c.src.y + y) < src_end);
        FUZZ_ASSERT(side_addr(c.dst, (c.dst.x + uint64_t{c.width}) * es - 1, c.dst.y + y) < dst_end);
    }
    if (src_end + slack > kMaxObject || dst_end + slack > kMaxObject) return;
    Object src = make_object(in, kSrcGpu, src_end + slack);
    Object dst = make_object(in, kDstGpu, dst_end + slack);
    std::vector<uint8_t> expected = dst.bytes;
    for (uint64_t y = 0; y < c.height; ++y)
        for (uint64_t xb = 0; xb < uint64_t{c.width} * es; ++xb)
            expected[side_addr(c.dst, c.dst.x * es + xb, c.dst.y + y)] =
                src.bytes[side_addr(c.src, c.src.x * es + xb, c.src.y + y)];
    check_plan_and_run(plan, uint64_t{c.width} * c.height * es, src, dst, false, expected);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzedDataProvider in(data, size);
    switch (in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0: copy_buffer(in); break;
    case 1: copy_rect(in); break;
    default: copy_2d(in); break;
    }
    return 0;
}
