#include "layer/step_times.hpp"

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
// values that are no clock at all (QUEUED 0 or 4613, SUBMIT the host's clock,
// END 4613 or 2^64 - 1.1e16), and composing from them made a release start
// 150 ms before the acquire ahead of it ended.  A marker's timestamps count
// only when they are in order and span no more time than the host saw from
// the enqueue to the marker's callback.
bool marker_plausible(const StepClock &c) {
    return c.marker_queued != 0 && c.marker_end != 0 &&
           (c.marker_submit == 0 || (c.marker_queued <= c.marker_submit && c.marker_submit <= c.marker_end)) &&
           c.marker_queued <= c.marker_end &&
           c.marker_end - c.marker_queued <= since(c.host_callback, c.host_queued) + clock_slack_ns;
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
