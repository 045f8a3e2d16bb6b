// The layer's host-work plumbing without an ICD: bounded ioctl retries, the
// per-queue workers, the failed-event policy and the step timestamps.
#include <catch2/catch_test_macros.hpp>

#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "fake_kernel.hpp"
#include "layer/core/failed_events.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/core/step_times.hpp"
#include "layer/core/worker.hpp"

using namespace cldmabuf;

TEST_CASE("kernel_ioctl_retry gives up on an endless EINTR with the errno, after a bounded number of tries") {
    set_log_level(LogLevel::none);
    unit::FakeKernel fake;
    unit::ScopedKernel scoped(&fake);
    fake.ioctl_errnos.assign(100000, EINTR);
    uint64_t arg = 0;
    errno = 0;
    CHECK(kernel_ioctl_retry(3, 0x1234, &arg) == -1);
    CHECK(errno == EINTR);
    CHECK(fake.ioctls.size() == static_cast<size_t>(ioctl_retry_limit) + 1);
}

TEST_CASE("kernel_ioctl_retry gives up on an endless EAGAIN with the errno") {
    set_log_level(LogLevel::none);
    unit::FakeKernel fake;
    unit::ScopedKernel scoped(&fake);
    fake.ioctl_errnos.assign(100000, EAGAIN);
    uint64_t arg = 0;
    CHECK(kernel_ioctl_retry(3, 0x1234, &arg) == -1);
    CHECK(errno == EAGAIN);
    CHECK(fake.ioctls.size() == static_cast<size_t>(ioctl_retry_limit) + 1);
}

TEST_CASE("kernel_ioctl_retry still rides out a few EINTR/EAGAIN and passes other errors at once") {
    unit::FakeKernel fake;
    unit::ScopedKernel scoped(&fake);
    fake.ioctl_errnos = {EINTR, EAGAIN, EINTR, 0};
    uint64_t arg = 0;
    CHECK(kernel_ioctl_retry(3, 0x1234, &arg) == 0);
    CHECK(fake.ioctls.size() == 4);
    fake.ioctls.clear();
    fake.ioctl_errnos = {EIO};
    CHECK(kernel_ioctl_retry(3, 0x1234, &arg) == -1);
    CHECK(errno == EIO);
    CHECK(fake.ioctls.size() == 1);
}

namespace {
// A job that blocks until released (stands in for a fence wait).
struct Gate {
    std::mutex m;
    std::condition_variable cv;
    bool open = false, entered = false;
    void enter_and_wait() {
        std::unique_lock l(m);
        entered = true;
        cv.notify_all();
        cv.wait(l, [&] { return open; });
    }
    void wait_entered() {
        std::unique_lock l(m);
        cv.wait(l, [&] { return entered; });
    }
    void release() {
        std::lock_guard l(m);
        open = true;
        cv.notify_all();
    }
};
}  // namespace

TEST_CASE("a job stuck on one queue's worker does not delay another queue's jobs; one queue keeps its order") {
    int queue_a = 0, queue_b = 0;  // stand-ins for two cl_command_queue handles
    Gate stuck;
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::string> done;
    auto record = [&](std::string what) {
        std::lock_guard l(m);
        done.push_back(std::move(what));
        cv.notify_all();
    };
    post_to_worker(&queue_a, [&] { stuck.enter_and_wait(); record("a1"); });
    post_to_worker(&queue_a, [&] { record("a2"); });
    stuck.wait_entered();
    for (int i = 0; i < 3; ++i) post_to_worker(&queue_b, [&, i] { record("b" + std::to_string(i)); });
    {
        std::unique_lock l(m);
        cv.wait(l, [&] { return done.size() == 3; });  // B finished while A is still stuck
        CHECK(done == std::vector<std::string>{"b0", "b1", "b2"});
    }
    stuck.release();
    shutdown_worker();  // drains and joins every queue's thread
    CHECK(done == std::vector<std::string>{"b0", "b1", "b2", "a1", "a2"});
    CHECK(live_workers() == 0);
}

