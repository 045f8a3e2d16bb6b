// Events of the layer's own commands report the command type the spec names.
// Only clGetEventInfo(CL_EVENT_COMMAND_TYPE) and clReleaseEvent look at the
// side table, and only while it is non-empty.
#include "layer/dispatch.hpp"
#include "layer/registry.hpp"

namespace cldmabuf {
namespace {

cl_int CL_API_CALL get_event_info(cl_event event, cl_event_info name, size_t size, void *value, size_t *size_ret) {
    cl_command_type type;
    if (name == CL_EVENT_COMMAND_TYPE && event_types().find(event, &type)) {
        // Let the ICD validate the arguments first, then replace the answer.
        cl_int err = next().clGetEventInfo(event, name, size, value, size_ret);
        if (err == CL_SUCCESS && value) *static_cast<cl_command_type *>(value) = type;
        return err;
    }
    return next().clGetEventInfo(event, name, size, value, size_ret);
}

cl_int CL_API_CALL release_event(cl_event event) {
    cl_command_type type;
    if (event_types().find(event, &type)) {
        cl_uint refs = 0;
        if (next().clGetEventInfo(event, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, nullptr) == CL_SUCCESS &&
            refs <= 1)
            event_types().remove(event);  // the handle may be reused by the ICD after this
    }
    return next().clReleaseEvent(event);
}

}  // namespace

void install_event_overrides(cl_icd_dispatch &table) {
    table.clGetEventInfo = get_event_info;
    table.clReleaseEvent = release_event;
}

}  // namespace cldmabuf
