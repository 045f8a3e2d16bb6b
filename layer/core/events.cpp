// Events of the layer's own commands: the command type the spec names, the
// error status of host work that failed and the step's profiling timestamps
// (see EventTypeRegistry), plus clFinish reporting a failed layer step of the
// queue (layer/core/failed_events.hpp).  The overrides look at the side tables
// only while they are non-empty: one relaxed load on every other call.
#include "layer/core/events.hpp"

#include <cstring>

#include "layer/core/dispatch.hpp"
#include "layer/queue/epoch.hpp"
#include "layer/core/failed_events.hpp"
#include "layer/queue/quiet.hpp"
#include "layer/queue/identity.hpp"
#include "layer/handoff/failed_acquire_shield.hpp"
#include "layer/core/registry.hpp"
#include "layer/core/worker.hpp"

namespace cldmabuf {

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
    return next().clReleaseEvent(event);
}

// A user event the ICD created may have the handle of a layer event whose
// entry outlived it: it starts clean.
cl_event CL_API_CALL create_user_event(cl_context context, cl_int *errcode_ret) {
    cl_event event = next().clCreateUserEvent(context, errcode_ret);
    if (event && !event_types().empty()) event_types().remove(event);
    return event;
}

cl_int CL_API_CALL wait_for_events(cl_uint num_events, const cl_event *events) {
    cl_int err = next().clWaitForEvents(num_events, events);
    if (err != CL_SUCCESS || event_types().empty()) return err;
    cl_int status;
    for (cl_uint i = 0; i < num_events; ++i)
        if (event_types().failed(events[i], &status)) return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
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
};

void CL_CALLBACK hop(cl_event event, cl_int status, void *data) {
    auto *h = static_cast<CallbackHop *>(data);
    cl_int failed_status;
    if (status >= 0 && event_types().failed(event, &failed_status)) status = failed_status;
    h->notify(event, status, h->user_data);
    delete h;
    // Not released inside the ICD's callback: on a worker of its own.
    post_to_worker(reinterpret_cast<const void *>(&hop), [event] {
        event_types().drop(event);
        next().clReleaseEvent(event);
    });
}

}  // namespace

cl_int CL_API_CALL set_event_callback(cl_event event, cl_int type, void(CL_CALLBACK *notify)(cl_event, cl_int, void *),
                                      void *user_data) {
    if (event_types().empty() || type != CL_COMPLETE || !notify || !event_types().contains(event))
        return next().clSetEventCallback(event, type, notify, user_data);
    auto *h = new CallbackHop{notify, user_data};
    next().clRetainEvent(event);
    event_types().hold(event);
    cl_int err = next().clSetEventCallback(event, type, hop, h);
    if (err != CL_SUCCESS) {
        delete h;
        event_types().drop(event);
        next().clReleaseEvent(event);
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

// clFinish waits for the barriers, hence for the steps' work; the first layer
// step that failed on the queue since the last clFinish is reported once,
// as CL_OUT_OF_RESOURCES / CL_OUT_OF_HOST_MEMORY (the errors clFinish has).
cl_int CL_API_CALL finish_queue(cl_command_queue queue) {
    const EpochWord word = read_epoch();  // before: a command that begins after it may follow the finish
    cl_int err = next().clFinish(queue);
    if (err == CL_SUCCESS) note_quiet_queue(queue, word, 0);  // nothing of the queue's is left to run
    // Nothing of the queue's runs any more: imports its failed acquires
    // detached get their dma-buf back (layer/handoff/failed_acquire_shield.hpp).
    if (err == CL_SUCCESS && any_import_shielded()) queue_drained(queue);
    if (err != CL_SUCCESS || !any_queue_failure()) return err;
    const cl_int failed = take_queue_failure(queue);
    if (failed == 0) return err;
    return failed == CL_OUT_OF_HOST_MEMORY ? CL_OUT_OF_HOST_MEMORY : CL_OUT_OF_RESOURCES;
}

// A new queue may get the handle of one released with a failure still
// latched (the ICD's count at release can include its own references, so the
// release below cannot always tell): it starts clean.
cl_command_queue CL_API_CALL create_command_queue_with_properties(cl_context context, cl_device_id device,
                                                                  const cl_queue_properties *properties,
                                                                  cl_int *errcode_ret) {
    cl_command_queue queue = next().clCreateCommandQueueWithProperties(context, device, properties, errcode_ret);
    if (queue) forget_queue_identity(queue);
    if (queue && any_queue_failure()) forget_queue(queue);
    return queue;
}

cl_command_queue CL_API_CALL create_command_queue(cl_context context, cl_device_id device,
                                                  cl_command_queue_properties properties, cl_int *errcode_ret) {
    cl_command_queue queue = next().clCreateCommandQueue(context, device, properties, errcode_ret);
    if (queue) forget_queue_identity(queue);
    if (queue && any_queue_failure()) forget_queue(queue);
    return queue;
}

cl_int CL_API_CALL release_command_queue(cl_command_queue queue) {
    forget_queue_identity(queue);  // the handle may be reused by the ICD after this
    if (any_queue_failure()) {
        cl_uint refs = 0;
        if (next().clGetCommandQueueInfo(queue, CL_QUEUE_REFERENCE_COUNT, sizeof refs, &refs, nullptr) ==
                CL_SUCCESS &&
            refs <= 1)
            forget_queue(queue);  // the handle may be reused by the ICD after this
    }
    return next().clReleaseCommandQueue(queue);
}

}  // namespace cldmabuf
