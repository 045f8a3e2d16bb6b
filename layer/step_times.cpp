#include "layer/step_times.hpp"

#include <algorithm>
#include <chrono>

namespace cldmabuf {

uint64_t host_now_ns() {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

StepTimes compose_step_times(const StepClock &c) {
    auto since = [](uint64_t later, uint64_t earlier) { return later > earlier ? later - earlier : 0; };
    StepTimes t;
    const bool marker = c.marker_queued != 0 && c.marker_end != 0;
    const bool timer = c.device_start != 0 && c.device_end != 0;
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
