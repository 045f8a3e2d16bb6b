// cl_khr_semaphore, cl_khr_external_semaphore, cl_khr_external_semaphore_sync_fd
// as the layer implements them (entry_points.cpp); handed out by name through
// layer/sync/availability.cpp, listed in layer/entry/dispatch_table.cpp.
#pragma once

#include "layer/sync/semaphore_compat.h"

namespace cldmabuf::sync {

cl_semaphore_khr CL_API_CALL create_semaphore_with_properties(cl_context context,
                                                              const cl_semaphore_properties_khr *props,
                                                              cl_int *errcode_ret);
cl_int CL_API_CALL enqueue_wait_semaphores(cl_command_queue queue, cl_uint num_semaphores,
                                           const cl_semaphore_khr *semaphores,
                                           const cl_semaphore_payload_khr *payloads, cl_uint num_events,
                                           const cl_event *wait_list, cl_event *event);
cl_int CL_API_CALL enqueue_signal_semaphores(cl_command_queue queue, cl_uint num_semaphores,
                                             const cl_semaphore_khr *semaphores,
                                             const cl_semaphore_payload_khr *payloads, cl_uint num_events,
                                             const cl_event *wait_list, cl_event *event);
cl_int CL_API_CALL get_semaphore_info(cl_semaphore_khr semaphore, cl_semaphore_info_khr name, size_t size,
                                      void *value, size_t *size_ret);
cl_int CL_API_CALL retain_semaphore(cl_semaphore_khr semaphore);
cl_int CL_API_CALL release_semaphore(cl_semaphore_khr semaphore);
cl_int CL_API_CALL get_semaphore_handle_for_type(cl_semaphore_khr semaphore, cl_device_id device,
                                                 cl_external_semaphore_handle_type_khr type, size_t size,
                                                 void *handle, size_t *size_ret);
cl_int CL_API_CALL reimport_semaphore_sync_fd(cl_semaphore_khr semaphore,
                                              cl_semaphore_reimport_properties_khr *props, int fd);

}  // namespace cldmabuf::sync
