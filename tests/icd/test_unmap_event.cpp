// The event an unmap of a zero-copy import hands back is the layer's SYNC
// END step (layer/handoff/map_sync.cpp): a command of another queue that
// waits on it starts only after END, a failed END shows on it, and it
// answers CL_COMMAND_UNMAP_MEM_OBJECT.  Suite testicd-unmap-event, the layer
// over the plain test ICD (zero-copy imports), dma-bufs from the virtual
// Gen9, whose DMA_BUF_IOCTL_SYNC the test fails with EAGAIN: the layer
// retries it for about 0.6 s (kernel_ioctl_retry), then END fails.  In the
// VM (tests/vm/lane-tests) the same cases run on the kernel's heap dma-bufs,
// the virtual Gen9 preloaded only to count and fail their SYNCs
// (CLDMABUF_SIM_WATCH_SYNCS=1).
#include <linux/dma-buf.h>
#include <sys/ioctl.h>  // _IOW in DMA_BUF_IOCTL_SYNC (x86-64 headers pulled it in by chance; arm64 did not)

#include <catch2/catch_test_macros.hpp>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>

#include "CL/cl_ext_cldmabuf.h"
#include "test_dmabufs.hpp"
#include "test_handoff.hpp"
#include "vgen9_control.hpp"

using namespace testicd_test;
using cldmabuf::test::vgen9;

namespace {

constexpr cl_platform_info kState = 0x7E5A;  // tests/icd/testicd.hpp: [3] live ICD events

cl_int status_of(cl_event e) {
    cl_int s = CL_QUEUED;
    clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr);
    return s;
}

uint64_t sync_ends() {
    uint64_t starts = 0, ends = 0;
    vgen9().dmabuf_syncs(&starts, &ends);
    return ends;
}

// The ICD's live events once the layer's steps have let go of theirs (on
// its workers, a moment after the barrier completed): unchanged for 100 ms,
// bounded at 5 s.
cl_ulong settled_icd_events(const Env &env) {
    auto now = [&] {
        cl_ulong v[4] = {};
        REQUIRE(clGetPlatformInfo(env.platform, kState, sizeof v, v, nullptr) == CL_SUCCESS);
        return v[3];
    };
    cl_ulong last = now();
    for (int still = 0, i = 0; still < 5 && i < 250; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        const cl_ulong n = now();
        still = n == last ? still + 1 : 0;
        last = n;
    }
    return last;
}

// A mapped zero-copy import and a second queue.
struct Mapped {
    const Env &env;
    Imported x;
    cl_command_queue other = nullptr;
    void *ptr = nullptr;
    Mapped(const Env &e, size_t size) : env(e), x(e, size) {
        cl_uint route = CL_DMA_BUF_ROUTE_COPY_CLDMABUF;
        REQUIRE(clGetMemObjectInfo(x.mem, CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, sizeof route, &route, nullptr) ==
                CL_SUCCESS);
        REQUIRE(route != CL_DMA_BUF_ROUTE_COPY_CLDMABUF);  // map_sync brackets zero-copy imports only
        cl_int err = CL_OUT_OF_RESOURCES;
        other = clCreateCommandQueue(env.context, env.device, 0, &err);
        REQUIRE(err == CL_SUCCESS);
        ptr = clEnqueueMapBuffer(env.queue, x.mem, CL_TRUE, CL_MAP_WRITE, 0, size, 0, nullptr, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        std::memset(ptr, 0x5a, size);
    }
    ~Mapped() {
        clFinish(other);
        clReleaseCommandQueue(other);
    }
};

}  // namespace

