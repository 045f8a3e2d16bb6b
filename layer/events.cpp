// Events of the layer's own commands: the command type the spec names and
// the error status of host work that failed (see EventTypeRegistry).  The
// overrides look at the side table only while it is non-empty.
#include "layer/dispatch.hpp"
#include "layer/registry.hpp"

namespace cldmabuf {

void release_layer_event(cl_event event) {
    cl_command_type type;
    cl_int status;
    if (event_types().find(event, &type) || event_types().failed(event, &status)) {
        cl_uint refs = 0;
        if (next().clGetEventInfo(event, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, nullptr) == CL_SUCCESS &&
            refs <= 1)
            event_types().remove(event);  // the handle may be reused by the ICD after this
    }
}

namespace {

cl_int CL_API_CALL get_event_info(cl_event event, cl_event_info name, size_t size, void *value, size_t *size_ret) {
    // Let the ICD validate the arguments first, then replace the answer.
    cl_int err = next().clGetEventInfo(event, name, size, value, size_ret);
    if (err != CL_SUCCESS || !value || event_types().empty()) return err;
    cl_command_type type;
    cl_int status;
    if (name == CL_EVENT_COMMAND_TYPE && event_types().find(event, &type))
        *static_cast<cl_command_type *>(value) = type;
    else if (name == CL_EVENT_COMMAND_EXECUTION_STATUS && event_types().failed(event, &status) &&
             *static_cast<cl_int *>(value) == CL_COMPLETE)
        *static_cast<cl_int *>(value) = status;
    return err;
}

cl_int CL_API_CALL release_event(cl_event event) {
    if (!event_types().empty()) release_layer_event(event);
    return next().clReleaseEvent(event);
}

cl_int CL_API_CALL wait_for_events(cl_uint num_events, const cl_event *events) {
    cl_int err = next().clWaitForEvents(num_events, events);
    if (err != CL_SUCCESS || event_types().empty()) return err;
    cl_int status;
    for (cl_uint i = 0; i < num_events; ++i)
        if (event_types().failed(events[i], &status)) return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    return err;
}

}  // namespace

void install_event_overrides(cl_icd_dispatch &table) {
    table.clGetEventInfo = get_event_info;
    table.clReleaseEvent = release_event;
    table.clWaitForEvents = wait_for_events;
}

}  // namespace cldmabuf
