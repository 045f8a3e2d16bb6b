// clEnqueueAcquireExternalMemObjectsKHR / clEnqueueReleaseExternalMemObjectsKHR.
#pragma once

#include "layer/base/cl_compat.h"

namespace cldmabuf {

cl_int CL_API_CALL enqueue_acquire_external_mem_objects(cl_command_queue queue, cl_uint num_mem_objects,
                                                        const cl_mem *mem_objects, cl_uint num_events,
                                                        const cl_event *wait_list, cl_event *event);
cl_int CL_API_CALL enqueue_release_external_mem_objects(cl_command_queue queue, cl_uint num_mem_objects,
                                                        const cl_mem *mem_objects, cl_uint num_events,
                                                        const cl_event *wait_list, cl_event *event);

}  // namespace cldmabuf
