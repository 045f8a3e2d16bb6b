// The first failure of an enqueued step, for the fault sweeps: the enqueue's
// own error, else its event's negative status, else clFinish's.  Releases
// `ev` (may be null).
#pragma once

#include <CL/cl.h>

namespace cldmabuf::test {

cl_int step_result(cl_command_queue q, cl_int enqueued, cl_event ev);

}  // namespace cldmabuf::test
