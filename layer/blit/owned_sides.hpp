// Which sides of a copy the layer owns (an import or a sub-buffer of one),
// and the spec's errors it answers for them, with their log lines; the
// rules themselves are pure functions in layer/blit/copy_checks.hpp.  The
// layer owns those objects (the ICD sees a buffer over a mapping, or a
// device copy, whose sub-buffers it may not even know overlap), so the
// layer answers CL_MEM_COPY_OVERLAP, bounds and sub-buffer
// alignment itself, whatever the ICD would say and whether or not the
// blitter takes the copy: NVIDIA accepts overlapping copies between a buffer
// and its sub-buffer and crashes later, NEO 22.43 crashes on a wait-list
// count without a list (docs/icds.md).
#pragma once

#include <cstddef>

#include "layer/base/cl_compat.h"
#include "layer/blit/copy_checks.hpp"

namespace cldmabuf {

// Sides of a copy as the layer sees them.  A plain cl_mem side (not an
// import) has size UINT64_MAX: its bounds are the ICD's to judge.
struct OwnedCopy {
    bool any = false;           // at least one side is an import or one's sub-buffer
    bool same_storage = false;  // both sides inside the same import
    CopySide src, dst;
};

// CL_SUCCESS and *out (out->any false: nothing of the layer's, the ICD
// judges everything), or the spec's error after one LOG_ERROR line:
// CL_INVALID_EVENT_WAIT_LIST (count and list disagree),
// CL_INVALID_COMMAND_QUEUE, CL_MISALIGNED_SUB_BUFFER_OFFSET (a sub-buffer
// of an import whose origin the queue's device does not accept).
cl_int owned_copy_sides(cl_command_queue queue, cl_mem src, cl_mem dst, cl_uint num_events,
                        const cl_event *wait_list, const char *what, OwnedCopy *out);

// For image copies: CL_INVALID_EVENT_WAIT_LIST (one log line) when either
// side is an import and the wait-list count and list disagree, else
// CL_SUCCESS (everything else about images is checked where the blitter
// takes the copy, layer/blit/image_copy.cpp).
cl_int check_owned_wait_list(cl_mem src, cl_mem dst, cl_uint num_events, const cl_event *wait_list,
                             const char *what);

// clEnqueueCopyBuffer's bounds and overlap for owned sides (size 0 is left
// to the ICD).  CL_SUCCESS or the error after one LOG_ERROR line.
cl_int check_owned_copy_buffer(const OwnedCopy &c, size_t src_offset, size_t dst_offset, size_t size);

// clEnqueueCopyBufferRect's region, pitch, bounds and overlap rules for
// owned sides; *r receives the request with default pitches filled in.
cl_int check_owned_copy_rect(const OwnedCopy &c, bool same_object, const size_t *src_origin,
                             const size_t *dst_origin, const size_t *region, size_t src_row_pitch,
                             size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch,
                             RectArgs *r);

}  // namespace cldmabuf
