// A host step's marker watched by its status as well as by its callback.
//
// Why: NVIDIA (580, H100, tests/nvidia/step_latency_probe.c) calls a
// marker's CL_COMPLETE callback about 20 ms after the marker completed
// behind a 3 MB Write, while a status query sees it complete within 0.3 ms
// (0.04 ms on an idle queue, where both are quick).  Every queued acquire
// and release of a frame paid those 20 ms (a pooled re-import 11-16x
// NVIDIA's own buffer, docs/benchmarks.md).  So on such an ICD one thread
// of the layer asks the status of the pending steps' markers, every 20 us
// at first and backing off to 1 ms, while any is pending; the first of
// the poll and the callback to see the marker ended runs the step (a step
// runs exactly once: layer/core/host_step.cpp claims it), the other finds
// it gone.  The thread ends 100 ms after the last polled step ran.
//
// CLDMABUF_STEP_POLL=auto (NVIDIA, the ICD measured so) | on | off.  The
// explorer's test ICD is never polled unless a test asks (its schedules
// stay the scheduler's).
#pragma once

#include <string>

#include "layer/base/cl_compat.h"

namespace cldmabuf {

// The pure decision: the platform's name and the setting's value (nullptr
// when unset); *why receives the reason for the log line.
bool decide_step_poll(const std::string &platform_name, const char *setting, std::string *why);

// Whether steps of `queue` are polled: the source the ICD's profile
// installs (layer/icd/profile.hpp, a floor this one does not include); no
// until then.
using StepPollSource = bool (*)(cl_command_queue queue);
void install_step_poll_source(StepPollSource source);
bool step_poll_wanted(cl_command_queue queue);

// A polled step was added: the poller looks now (and starts if it is not
// running).  `poll_once` asks every polled step's marker once, runs those
// that ended, and returns how many polled steps are still pending.
using PollOnce = size_t (*)();
void wake_step_poller(PollOnce poll_once);

}  // namespace cldmabuf
