#include "layer/blit/copy_checks.hpp"

namespace cldmabuf {
namespace {

bool in_bounds(uint64_t off, uint64_t len, uint64_t size) { return off <= size && len <= size - off; }

bool mul_add(uint64_t a, uint64_t b, uint64_t c, uint64_t *out) {
    uint64_t m;
    if (__builtin_mul_overflow(a, b, &m)) return false;
    return !__builtin_add_overflow(m, c, out);
}

// Byte offset of origin and one past the last byte of a rect side, or false on overflow.
bool rect_span(const uint64_t origin[3], const uint64_t region[3], uint64_t rp, uint64_t sp, uint64_t *first,
               uint64_t *end) {
    uint64_t off = origin[0], t;
    if (!mul_add(origin[1], rp, off, &t)) return false;
    if (!mul_add(origin[2], sp, t, &off)) return false;
    uint64_t last;
    if (!mul_add(region[2] - 1, sp, off, &t)) return false;
    if (!mul_add(region[1] - 1, rp, t, &last)) return false;
    if (__builtin_add_overflow(last, region[0], &last)) return false;
    *first = off;
    *end = last;
    return true;
}

}  // namespace

bool wait_list_consistent(cl_uint num_events, const cl_event *wait_list) {
    return (num_events == 0) == (wait_list == nullptr);
}

bool sub_buffer_origin_aligned(uint64_t base, cl_uint align_bits) {
    const uint64_t align = align_bits / 8;
    return align <= 1 || base % align == 0;
}

cl_int check_copy_buffer(const CopySide &src, const CopySide &dst, bool same_storage, uint64_t src_offset,
                         uint64_t dst_offset, uint64_t size) {
    if (!in_bounds(src_offset, size, src.size) || !in_bounds(dst_offset, size, dst.size)) return CL_INVALID_VALUE;
    if (same_storage && size) {
        const uint64_t s = src.base + src_offset, d = dst.base + dst_offset;
        if (s < d + size && d < s + size) return CL_MEM_COPY_OVERLAP;
    }
    return CL_SUCCESS;
}

cl_int normalize_rect(const size_t *src_origin, const size_t *dst_origin, const size_t *region,
                      size_t src_row_pitch, size_t src_slice_pitch, size_t dst_row_pitch,
                      size_t dst_slice_pitch, const CopySide &src, const CopySide &dst, RectArgs *out) {
    if (!src_origin || !dst_origin || !region) return CL_INVALID_VALUE;
    RectArgs r;
    for (int i = 0; i < 3; ++i) {
        r.src_origin[i] = src_origin[i];
        r.dst_origin[i] = dst_origin[i];
        r.region[i] = region[i];
        if (region[i] == 0) return CL_INVALID_VALUE;
    }
    auto pitches = [&](size_t row, size_t slice, uint64_t *rp, uint64_t *sp) {
        if (row != 0 && row < region[0]) return false;
        *rp = row ? row : region[0];
        uint64_t min_slice;
        if (__builtin_mul_overflow(uint64_t(region[1]), *rp, &min_slice)) return false;
        if (slice != 0 && (slice < min_slice || slice % *rp != 0)) return false;
        *sp = slice ? slice : min_slice;
        return true;
    };
    if (!pitches(src_row_pitch, src_slice_pitch, &r.src_row_pitch, &r.src_slice_pitch) ||
        !pitches(dst_row_pitch, dst_slice_pitch, &r.dst_row_pitch, &r.dst_slice_pitch))
        return CL_INVALID_VALUE;
    uint64_t first, end;
    if (!rect_span(r.src_origin, r.region, r.src_row_pitch, r.src_slice_pitch, &first, &end) || end > src.size)
        return CL_INVALID_VALUE;
    if (!rect_span(r.dst_origin, r.region, r.dst_row_pitch, r.dst_slice_pitch, &first, &end) || end > dst.size)
        return CL_INVALID_VALUE;
    *out = r;
    return CL_SUCCESS;
}

bool same_buffer_pitches_allowed(const RectArgs &r) {
    return r.src_row_pitch == r.dst_row_pitch || r.src_slice_pitch == r.dst_slice_pitch;
}

bool rects_overlap(const RectArgs &r, const CopySide &src, const CopySide &dst) {
    uint64_t s_first, s_end, d_first, d_end;
    rect_span(r.src_origin, r.region, r.src_row_pitch, r.src_slice_pitch, &s_first, &s_end);
    rect_span(r.dst_origin, r.region, r.dst_row_pitch, r.dst_slice_pitch, &d_first, &d_end);
    s_first += src.base, s_end += src.base, d_first += dst.base, d_end += dst.base;
    if (!(s_first < d_end && d_first < s_end)) return false;  // spans apart
    // Rows of each side are disjoint and ascending (pitch >= width, slice
    // pitch >= height * row pitch), so walk both lists in order.
    const uint64_t w = r.region[0], h = r.region[1], rows = r.region[1] * r.region[2];
    auto row_start = [&](uint64_t i, uint64_t first, uint64_t rp, uint64_t sp) {
        return first + (i / h) * sp + (i % h) * rp;
    };
    uint64_t i = 0, j = 0;
    while (i < rows && j < rows) {
        const uint64_t a = row_start(i, s_first, r.src_row_pitch, r.src_slice_pitch);
        const uint64_t b = row_start(j, d_first, r.dst_row_pitch, r.dst_slice_pitch);
        if (a < b + w && b < a + w) return true;
        if (a + w <= b) ++i; else ++j;
    }
    return false;
}

bool region_given(const size_t *origin_a, const size_t *origin_b, const size_t *region) {
    return origin_a && origin_b && region;
}

bool region_nonzero(const size_t *region) { return region[0] != 0 && region[1] != 0 && region[2] != 0; }

bool region_inside(const size_t *origin, const size_t *region, const uint64_t extent[3]) {
    for (int i = 0; i < 3; ++i) {
        uint64_t end;
        if (__builtin_add_overflow(uint64_t{origin[i]}, uint64_t{region[i]}, &end) || end > extent[i]) return false;
    }
    return true;
}

bool packed_range_inside(uint64_t offset, const size_t *region, uint64_t elem, uint64_t size) {
    uint64_t row, slice, bytes, end;
    return !__builtin_mul_overflow(uint64_t{region[0]}, elem, &row) &&
           !__builtin_mul_overflow(row, uint64_t{region[1]}, &slice) &&
           !__builtin_mul_overflow(slice, uint64_t{region[2]}, &bytes) &&
           !__builtin_add_overflow(offset, bytes, &end) && end <= size;
}

}  // namespace cldmabuf
