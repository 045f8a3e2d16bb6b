// The event entry points of layer/core/events.cpp, which the dispatch
// table (layer/entry/dispatch_table.cpp) puts in their slots: each lets the ICD
// answer, then corrects what the layer's side tables know better (command
// type, a failed host step, the step's timestamps, a failure clFinish owes).
#pragma once

#include "layer/base/cl_compat.h"

namespace cldmabuf {

cl_int CL_API_CALL get_event_info(cl_event event, cl_event_info name, size_t size, void *value, size_t *size_ret);
cl_int CL_API_CALL retain_event(cl_event event);
cl_int CL_API_CALL release_event(cl_event event);
cl_event CL_API_CALL create_user_event(cl_context context, cl_int *errcode_ret);
cl_int CL_API_CALL wait_for_events(cl_uint num_events, const cl_event *events);
cl_int CL_API_CALL set_user_event_status(cl_event event, cl_int status);
cl_int CL_API_CALL set_event_callback(cl_event event, cl_int type,
                                      void(CL_CALLBACK *notify)(cl_event, cl_int, void *), void *user_data);
cl_int CL_API_CALL get_event_profiling_info(cl_event event, cl_profiling_info name, size_t size, void *value,
                                            size_t *size_ret);

}  // namespace cldmabuf
