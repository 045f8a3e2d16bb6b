// How the failure of a layer step (a fence wait that timed out, a failed
// DMA_BUF_IOCTL_SYNC or blitter batch) reaches the application.
//
// The layer always records the failure in its event side table
// (EventTypeRegistry) and in a per-queue latch (every later layer step of the
// queue fails until clFinish reported it, in both modes); on top of that:
//
//   propagate  the step's gate user event completes with the negative status
//              (clSetUserEventStatus(gate, err)): the ICD terminates the step's
//              barrier and the commands behind it, as the spec describes
//              (NVIDIA).
//   sidetable  the gate completes with CL_COMPLETE (the ICD sees success); the
//              layer answers for its own events (status queries, waits,
//              callbacks, clFinish, blocking maps).  ICD commands behind the
//              step still run; a failed acquire detaches
//              its dma-bufs from them first (layer/handoff/failed_acquire_shield.hpp).
//              For ICDs whose failed-event path does not serve (PoCL never
//              calls the callbacks of terminated commands, rusticl fails the
//              queue for good, NEO 22.43 aborts later: docs/layer-rules.md,
//              "When host work fails").
//
// The choice is made per platform by decide_failure_mode() alone, kept and
// logged once per platform in the platform's profile (layer/icd/profile.hpp);
// CLDMABUF_FAILED_EVENTS=propagate|sidetable forces it.
#pragma once

#include <string>

#include "layer/base/cl_compat.h"

namespace cldmabuf {

enum class FailureMode { propagate, sidetable };

// The pure decision: platform name and version strings and the setting's
// value (nullptr when unset).  *why receives the reason for the log line.
FailureMode decide_failure_mode(const std::string &platform_name, const std::string &platform_version,
                                const char *setting, std::string *why);

// The mode for the ICD behind `queue`: the source the ICD's profile installs
// (layer/icd/profile.hpp, a floor this one does not include), sidetable
// until then.
using FailureModeSource = FailureMode (*)(cl_command_queue queue);
void install_failure_mode_source(FailureModeSource source);
FailureMode failure_mode(cl_command_queue queue);

// Per-queue latch: the first failure of a layer step on `queue` since the
// queue's last clFinish.
void note_queue_failure(cl_command_queue queue, cl_int status);
// The latched failure (0 when none); does not clear it.
cl_int queue_failure(cl_command_queue queue);
// Takes and clears the latch (clFinish reports it once).
cl_int take_queue_failure(cl_command_queue queue);
// Drops the latch of a queue the application released for the last time
// (the ICD may hand the handle out again).
void forget_queue(cl_command_queue queue);
// Cheap check for the overrides: any queue latched.
bool any_queue_failure();

}  // namespace cldmabuf
