// Map/unmap of zero-copy imports bracketed with DMA_BUF_IOCTL_SYNC
// (layer/handoff/map_sync.cpp).  Every other object goes straight to the ICD.
// The table enters the maps through layer/entry/entry_chains.cpp (the host-write
// checks run first) and the unmap directly.
#pragma once

#include "layer/base/cl_compat.h"

namespace cldmabuf {

void *CL_API_CALL enqueue_map_buffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, cl_map_flags flags,
                                     size_t offset, size_t size, cl_uint num_events, const cl_event *wait_list,
                                     cl_event *event, cl_int *errcode_ret);
void *CL_API_CALL enqueue_map_image(cl_command_queue queue, cl_mem image, cl_bool blocking, cl_map_flags flags,
                                    const size_t *origin, const size_t *region, size_t *row_pitch,
                                    size_t *slice_pitch, cl_uint num_events, const cl_event *wait_list,
                                    cl_event *event, cl_int *errcode_ret);
cl_int CL_API_CALL enqueue_unmap_mem_object(cl_command_queue queue, cl_mem mem, void *mapped_ptr,
                                            cl_uint num_events, const cl_event *wait_list, cl_event *event);

}  // namespace cldmabuf