TEST_CASE("unmap event: another queue's command waiting on it starts after SYNC END; a failed END shows on it",
          "[unmap-event]") {
    REQUIRE_DMABUF();
    REQUIRE(vgen9().loaded);
    Env env;
    Mapped m(env, 65536);
    // Every SYNC from now on fails with EAGAIN: END is retried for about
    // 0.6 s, then fails.
    REQUIRE(vgen9().fail_ioctl(DMA_BUF_IOCTL_SYNC, 0, EAGAIN) == 0);
    cl_event unmapped = nullptr, after = nullptr;
    REQUIRE(clEnqueueUnmapMemObject(env.queue, m.x.mem, m.ptr, 0, nullptr, &unmapped) == CL_SUCCESS);
    REQUIRE(clEnqueueMarkerWithWaitList(m.other, 1, &unmapped, &after) == CL_SUCCESS);
    // END is still being retried: the other queue's marker has not run,
    // unless END already returned (its failure is on the event first).
    const cl_int after_now = status_of(after), unmapped_now = status_of(unmapped);
    INFO("right after the enqueues: the other queue's marker " << after_now << ", the unmap's event "
                                                                << unmapped_now);
    CHECK((after_now != CL_COMPLETE || unmapped_now < 0));

    clWaitForEvents(1, &after);
    INFO("the unmap's event once the other queue's marker ran: " << status_of(unmapped));
    CHECK(status_of(unmapped) < 0);
    CHECK(clWaitForEvents(1, &unmapped) != CL_SUCCESS);
    CHECK(clFinish(env.queue) != CL_SUCCESS);  // the queue reports the failed END once
    vgen9().reset();
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    clReleaseEvent(after);
    clReleaseEvent(unmapped);
}

TEST_CASE("unmap event: an END that succeeds ran before another queue's command waiting on it; the event is the "
          "unmap's and leaves nothing behind",
          "[unmap-event]") {
    REQUIRE_DMABUF();
    REQUIRE(vgen9().loaded);
    Env env;
    const auto layer_before = layer_stats(env);
    const cl_ulong icd_before = settled_icd_events(env);
    {
        Mapped m(env, 65536);
        cl_int err = CL_OUT_OF_RESOURCES;
        cl_event hold = clCreateUserEvent(env.context, &err);  // holds the unmap until the other queue waits
        REQUIRE(err == CL_SUCCESS);
        cl_event unmapped = nullptr, after = nullptr;
        const uint64_t ends_before = sync_ends();
        REQUIRE(clEnqueueUnmapMemObject(env.queue, m.x.mem, m.ptr, 1, &hold, &unmapped) == CL_SUCCESS);
        cl_command_type type = 0;
        REQUIRE(clGetEventInfo(unmapped, CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr) == CL_SUCCESS);
        CHECK(type == CL_COMMAND_UNMAP_MEM_OBJECT);
        cl_command_queue queue = nullptr;
        REQUIRE(clGetEventInfo(unmapped, CL_EVENT_COMMAND_QUEUE, sizeof queue, &queue, nullptr) == CL_SUCCESS);
        CHECK(queue == env.queue);
        REQUIRE(clEnqueueMarkerWithWaitList(m.other, 1, &unmapped, &after) == CL_SUCCESS);
        CHECK(status_of(after) != CL_COMPLETE);
        REQUIRE(clSetUserEventStatus(hold, CL_COMPLETE) == CL_SUCCESS);
        REQUIRE(clWaitForEvents(1, &after) == CL_SUCCESS);
        CHECK(sync_ends() > ends_before);  // END ran before the marker could
        CHECK(status_of(unmapped) == CL_COMPLETE);
        CHECK(clWaitForEvents(1, &unmapped) == CL_SUCCESS);
        CHECK(clFinish(env.queue) == CL_SUCCESS);
        clReleaseEvent(after);
        clReleaseEvent(unmapped);
        clReleaseEvent(hold);
    }
    CHECK(layer_stats(env)[CL_STATS_LIVE_LAYER_EVENTS_CLDMABUF] ==
          layer_before[CL_STATS_LIVE_LAYER_EVENTS_CLDMABUF]);
    CHECK(settled_icd_events(env) == icd_before);
}

TEST_CASE("unmap event: with the ICD's unmap complete at once, END is done before the call returns", "[unmap-event]") {
    REQUIRE_DMABUF();
    REQUIRE(vgen9().loaded);
    Env env;
    Mapped m(env, 65536);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    const uint64_t ends_before = sync_ends();
    cl_event unmapped = nullptr;
    REQUIRE(clEnqueueUnmapMemObject(env.queue, m.x.mem, m.ptr, 0, nullptr, &unmapped) == CL_SUCCESS);
    CHECK(sync_ends() == ends_before + 1);  // on this thread, before the call returned
    CHECK(status_of(unmapped) == CL_COMPLETE);
    cl_command_type type = 0;
    REQUIRE(clGetEventInfo(unmapped, CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr) == CL_SUCCESS);
    CHECK(type == CL_COMMAND_UNMAP_MEM_OBJECT);
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    clReleaseEvent(unmapped);
}
