// The fast path's facts that a failure can change, read after its marker
// (layer/handoff/plan.hpp, MarkerFacts).  An acquire behind a queued acquire
// that fails: the later one plans the watched fast way while nothing has
// failed yet, and its marker is parked inside the test ICD, not yet in the
// queue, while the earlier acquire's wait list fails and its step latches
// the failure and detaches the dma-buf.  The marker then completes at once;
// the later acquire must still report the failure, not succeed with its
// commands on detached pages.  Suites testicd-fast-facts (zero-copy) and
// testicd-fast-facts-copy (a discrete device: the copy route).
#include <fcntl.h>

#include <catch2/catch_test_macros.hpp>
#include <cstdint>
#include <cstring>
#include <thread>

#include "CL/cl_ext_cldmabuf.h"
#include "dmabuf_view.hpp"
#include "test_dmabufs.hpp"
#include "test_handoff.hpp"
#include "test_park.hpp"

using namespace testicd_test;

namespace {

cl_int status_of(cl_event e) {
    cl_int s = CL_QUEUED;
    clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr);
    return s;
}

size_t bytes_not(e2e::DmabufView &view, unsigned char value) {
    view.begin(false);
    size_t wrong = 0;
    for (size_t i = 0; i < view.size; ++i) wrong += view.bytes[i] != value;
    view.end(false);
    return wrong;
}

}  // namespace

TEST_CASE("fast facts: an acquire whose marker was watched while an earlier acquire failed reports the failure",
          "[fast-facts]") {
    REQUIRE_DMABUF();
    Env env;
    Handoff h(env);
    constexpr size_t N = 16384;
    Imported x(env, N);
    e2e::DmabufView view(fcntl(x.watch, F_DUPFD_CLOEXEC, 0), N);
    view.begin(true);
    std::memset(view.bytes, 0x11, N);
    view.end(true);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);

    cl_int err = CL_SUCCESS;
    cl_event user = clCreateUserEvent(env.context, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_event first = nullptr, second = nullptr, released = nullptr;
    REQUIRE(h.acquire(env.queue, 1, &x.mem, 1, &user, &first) == CL_SUCCESS);

    park(env, "clEnqueueMarkerWithWaitList");  // the second acquire's marker, planned, not yet in the queue
    cl_int second_err = CL_OUT_OF_RESOURCES;
    std::thread t([&] { second_err = h.acquire(env.queue, 1, &x.mem, 0, nullptr, &second); });
    REQUIRE(wait_parked(env));
    REQUIRE(clSetUserEventStatus(user, -1) == CL_SUCCESS);
    CHECK(clWaitForEvents(1, &first) != CL_SUCCESS);  // its step ran: failure latched, dma-buf detached
    const auto before = layer_stats(env);
    unpark(env);
    t.join();
    REQUIRE(second_err == CL_SUCCESS);
    INFO("fast handoffs " << before[CL_STATS_FAST_HANDOFFS_CLDMABUF] << " -> "
                          << layer_stats(env)[CL_STATS_FAST_HANDOFFS_CLDMABUF]);
    CHECK(layer_stats(env)[CL_STATS_FAST_HANDOFFS_CLDMABUF] == before[CL_STATS_FAST_HANDOFFS_CLDMABUF]);

    const cl_uint pattern = 0x22222222u;
    REQUIRE(clEnqueueFillBuffer(env.queue, x.mem, &pattern, sizeof pattern, 0, N, 0, nullptr, nullptr) ==
            CL_SUCCESS);
    REQUIRE(h.release(env.queue, 1, &x.mem, 0, nullptr, &released) == CL_SUCCESS);
    CHECK(clFinish(env.queue) != CL_SUCCESS);  // the failure, reported once
    INFO("second acquire's status " << status_of(second) << ", its release's " << status_of(released));
    CHECK(status_of(second) < 0);
    CHECK(status_of(released) < 0);
    CHECK(bytes_not(view, 0x11) == 0);  // a failed acquire's commands never reach the dma-buf

    // Reported: the next round runs and writes back.
    const cl_uint next = 0x33333333u;
    REQUIRE(h.acquire(env.queue, 1, &x.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clEnqueueFillBuffer(env.queue, x.mem, &next, sizeof next, 0, N, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(h.release(env.queue, 1, &x.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    CHECK(bytes_not(view, 0x33) == 0);

    clReleaseEvent(first);
    clReleaseEvent(second);
    clReleaseEvent(released);
    clReleaseEvent(user);
}
