#include "step_result.hpp"

namespace cldmabuf::test {

cl_int step_result(cl_command_queue q, cl_int enqueued, cl_event ev) {
    const cl_int finished = clFinish(q);
    cl_int status = CL_COMPLETE;
    if (ev) {
        clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
        clReleaseEvent(ev);
    }
    if (enqueued != CL_SUCCESS) return enqueued;
    if (status < 0) return status;
    return finished;
}

}  // namespace cldmabuf::test
