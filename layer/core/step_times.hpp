// Profiling timestamps of a layer step's event.
//
// The step's event is the ICD's barrier, whose own timestamps cover only the
// barrier (and on NVIDIA CUDA are all 0).  The step really starts when its
// marker completed and the host work began, and ends when the work finished,
// so the layer composes the four timestamps from what it can get, best first:
//   QUEUED, SUBMIT  the marker's (the ICD's device clock)
//   START, END      clGetDeviceAndHostTimer around the work when the device
//                   has it; else the marker's END plus the host time that
//                   passed (steady clock), which stays in the device's domain
//   everything      the host's steady clock when the marker has no timestamps
// and then makes them nonzero and monotonic.
#pragma once

#include <cstdint>

#include "layer/core/registry.hpp"

namespace cldmabuf {

struct StepClock {
    // The marker's profiling info (0: not available).
    uint64_t marker_queued = 0, marker_submit = 0, marker_end = 0;
    // clGetDeviceAndHostTimer's device time before and after the work (0: none).
    uint64_t device_start = 0, device_end = 0;
    // Host steady clock (ns): enqueue, marker callback, work start, work end.
    uint64_t host_queued = 0, host_callback = 0, host_start = 0, host_end = 0;
};

StepTimes compose_step_times(const StepClock &clock);

// Host steady clock in ns.
uint64_t host_now_ns();

}  // namespace cldmabuf
