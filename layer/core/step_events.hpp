// The marker and the gate of a host step (layer/core/host_step.hpp), and
// when they may be released: once the step's barrier, which waits on the
// gate, has ended.  PoCL 3.1 takes no reference on a user event that a
// command waits on, and its device thread still touches the gate after
// clSetUserEventStatus returns; the marker is kept as long (releasing it
// while PoCL's device thread still finished it crashed PoCL 3.1 under
// MALLOC_PERTURB_).
//
// Two ways to learn that the barrier ended: its CL_COMPLETE callback, and,
// where that never comes (the ICD refused it, or terminated the barrier and
// calls no callback of a terminated command: PoCL 3.1 and 5.0), a look at
// the barrier's status at the points the layer already intercepts
// (sweep_step_events).  Nothing here waits for an OpenCL event.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "layer/base/cl_compat.h"
#include "layer/core/icd_ref.hpp"

namespace cldmabuf {

// Shared by the step's job and the barrier's callback (which holds its own
// shared_ptr while it is registered); the last to let go frees it.
struct StepEvents {
    StepEvents(cl_command_queue q, IcdEvent m, IcdEvent g) : queue(q), marker(std::move(m)), gate(std::move(g)) {}
    cl_command_queue queue;
    IcdEvent marker;
    IcdEvent gate;
    std::atomic<bool> released{false};
    // The barrier callback's token (release_events_on_barrier), 0 when none
    // is registered; written before the events reach another thread.
    uintptr_t callback_token = 0;
};

// Registers the barrier's callback, whose record then holds `events` too;
// false when the ICD refused it: then the job is the only owner.  The record
// goes when the callback runs or when the sweep sees the barrier ended,
// whichever comes first.
bool release_events_on_barrier(const std::shared_ptr<StepEvents> &events, cl_event barrier);

// Barrier callbacks registered and neither run nor outlived by their
// barrier's end (CL_STATS_STEP_CALLBACK_RECORDS_CLDMABUF, a gauge).
size_t step_callback_records();

// The job's part, once the gate is set: `barrier` (a reference the caller
// hands over) is watched and the events released once it ended, by its
// callback or by a later sweep, whichever sees it first.  Where the
// barrier's callback is registered and the barrier ended normally, the
// callback does it and the sweep only drops the reference.
void release_events_when_ended(std::shared_ptr<StepEvents> events, IcdEvent barrier);

// Releases the events of every watched step whose barrier has ended (one
// status query per watched step; nothing when none is watched).
void sweep_step_events();

}  // namespace cldmabuf
