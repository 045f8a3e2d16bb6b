// The copy entry points of layer/blit: a copy the Gen9 blitter takes runs as
// a host step of the queue; every other copy goes to the ICD unchanged
// (buffer_copy.cpp, image_copy.cpp; docs/blitter.md).  The table enters them
// through layer/entry/entry_chains.cpp, after the read-only check of the
// destination.
#pragma once

#include "layer/base/cl_compat.h"

namespace cldmabuf {

cl_int CL_API_CALL enqueue_copy_buffer(cl_command_queue queue, cl_mem src, cl_mem dst, size_t src_offset,
                                       size_t dst_offset, size_t size, cl_uint num_events, const cl_event *wait_list,
                                       cl_event *event);
cl_int CL_API_CALL enqueue_copy_buffer_rect(cl_command_queue queue, cl_mem src, cl_mem dst, const size_t *src_origin,
                                            const size_t *dst_origin, const size_t *region, size_t src_row_pitch,
                                            size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch,
                                            cl_uint num_events, const cl_event *wait_list, cl_event *event);
cl_int CL_API_CALL enqueue_copy_image(cl_command_queue queue, cl_mem src, cl_mem dst, const size_t *src_origin,
                                      const size_t *dst_origin, const size_t *region, cl_uint num_events,
                                      const cl_event *wait_list, cl_event *event);
cl_int CL_API_CALL enqueue_copy_image_to_buffer(cl_command_queue queue, cl_mem src, cl_mem dst,
                                                const size_t *src_origin, const size_t *region, size_t dst_offset,
                                                cl_uint num_events, const cl_event *wait_list, cl_event *event);
cl_int CL_API_CALL enqueue_copy_buffer_to_image(cl_command_queue queue, cl_mem src, cl_mem dst, size_t src_offset,
                                                const size_t *dst_origin, const size_t *region, cl_uint num_events,
                                                const cl_event *wait_list, cl_event *event);

}  // namespace cldmabuf
