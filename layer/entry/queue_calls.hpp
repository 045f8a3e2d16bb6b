// The command queue's own entry points, where the queue protocol
// (layer/queue), failed host steps (layer/core/failed_events) and failed
// acquires (layer/handoff/failed_acquire_shield) each have a say: clFinish
// records the queue quiet, gives shielded imports back and reports a failed
// layer step once; creating and releasing a queue forgets what was known of
// its handle; creating, retaining and releasing count the application's
// references (the last one lets the queue's blitter GEM context go).  layer/entry/dispatch_table.cpp puts them in their slots.
#pragma once

#include "layer/base/cl_compat.h"

namespace cldmabuf {

cl_int CL_API_CALL finish_queue(cl_command_queue queue);
cl_command_queue CL_API_CALL create_command_queue(cl_context context, cl_device_id device,
                                                  cl_command_queue_properties properties, cl_int *errcode_ret);
cl_command_queue CL_API_CALL create_command_queue_with_properties(cl_context context, cl_device_id device,
                                                                  const cl_queue_properties *properties,
                                                                  cl_int *errcode_ret);
cl_int CL_API_CALL release_command_queue(cl_command_queue queue);
cl_int CL_API_CALL retain_command_queue(cl_command_queue queue);

}  // namespace cldmabuf
