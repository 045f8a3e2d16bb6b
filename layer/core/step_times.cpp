#include "layer/core/step_times.hpp"

#include <algorithm>
#include <chrono>

namespace cldmabuf {

uint64_t host_now_ns() {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

namespace {

uint64_t since(uint64_t later, uint64_t earlier) { return later > earlier ? later - earlier : 0; }

// How much more time a device clock may see pass than the host's steady
// clock saw over the same span before it counts as another clock.
constexpr uint64_t clock_slack_ns = 10'000'000;

// NEO 22.43 in AUB mode answers a completed marker's profiling queries with
// values that are no clock at all (QUEUED 0, or QUEUED and END 4613 with
// SUBMIT ten hours later; END 2^64 - 1.1e16), and composing from them made a
// release start before the acquire ahead of it ended.  Such a marker is left
// out.  Two clocks within one marker are not: NVIDIA's QUEUED/SUBMIT and its
// START/END may differ by a small offset, and every step of the ICD must
// take the same branch, or the steps' timestamps land in different clocks.
constexpr uint64_t marker_disorder_ns = 1'000'000'000;

bool marker_plausible(const StepClock &c) {
    constexpr uint64_t top = uint64_t{1} << 63;
    if (c.marker_queued == 0 || c.marker_end == 0 || c.marker_queued >= top || c.marker_end >= top) return false;
    const uint64_t submit = c.marker_submit ? c.marker_submit : c.marker_queued;
    return submit <= c.marker_end + marker_disorder_ns && c.marker_queued <= submit + marker_disorder_ns &&
           c.marker_queued <= c.marker_end + marker_disorder_ns;
}

// The spec puts clGetDeviceAndHostTimer's device time in the profiling
// timestamps' domain; one that is not (it reads before the marker's END, or
// saw more time pass since the marker was queued than the host did) is left
// out rather than mixed with the marker's.
bool timer_in_marker_domain(const StepClock &c) {
    return c.device_start >= c.marker_end &&
           since(c.device_start, c.marker_queued) <= since(c.host_start, c.host_queued) + clock_slack_ns;
}

}  // namespace

StepTimes compose_step_times(const StepClock &c) {
    StepTimes t;
    const bool marker = marker_plausible(c);
    const bool timer = c.device_start != 0 && c.device_end != 0 && (!marker || timer_in_marker_domain(c));
    if (marker) {
        t.queued = c.marker_queued;
        t.submit = c.marker_submit ? c.marker_submit : c.marker_queued;
        if (timer) {
            t.start = c.device_start;
            t.end = c.device_end;
        } else {
            t.start = c.marker_end + since(c.host_start, c.host_callback);
            t.end = t.start + since(c.host_end, c.host_start);
        }
    } else if (timer) {
        t.start = c.device_start;
        t.end = c.device_end;
        t.queued = c.device_start - std::min(c.device_start - 1, since(c.host_start, c.host_queued));
        t.submit = c.device_start - std::min(c.device_start - 1, since(c.host_start, c.host_callback));
    } else {
        t.queued = c.host_queued;
        t.submit = c.host_callback;
        t.start = c.host_start;
        t.end = c.host_end;
    }
    t.queued = std::max<uint64_t>(t.queued, 1);
    t.submit = std::max(t.submit, t.queued);
    t.start = std::max(t.start, t.submit);
    t.end = std::max(t.end, t.start);
    return t;
}

}  // namespace cldmabuf
