// The spec's argument rules for the copies the layer answers itself
// (layer/blit/copy_checks.hpp), one section per rule: the value that just
// passes and the one that just fails, plus the overflow cases.
#include <catch2/catch_test_macros.hpp>

#include <cstdint>

#include "layer/blit/copy_checks.hpp"

using namespace cldmabuf;

namespace {

constexpr uint64_t kMax = UINT64_MAX;

CopySide side(uint64_t base, uint64_t size) { return CopySide{base, size}; }

// A rect request of `region` with both sides' pitches given (0: default).
cl_int rect(const size_t so[3], const size_t dor[3], const size_t region[3], size_t srp, size_t ssp, size_t drp,
            size_t dsp, uint64_t src_size, uint64_t dst_size, RectArgs *out) {
    return normalize_rect(so, dor, region, srp, ssp, drp, dsp, side(0, src_size), side(0, dst_size), out);
}

}  // namespace

TEST_CASE("copy checks: the wait-list count and list must agree", "[blit][checks]") {
    const cl_event list[1] = {nullptr};
    CHECK(wait_list_consistent(0, nullptr));
    CHECK(wait_list_consistent(1, list));
    CHECK_FALSE(wait_list_consistent(0, list));
    CHECK_FALSE(wait_list_consistent(1, nullptr));
}

TEST_CASE("copy checks: a sub-buffer origin must be a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN", "[blit][checks]") {
    CHECK(sub_buffer_origin_aligned(0, 1024));    // 128 bytes
    CHECK(sub_buffer_origin_aligned(256, 1024));
    CHECK_FALSE(sub_buffer_origin_aligned(64, 1024));
    CHECK_FALSE(sub_buffer_origin_aligned(129, 1024));
    // An alignment of 0 or 1 byte (0 or 8 bits) takes every origin.
    CHECK(sub_buffer_origin_aligned(3, 0));
    CHECK(sub_buffer_origin_aligned(3, 8));
    CHECK_FALSE(sub_buffer_origin_aligned(3, 16));
}

TEST_CASE("copy checks: clEnqueueCopyBuffer bounds", "[blit][checks]") {
    const CopySide a = side(0, 4096), b = side(0, 1024);
    CHECK(check_copy_buffer(a, b, false, 0, 0, 1024) == CL_SUCCESS);
    CHECK(check_copy_buffer(a, b, false, 3072, 0, 1024) == CL_SUCCESS);  // ends on the source's last byte
    CHECK(check_copy_buffer(a, b, false, 3073, 0, 1024) == CL_INVALID_VALUE);
    CHECK(check_copy_buffer(a, b, false, 0, 1, 1024) == CL_INVALID_VALUE);  // one past the destination
    CHECK(check_copy_buffer(a, b, false, 0, 0, 1025) == CL_INVALID_VALUE);
    CHECK(check_copy_buffer(a, b, false, 4097, 0, 0) == CL_INVALID_VALUE);  // offset past the end
    // offset + size wraps around: still out of bounds, not a small sum.
    CHECK(check_copy_buffer(a, b, false, kMax, 0, 2) == CL_INVALID_VALUE);
    CHECK(check_copy_buffer(a, b, false, 16, 0, kMax - 8) == CL_INVALID_VALUE);
}

TEST_CASE("copy checks: clEnqueueCopyBuffer overlap inside one import", "[blit][checks]") {
    const CopySide whole = side(0, 4096);
    CHECK(check_copy_buffer(whole, whole, true, 0, 100, 100) == CL_SUCCESS);  // adjacent
    CHECK(check_copy_buffer(whole, whole, true, 0, 99, 100) == CL_MEM_COPY_OVERLAP);
    CHECK(check_copy_buffer(whole, whole, true, 100, 0, 101) == CL_MEM_COPY_OVERLAP);
    CHECK(check_copy_buffer(whole, whole, true, 8, 8, 1) == CL_MEM_COPY_OVERLAP);
    // Different imports never overlap, whatever the offsets.
    CHECK(check_copy_buffer(whole, whole, false, 8, 8, 64) == CL_SUCCESS);
    // A parent and its sub-buffer at 1024: compared in import coordinates.
    const CopySide sub = side(1024, 1024);
    CHECK(check_copy_buffer(whole, sub, true, 1024, 0, 16) == CL_MEM_COPY_OVERLAP);
    CHECK(check_copy_buffer(whole, sub, true, 0, 0, 1024) == CL_SUCCESS);  // [0,1024) and [1024,2048)
    CHECK(check_copy_buffer(whole, sub, true, 1, 0, 1024) == CL_MEM_COPY_OVERLAP);
    // Two sub-buffers of one parent.
    CHECK(check_copy_buffer(side(0, 2048), side(1024, 2048), true, 1024, 0, 8) == CL_MEM_COPY_OVERLAP);
    CHECK(check_copy_buffer(side(0, 2048), side(1024, 2048), true, 0, 8, 8) == CL_SUCCESS);
}

