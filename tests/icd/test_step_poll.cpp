// A host step whose marker's callback comes late (mode held_callbacks: the
// test ICD calls no command's callback until told, as NVIDIA calls a
// marker's about 20 ms after it completed behind a transfer): with
// CLDMABUF_STEP_POLL=on the layer's status poll sees the marker ended and
// runs the step, so a queued acquire and release complete, the bytes are
// the device's, and the held callbacks, called at last, find their steps
// already run.  Suite testicd-step-poll, dma-bufs from the virtual Gen9.
#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "dmabuf_view.hpp"
#include "test_handoff.hpp"

using namespace testicd_test;

namespace {

constexpr cl_platform_info kRunCallbacks = 0x7E68;   // tests/icd/testicd.hpp
constexpr cl_platform_info kHeldCallbacks = 0x7E69;

cl_ulong held(const Env &env) {
    cl_ulong n = 0;
    REQUIRE(clGetPlatformInfo(env.platform, kHeldCallbacks, sizeof n, &n, nullptr) == CL_SUCCESS);
    return n;
}

cl_int status_of(cl_event e) {
    cl_int s = CL_QUEUED;
    clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr);
    return s;
}

}  // namespace

TEST_CASE("step poll: queued acquire and release run while their markers' callbacks are held", "[step-poll]") {
    Env env;
    const auto [acquire, release] = Handoff(env);
    constexpr size_t N = 64 * 1024;
    Imported x(env, N);
    const cl_ulong polled_before = layer_stats(env)[CL_STATS_STEPS_POLLED_CLDMABUF];
    // Behind a user event both are queued steps (a marker, a worker job, a gate).
    cl_int err = CL_OUT_OF_RESOURCES;
    cl_event go = clCreateUserEvent(env.context, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_event acq = nullptr, rel = nullptr;
    REQUIRE(acquire(env.queue, 1, &x.mem, 1, &go, &acq) == CL_SUCCESS);
    const uint32_t pattern = 0x5eed1234u;
    REQUIRE(clEnqueueFillBuffer(env.queue, x.mem, &pattern, sizeof pattern, 0, N, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(release(env.queue, 1, &x.mem, 0, nullptr, &rel) == CL_SUCCESS);
    REQUIRE(clSetUserEventStatus(go, CL_COMPLETE) == CL_SUCCESS);
    // Without the poll nothing would run the steps: their callbacks are held.
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(status_of(acq) == CL_COMPLETE);
    CHECK(status_of(rel) == CL_COMPLETE);
    CHECK(held(env) > 0);
    CHECK(layer_stats(env)[CL_STATS_STEPS_POLLED_CLDMABUF] >= polled_before + 2);
    // The device's bytes are in the dma-buf (the release's SYNC END ran).
    e2e::DmabufView view(fcntl(x.watch, F_DUPFD_CLOEXEC, 0), N);
    view.begin(false);
    const std::vector<uint32_t> seen(view.words, view.words + N / 4);
    view.end(false);
    CHECK(std::count(seen.begin(), seen.end(), pattern) == static_cast<std::ptrdiff_t>(N / 4));
    // The callbacks come at last: their steps ran already, nothing runs twice.
    const cl_ulong polled_after = layer_stats(env)[CL_STATS_STEPS_POLLED_CLDMABUF];
    REQUIRE(clGetPlatformInfo(env.platform, kRunCallbacks, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(held(env) == 0);
    CHECK(layer_stats(env)[CL_STATS_STEPS_POLLED_CLDMABUF] == polled_after);
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    for (cl_event e : {acq, rel, go}) clReleaseEvent(e);
}
