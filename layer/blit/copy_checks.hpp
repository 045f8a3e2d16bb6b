// The spec's argument rules for the copies the layer answers itself
// (OpenCL 3.0: clEnqueueCopyBuffer, clEnqueueCopyBufferRect,
// clEnqueueCopyImage, clEnqueueCopyImageToBuffer, clEnqueueCopyBufferToImage).
// Pure functions of numbers, no registry, no ICD, no log line, so every rule
// has a unit test (tests/unit/blit/test_copy_checks.cpp); the callers
// (layer/blit/owned_sides.cpp, image_copy.cpp) find the sides and log.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layer/base/cl_compat.h"

namespace cldmabuf {

// One side of a copy: the cl_mem's size and where it starts inside the
// import it belongs to (a sub-buffer's origin, else 0).
struct CopySide {
    uint64_t base = 0;
    uint64_t size = 0;
};

// A rect request with the spec's default pitches filled in.
struct RectArgs {
    uint64_t src_origin[3] = {0, 0, 0}, dst_origin[3] = {0, 0, 0}, region[3] = {0, 0, 0};
    uint64_t src_row_pitch = 0, src_slice_pitch = 0, dst_row_pitch = 0, dst_slice_pitch = 0;
};

// Whether num_events_in_wait_list and event_wait_list agree (both empty or
// both given): the spec's CL_INVALID_EVENT_WAIT_LIST otherwise.
bool wait_list_consistent(cl_uint num_events, const cl_event *wait_list);

// Whether a sub-buffer origin `base` is a multiple of the device's
// CL_DEVICE_MEM_BASE_ADDR_ALIGN (in bits, as the ICD answers it): the
// spec's CL_MISALIGNED_SUB_BUFFER_OFFSET otherwise.  An alignment of 0 or
// 1 byte accepts every origin.
bool sub_buffer_origin_aligned(uint64_t base, cl_uint align_bits);

// clEnqueueCopyBuffer: CL_SUCCESS, CL_INVALID_VALUE (out of bounds) or
// CL_MEM_COPY_OVERLAP (the two ranges overlap inside the same import:
// `same_storage`).  size 0 is not judged here (the caller leaves it to the ICD).
cl_int check_copy_buffer(const CopySide &src, const CopySide &dst, bool same_storage, uint64_t src_offset,
                         uint64_t dst_offset, uint64_t size);

// clEnqueueCopyBufferRect: fills the default pitches (row = width, slice =
// height * row) and checks NULL arguments, zero regions, pitch rules and
// bounds: CL_SUCCESS and *out, or CL_INVALID_VALUE.
cl_int normalize_rect(const size_t *src_origin, const size_t *dst_origin, const size_t *region,
                      size_t src_row_pitch, size_t src_slice_pitch, size_t dst_row_pitch,
                      size_t dst_slice_pitch, const CopySide &src, const CopySide &dst, RectArgs *out);

// clEnqueueCopyBufferRect on one buffer: CL_INVALID_VALUE when both the row
// and the slice pitches differ between the sides.
bool same_buffer_pitches_allowed(const RectArgs &r);

// Whether the bytes the source and destination rectangles touch intersect,
// in import coordinates (exact, row by row where the spans overlap): the
// spec's CL_MEM_COPY_OVERLAP for one import, and for one image (same
// pitches on both sides).
bool rects_overlap(const RectArgs &r, const CopySide &src, const CopySide &dst);

// The image copies' region rule: origin and region given, no zero extent
// (CL_INVALID_VALUE otherwise).
bool region_given(const size_t *origin_a, const size_t *origin_b, const size_t *region);
bool region_nonzero(const size_t *region);

// Whether origin + region stays inside an image of `extent` (elements,
// rows, slices) without overflow: CL_INVALID_VALUE otherwise.
bool region_inside(const size_t *origin, const size_t *region, const uint64_t extent[3]);

// Whether a buffer range of region[0] x region[1] x region[2] elements of
// `elem` bytes at `offset` stays inside a buffer of `size` bytes without
// overflow (the image<->buffer copies' packing): CL_INVALID_VALUE otherwise.
bool packed_range_inside(uint64_t offset, const size_t *region, uint64_t elem, uint64_t size);

}  // namespace cldmabuf