TEST_CASE("failed host steps: NVIDIA propagates, PoCL, rusticl and NEO keep the side table, the setting forces either") {
    std::string why;
    CHECK(decide_failure_mode("Portable Computing Language",
                              "OpenCL 3.0 PoCL 3.1+debian  Linux, None+Asserts, RELOC", nullptr,
                              &why) == FailureMode::sidetable);
    CHECK(decide_failure_mode("Portable Computing Language", "OpenCL 3.0 PoCL 6.0+debian  Linux, None+Asserts, RELOC",
                              nullptr, &why) == FailureMode::sidetable);
    CHECK(decide_failure_mode("NVIDIA CUDA", "OpenCL 3.0 CUDA 13.0.98", nullptr, &why) == FailureMode::propagate);
    CHECK(decide_failure_mode("Intel(R) OpenCL HD Graphics", "OpenCL 3.0 ", nullptr, &why) ==
          FailureMode::sidetable);
    CHECK(why.find("NEO") != std::string::npos);
    CHECK(decide_failure_mode("Intel(R) OpenCL Graphics", "OpenCL 3.0 ", nullptr, &why) == FailureMode::sidetable);
    // Intel's CPU runtime is not NEO: not measured.
    CHECK(decide_failure_mode("Intel(R) CPU Runtime for OpenCL(TM) Applications", "OpenCL 3.0 WINDOWS", nullptr,
                              &why) == FailureMode::sidetable);
    CHECK(decide_failure_mode("rusticl", "OpenCL 3.0 ", nullptr, &why) == FailureMode::sidetable);
    CHECK(why.find("rusticl") != std::string::npos);
    CHECK(decide_failure_mode("Clover", "OpenCL 1.1 Mesa 23.2.1", nullptr, &why) == FailureMode::sidetable);
    CHECK(decide_failure_mode("Portable Computing Language", "OpenCL 3.0 PoCL 3.1", "propagate", &why) ==
          FailureMode::propagate);
    CHECK(decide_failure_mode("NVIDIA CUDA", "OpenCL 3.0 CUDA 13.0.98", "sidetable", &why) ==
          FailureMode::sidetable);
    CHECK_FALSE(why.empty());
}

TEST_CASE("step timestamps are nonzero and monotonic from every source") {
    auto monotonic = [](const StepTimes &t) {
        return t.queued != 0 && t.queued <= t.submit && t.submit <= t.start && t.start <= t.end;
    };
    StepClock c;
    c.host_queued = 1000, c.host_callback = 1500, c.host_start = 1600, c.host_end = 9600;
    SECTION("marker timestamps, no device timer: START/END follow the marker's END by host deltas") {
        c.marker_queued = 500000, c.marker_submit = 500100, c.marker_end = 500200;
        const StepTimes t = compose_step_times(c);
        CHECK(monotonic(t));
        CHECK(t.queued == 500000);
        CHECK(t.start == 500200 + 100);
        CHECK(t.end - t.start == 8000);  // the host work's duration
    }
    SECTION("device timer around the work") {
        c.marker_queued = 500000, c.marker_submit = 500100, c.marker_end = 500200;
        c.device_start = 500400, c.device_end = 508000;
        const StepTimes t = compose_step_times(c);
        CHECK(monotonic(t));
        CHECK(t.start == 500400);
        CHECK(t.end == 508000);
    }
    SECTION("a device timer in another clock than the marker's is not used (NEO 22.43, AUB mode)") {
        c.marker_queued = 500000, c.marker_submit = 500100, c.marker_end = 500200;
        SECTION("the timer reads far ahead of the marker") { c.device_start = 36000000000000, c.device_end = 36000000008000; }
        SECTION("the timer reads before the marker's END") { c.device_start = 400000, c.device_end = 408000; }
        SECTION("the timer runs 150 ms ahead") { c.device_start = 150500400, c.device_end = 150508000; }
        const StepTimes t = compose_step_times(c);
        CHECK(monotonic(t));
        CHECK(t.start == 500200 + 100);  // the marker's END plus host time, as without a timer
        CHECK(t.end - t.start == 8000);
    }
    SECTION("marker timestamps that are no clock are not used (NEO 22.43, AUB mode): the host clock") {
        SECTION("QUEUED 0, END past 2^63") { c.marker_queued = 0, c.marker_submit = 36628240312851, c.marker_end = 18435016067992607466ull; }
        SECTION("SUBMIT after END") { c.marker_queued = 4613, c.marker_submit = 36628241271279, c.marker_end = 4613; }
        const StepTimes t = compose_step_times(c);
        CHECK(monotonic(t));
        CHECK(t.queued == 1000);
        CHECK(t.start == 1600);
        CHECK(t.end == 9600);
    }
    SECTION("a marker whose QUEUED/SUBMIT and END are clocks a little apart (NVIDIA) is used, clamped") {
        c.marker_queued = 1796328969166000000, c.marker_submit = 1796328969166100000;
        c.marker_end = 1796328969165900000;  // 200 us before SUBMIT
        const StepTimes t = compose_step_times(c);
        CHECK(monotonic(t));
        CHECK(t.queued == 1796328969166000000);
        CHECK(t.start >= 1796328969166100000);
    }
    SECTION("device timer, marker without timestamps") {
        c.device_start = 500400, c.device_end = 508000;
        CHECK(monotonic(compose_step_times(c)));
    }
    SECTION("nothing from the ICD: the host clock") {
        const StepTimes t = compose_step_times(c);
        CHECK(monotonic(t));
        CHECK(t.queued == 1000);
        CHECK(t.end == 9600);
    }
    SECTION("a marker whose END precedes its QUEUED (clock skew) is clamped") {
        c.marker_queued = 500000, c.marker_submit = 400000, c.marker_end = 300000;
        CHECK(monotonic(compose_step_times(c)));
    }
}