TEST_CASE("copy checks: clEnqueueCopyBufferRect arguments and default pitches", "[blit][checks]") {
    const size_t zero[3] = {0, 0, 0}, region[3] = {16, 4, 2};
    RectArgs r;
    SECTION("NULL origin or region") {
        CHECK(rect(nullptr, zero, region, 0, 0, 0, 0, 4096, 4096, &r) == CL_INVALID_VALUE);
        CHECK(rect(zero, nullptr, region, 0, 0, 0, 0, 4096, 4096, &r) == CL_INVALID_VALUE);
        CHECK(rect(zero, zero, nullptr, 0, 0, 0, 0, 4096, 4096, &r) == CL_INVALID_VALUE);
    }
    SECTION("a zero in region") {
        for (int i = 0; i < 3; ++i) {
            size_t z[3] = {16, 4, 2};
            z[i] = 0;
            CHECK(rect(zero, zero, z, 0, 0, 0, 0, 4096, 4096, &r) == CL_INVALID_VALUE);
        }
    }
    SECTION("default pitches: row = width, slice = height x row") {
        REQUIRE(rect(zero, zero, region, 0, 0, 0, 0, 4096, 4096, &r) == CL_SUCCESS);
        CHECK(r.src_row_pitch == 16);
        CHECK(r.src_slice_pitch == 64);
        CHECK(r.dst_row_pitch == 16);
        CHECK(r.dst_slice_pitch == 64);
        // A given row pitch sets the default slice pitch.
        REQUIRE(rect(zero, zero, region, 32, 0, 0, 0, 4096, 4096, &r) == CL_SUCCESS);
        CHECK(r.src_slice_pitch == 128);
    }
    SECTION("row pitch below the width") {
        CHECK(rect(zero, zero, region, 16, 0, 0, 0, 4096, 4096, &r) == CL_SUCCESS);
        CHECK(rect(zero, zero, region, 15, 0, 0, 0, 4096, 4096, &r) == CL_INVALID_VALUE);
        CHECK(rect(zero, zero, region, 0, 0, 15, 0, 4096, 4096, &r) == CL_INVALID_VALUE);
    }
    SECTION("slice pitch below height x row, or not a multiple of the row pitch") {
        CHECK(rect(zero, zero, region, 16, 64, 0, 0, 4096, 4096, &r) == CL_SUCCESS);
        CHECK(rect(zero, zero, region, 16, 48, 0, 0, 4096, 4096, &r) == CL_INVALID_VALUE);
        CHECK(rect(zero, zero, region, 16, 72, 0, 0, 4096, 4096, &r) == CL_INVALID_VALUE);
        CHECK(rect(zero, zero, region, 0, 0, 16, 72, 4096, 4096, &r) == CL_INVALID_VALUE);
        CHECK(rect(zero, zero, region, 16, 80, 0, 0, 4096, 4096, &r) == CL_SUCCESS);
    }
    SECTION("bounds on each side") {
        // Origin (1,1,1), pitches 16/64: first byte 1 + 16 + 64 = 81, last row at
        // 81 + 64 + 3 x 16 = 193, so the rect ends at byte 209.
        const size_t one[3] = {1, 1, 1};
        REQUIRE(rect(one, zero, region, 0, 0, 0, 0, 209, 4096, &r) == CL_SUCCESS);
        CHECK(rect(one, zero, region, 0, 0, 0, 0, 208, 4096, &r) == CL_INVALID_VALUE);
        CHECK(rect(zero, one, region, 0, 0, 0, 0, 4096, 209, &r) == CL_SUCCESS);
        CHECK(rect(zero, one, region, 0, 0, 0, 0, 4096, 208, &r) == CL_INVALID_VALUE);
        CHECK(rect(zero, zero, region, 0, 0, 0, 0, 128, 128, &r) == CL_SUCCESS);
        CHECK(rect(zero, zero, region, 0, 0, 0, 0, 127, 128, &r) == CL_INVALID_VALUE);
    }
    SECTION("offsets that overflow are out of bounds") {
        const size_t far[3] = {0, SIZE_MAX / 8, 0};
        CHECK(rect(far, zero, region, 0, 0, 0, 0, kMax, kMax, &r) == CL_INVALID_VALUE);
        const size_t huge[3] = {16, SIZE_MAX / 4, 1};
        CHECK(rect(zero, zero, huge, 0, 0, 0, 0, kMax, kMax, &r) == CL_INVALID_VALUE);
    }
}

