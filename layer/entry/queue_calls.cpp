#include "layer/entry/queue_calls.hpp"

#include "layer/blit/queue_context.hpp"
#include "layer/core/command_dependencies.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/core/failed_events.hpp"
#include "layer/core/host_step.hpp"
#include "layer/handoff/failed_acquire_shield.hpp"
#include "layer/queue/epoch.hpp"
#include "layer/queue/identity.hpp"
#include "layer/queue/quiet.hpp"

namespace cldmabuf {

// clFinish waits for the barriers, hence for the steps' work; the first layer
// step that failed on the queue since the last clFinish is reported once,
// as CL_OUT_OF_RESOURCES / CL_OUT_OF_HOST_MEMORY (the errors clFinish has).
cl_int CL_API_CALL finish_queue(cl_command_queue queue) {
    const EpochWord word = read_epoch();  // before: a command that begins after it may follow the finish
    // Steps the ICD terminated without their callback are resolved before the
    // ICD waits (their gates hold the barriers behind them) and after (a
    // command that failed meanwhile), so the failure is latched, and reported
    // below, by this clFinish.
    resolve_terminated_steps(queue);
    wait_for_polled_steps(queue);  // CLDMABUF_DEBUG=finish-waits-steps only (layer/core/host_step.hpp)
    cl_int err = next().clFinish(queue);
    resolve_terminated_steps(queue);
    if (err == CL_SUCCESS) note_quiet_queue(queue, word, 0);  // nothing of the queue's is left to run
    // ... nor to wait for, unless a command of another thread began or
    // landed meanwhile (it may not be among what the finish waited for).
    if (err == CL_SUCCESS && word.in_flight() == 0 && read_epoch() == word) forget_queue_dependencies(queue);
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
    if (queue) forget_queue_dependencies(queue);
    if (queue && any_queue_failure()) forget_queue(queue);
    if (queue) note_queue_created(queue);
    return queue;
}

cl_command_queue CL_API_CALL create_command_queue(cl_context context, cl_device_id device,
                                                  cl_command_queue_properties properties, cl_int *errcode_ret) {
    cl_command_queue queue = next().clCreateCommandQueue(context, device, properties, errcode_ret);
    if (queue) forget_queue_identity(queue);
    if (queue) forget_queue_dependencies(queue);
    if (queue && any_queue_failure()) forget_queue(queue);
    if (queue) note_queue_created(queue);
    return queue;
}

cl_int CL_API_CALL release_command_queue(cl_command_queue queue) {
    resolve_terminated_steps(queue);  // while the handle is still the queue's
    forget_queue_identity(queue);  // the handle may be reused by the ICD after this
    if (any_queue_failure()) {
        cl_uint refs = 0;
        if (next().clGetCommandQueueInfo(queue, CL_QUEUE_REFERENCE_COUNT, sizeof refs, &refs, nullptr) ==
                CL_SUCCESS &&
            refs <= 1)
            forget_queue(queue);  // the handle may be reused by the ICD after this
    }
    note_queue_released(queue);  // the last one lets the queue's blitter GEM context go
    return next().clReleaseCommandQueue(queue);
}

cl_int CL_API_CALL retain_command_queue(cl_command_queue queue) {
    const cl_int err = next().clRetainCommandQueue(queue);
    if (err == CL_SUCCESS) note_queue_retained(queue);
    return err;
}

}  // namespace cldmabuf
