// Events of the layer's own commands: the command type the spec names, the
// error status of host work that failed and the step's profiling timestamps
// (see EventTypeRegistry).  The queue's own calls (clFinish reporting a
// failed layer step) are in layer/entry/queue_calls.cpp.  The overrides look at the side tables
// only while they are non-empty: one relaxed load on every other call.
#include "layer/core/events.hpp"

#include <cstring>
#include <memory>

#include "layer/core/command_dependencies.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/core/failed_events.hpp"
#include "layer/core/host_step.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/core/registry.hpp"
#include "layer/core/worker.hpp"

namespace cldmabuf {

cl_int CL_API_CALL get_event_info(cl_event event, cl_event_info name, size_t size, void *value, size_t *size_ret) {
    // Let the ICD validate the arguments first, then replace the answer.
    cl_int err = next().clGetEventInfo(event, name, size, value, size_ret);
    // A failed command: steps the ICD terminated with it get resolved.
    if (err == CL_SUCCESS && value && name == CL_EVENT_COMMAND_EXECUTION_STATUS && *static_cast<cl_int *>(value) < 0)
        resolve_terminated_steps(nullptr);
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

// The application's references on the layer's events (EventTypeRegistry,
// layer/core/registry.hpp): its last release drops the entry, whatever the ICD's
// own count, before the ICD may hand the handle to a new event.
cl_int CL_API_CALL retain_event(cl_event event) {
    const cl_int err = next().clRetainEvent(event);
    if (err == CL_SUCCESS && !event_types().empty()) event_types().hold(event);
    return err;
}

cl_int CL_API_CALL release_event(cl_event event) {
    if (!event_types().empty()) event_types().drop(event);
    // Any release: a record the application still needs is asked again as an unknown event.
    forget_event_dependencies(event);
    return next().clReleaseEvent(event);
}

// A user event the ICD created may have the handle of a layer event whose
// entry outlived it: it starts clean.
cl_event CL_API_CALL create_user_event(cl_context context, cl_int *errcode_ret) {
    cl_event event = next().clCreateUserEvent(context, errcode_ret);
    if (event && !event_types().empty()) event_types().remove(event);
    if (event) forget_event_dependencies(event);
    return event;
}

// Steps the ICD terminated without their callback are resolved before the
// wait (their gates hold the barriers the application may wait on) and after.
cl_int CL_API_CALL wait_for_events(cl_uint num_events, const cl_event *events) {
    resolve_terminated_steps(nullptr);
    cl_int err = next().clWaitForEvents(num_events, events);
    resolve_terminated_steps(nullptr);
    if (err != CL_SUCCESS || event_types().empty()) return err;
    cl_int status;
    for (cl_uint i = 0; i < num_events; ++i)
        if (event_types().failed(events[i], &status)) return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    return err;
}

// A user event that fails terminates the steps waiting on it: resolved now.
cl_int CL_API_CALL set_user_event_status(cl_event event, cl_int status) {
    const cl_int err = next().clSetUserEventStatus(event, status);
    if (err == CL_SUCCESS && status < 0) resolve_terminated_steps(nullptr);
    // Releases that waited for it may now wait for fewer acquires.
    if (err == CL_SUCCESS) note_user_event_ended();
    return err;
}

namespace {

// A layer step's event on an ICD that calls callbacks of failed commands
// with CL_COMPLETE (NVIDIA), or never learns of the failure (side-table
// mode): the callback receives the status the layer recorded.  The event and
// its side-table entry are held until the callback ran, so the entry
// outlives an application release in between.
struct CallbackHop {
    void(CL_CALLBACK *notify)(cl_event, cl_int, void *);
    void *user_data;
    IcdEvent held;
};

// `data` is the CallbackHop handed over at registration: adopted back here.
void CL_CALLBACK hop(cl_event event, cl_int status, void *data) {
    const std::unique_ptr<CallbackHop> h(static_cast<CallbackHop *>(data));
    cl_int failed_status;
    if (status >= 0 && event_types().failed(event, &failed_status)) status = failed_status;
    h->notify(event, status, h->user_data);
    // Not released inside the ICD's callback: on a worker of its own, the
    // entry first (one queue: in that order).
    const void *worker = reinterpret_cast<const void *>(&hop);
    post_to_worker(worker, [event] { event_types().drop(event); });
    release_on_worker(worker, std::move(h->held));
}

}  // namespace

cl_int CL_API_CALL set_event_callback(cl_event event, cl_int type, void(CL_CALLBACK *notify)(cl_event, cl_int, void *),
                                      void *user_data) {
    if (event_types().empty() || type != CL_COMPLETE || !notify || !event_types().contains(event))
        return next().clSetEventCallback(event, type, notify, user_data);
    auto h = std::make_unique<CallbackHop>(CallbackHop{notify, user_data, IcdEvent::retain(event)});
    event_types().hold(event);
    cl_int err = next().clSetEventCallback(event, type, hop, h.get());
    if (err == CL_SUCCESS) {
        h.release();  // the callback's now
    } else {
        event_types().drop(event);  // `h` goes, and its reference with it
    }
    return err;
}

// The barrier's own timestamps miss the host work (and are all 0 on NVIDIA
// CUDA): answer with the step's (layer/core/step_times.hpp) once it completed.
cl_int CL_API_CALL get_event_profiling_info(cl_event event, cl_profiling_info name, size_t size, void *value,
                                            size_t *size_ret) {
    StepTimes t;
    if (event_types().empty() || name < CL_PROFILING_COMMAND_QUEUED || name > CL_PROFILING_COMMAND_COMPLETE ||
        !event_types().times(event, &t))
        return next().clGetEventProfilingInfo(event, name, size, value, size_ret);
    cl_int status = CL_QUEUED;
    if (next().clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) !=
        CL_SUCCESS)
        return CL_INVALID_EVENT;
    if (status > CL_COMPLETE) return CL_PROFILING_INFO_NOT_AVAILABLE;
    if (value && size < sizeof(cl_ulong)) return CL_INVALID_VALUE;
    const cl_ulong answer = name == CL_PROFILING_COMMAND_QUEUED   ? t.queued
                            : name == CL_PROFILING_COMMAND_SUBMIT ? t.submit
                            : name == CL_PROFILING_COMMAND_START  ? t.start
                                                                  : t.end;  // END and COMPLETE
    if (value) std::memcpy(value, &answer, sizeof answer);
    if (size_ret) *size_ret = sizeof answer;
    return CL_SUCCESS;
}

}  // namespace cldmabuf