TEST_CASE("copy checks: one buffer may not differ in both row and slice pitch", "[blit][checks]") {
    RectArgs r;
    r.src_row_pitch = r.dst_row_pitch = 16;
    r.src_slice_pitch = r.dst_slice_pitch = 64;
    CHECK(same_buffer_pitches_allowed(r));
    r.dst_row_pitch = 32;  // row differs, slice the same
    CHECK(same_buffer_pitches_allowed(r));
    r.dst_slice_pitch = 128;  // both differ
    CHECK_FALSE(same_buffer_pitches_allowed(r));
    r.dst_row_pitch = 16;  // slice differs, row the same
    CHECK(same_buffer_pitches_allowed(r));
}

TEST_CASE("copy checks: rect overlap is exact, row by row", "[blit][checks]") {
    const CopySide whole = side(0, kMax);
    RectArgs r;
    r.region[0] = 8, r.region[1] = 4, r.region[2] = 1;
    r.src_row_pitch = r.dst_row_pitch = 32;
    r.src_slice_pitch = r.dst_slice_pitch = 128;
    SECTION("spans apart") {
        r.dst_origin[1] = 4;  // rows 4..7 after rows 0..3
        CHECK_FALSE(rects_overlap(r, whole, whole));
    }
    SECTION("interleaved columns: the spans meet, the rows do not") {
        r.dst_origin[0] = 8;  // bytes 8..15 of each row, source 0..7
        CHECK_FALSE(rects_overlap(r, whole, whole));
        r.dst_origin[0] = 7;  // one byte of each row shared
        CHECK(rects_overlap(r, whole, whole));
    }
    SECTION("different pitches: rows of one side between rows of the other") {
        r.dst_row_pitch = 64;
        r.dst_slice_pitch = 256;
        r.dst_origin[1] = 0;
        r.dst_origin[0] = 16;  // dst rows at 16, 80, 144, 208; src rows at 0, 32, 64, 96
        CHECK_FALSE(rects_overlap(r, whole, whole));
        r.dst_origin[0] = 0;  // dst row 0 is src row 0
        CHECK(rects_overlap(r, whole, whole));
    }
    SECTION("sub-buffer bases count") {
        CHECK(rects_overlap(r, whole, whole));                  // same rect, same place
        CHECK_FALSE(rects_overlap(r, whole, side(8, kMax)));    // shifted past each row's 8 bytes
        CHECK(rects_overlap(r, whole, side(32, kMax)));         // shifted one row: rows meet
        CHECK_FALSE(rects_overlap(r, whole, side(128, kMax)));  // after the last row
    }
}

TEST_CASE("copy checks: image regions must be given and nonzero", "[blit][checks]") {
    const size_t o[3] = {0, 0, 0}, region[3] = {1, 1, 1};
    CHECK(region_given(o, o, region));
    CHECK_FALSE(region_given(nullptr, o, region));
    CHECK_FALSE(region_given(o, nullptr, region));
    CHECK_FALSE(region_given(o, o, nullptr));
    CHECK(region_nonzero(region));
    for (int i = 0; i < 3; ++i) {
        size_t z[3] = {1, 1, 1};
        z[i] = 0;
        CHECK_FALSE(region_nonzero(z));
    }
}

TEST_CASE("copy checks: origin + region stays inside the image", "[blit][checks]") {
    const uint64_t extent[3] = {64, 32, 1};  // a 2D image: one slice
    const size_t region[3] = {16, 8, 1};
    const size_t last[3] = {48, 24, 0}, x_past[3] = {49, 0, 0}, y_past[3] = {0, 25, 0}, z_past[3] = {0, 0, 1};
    CHECK(region_inside(last, region, extent));
    CHECK_FALSE(region_inside(x_past, region, extent));
    CHECK_FALSE(region_inside(y_past, region, extent));
    CHECK_FALSE(region_inside(z_past, region, extent));  // origin[2] != 0 on a 2D image
    const size_t deep[3] = {16, 8, 2}, o[3] = {0, 0, 0};
    CHECK_FALSE(region_inside(o, deep, extent));  // region[2] != 1 on a 2D image
    const size_t wrap[3] = {SIZE_MAX, 0, 0};
    CHECK_FALSE(region_inside(wrap, region, extent));  // origin + region wraps around
}

TEST_CASE("copy checks: the packed buffer range of an image<->buffer copy", "[blit][checks]") {
    const size_t region[3] = {16, 8, 2};  // 256 elements
    CHECK(packed_range_inside(0, region, 4, 1024));
    CHECK_FALSE(packed_range_inside(0, region, 4, 1023));
    CHECK(packed_range_inside(1024, region, 4, 2048));
    CHECK_FALSE(packed_range_inside(1025, region, 4, 2048));
    CHECK_FALSE(packed_range_inside(kMax - 8, region, 4, kMax));  // offset + bytes wraps around
    const size_t huge[3] = {SIZE_MAX / 2, 4, 1};
    CHECK_FALSE(packed_range_inside(0, huge, 16, kMax));  // elements x size wraps around
}
