// Failed host steps reach the application, host steps of different queues
// do not wait for each other, and layer events carry profiling timestamps.
//
// A dma-buf "with a fence that never signals" on the virtual Gen9: a blitter
// copy into it whose batch never completes (vgen9_never_signal_next) leaves
// an unsignalled write fence on it until vgen9_reset() (a GPU reset, which
// completes the fence with -EIO).  The copy itself runs on a queue of its own.
//
// [host-fail] runs in e2e-sim (CLDMABUF_FENCE_TIMEOUT_MS=500); [long-fence]
// needs a fence wait that outlasts the test's other work, so it runs alone
// in e2e-sim-long-fence (20 s).  Nothing here asserts a duration.
#include <catch2/catch_test_macros.hpp>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "cl_fixture.hpp"
#include "layer_probe.hpp"
#include "event_info.hpp"
#include "imported_buffer.hpp"
#include "test_dmabufs.hpp"
#include "test_env.hpp"
#include "vgen9_control.hpp"

using namespace e2e;
using cldmabuf::test::env_is;
using cldmabuf::test::vgen9;

namespace {

// The stuck fence comes from the blitter: zero-copy imports on the virtual Gen9.
#define REQUIRE_STUCK_FENCES()                                                                         \
    do {                                                                                               \
        REQUIRE_DMABUF();                                                                              \
        if (!vgen9().loaded || env_is("CLDMABUF_IMPORT", "copy") || env_is("CLDMABUF_BLT", "off") ||     \
            !layer_takes_blitter())                                                                     \
            SKIP("needs the virtual Gen9 blitter (zero-copy imports) to leave a fence that never signals"); \
    } while (0)

// Copies src -> dst on `queue` with a batch that never completes; returns once
// the batch was submitted (dst then carries its unsignalled write fence).
cl_event leave_stuck_fence(cl_command_queue queue, cl_mem src, cl_mem dst) {
    const uint64_t before = vgen9().submitted();
    vgen9().never_signal_next(1);
    cl_event copy = nullptr;
    REQUIRE(clEnqueueCopyBuffer(queue, src, dst, 0, 0, 4096, 0, nullptr, &copy) == CL_SUCCESS);
    REQUIRE(clFlush(queue) == CL_SUCCESS);
    REQUIRE(vgen9().wait_for_submission(before, 10000));
    return copy;
}

// Completes the stuck fence (GPU reset) and lets the copy's step end.
void unstick(cl_command_queue queue, cl_event copy) {
    vgen9().reset();
    clWaitForEvents(1, &copy);
    CHECK(status_of(copy) < 0);  // its fence ended in -EIO or timed out
    clReleaseEvent(copy);
    clFinish(queue);  // reports that failure; the queue is clean again
}

std::atomic<cl_int> callback_status{1};
std::atomic<int> callbacks{0};
void CL_CALLBACK on_complete(cl_event, cl_int status, void *) {
    callback_status = status;
    callbacks++;
}

cl_ulong profiling(cl_event ev, cl_profiling_info what) {
    cl_ulong t = 0;
    REQUIRE(clGetEventProfilingInfo(ev, what, sizeof t, &t, nullptr) == CL_SUCCESS);
    return t;
}

}  // namespace

TEST_CASE("a fence timeout on acquire fails its event, its callback, waits on it and clFinish", "[host-fail]") {
    REQUIRE_STUCK_FENCES();
    ClEnv env;
    cl_command_queue poison = env.make_queue();
    ImportedBuffer a(env, 65536), b(env, 65536);
    cl_event copy = leave_stuck_fence(poison, a.mem, b.mem);

    cl_event acq = nullptr;
    REQUIRE(env.acquire(env.queue, 1, &b.mem, 0, nullptr, &acq) == CL_SUCCESS);
    callbacks = 0;
    callback_status = 1;
    REQUIRE(clSetEventCallback(acq, CL_COMPLETE, on_complete, nullptr) == CL_SUCCESS);
    CHECK(clWaitForEvents(1, &acq) == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    CHECK(status_of(acq) < 0);                                   // (a)
    for (int i = 0; i < 5000 && callbacks == 0; ++i) usleep(1000);
    CHECK(callbacks == 1);
    CHECK(callback_status < 0);                                  // (c)
    // A release behind it: a later layer step of the queue does not touch the
    // buffer before the failure was reported.
    cl_event rel = nullptr;
    REQUIRE(env.release(env.queue, 1, &b.mem, 0, nullptr, &rel) == CL_SUCCESS);
    clWaitForEvents(1, &rel);
    CHECK(status_of(rel) < 0);
    clReleaseEvent(rel);
    CHECK(clFinish(env.queue) == CL_OUT_OF_RESOURCES);
    clReleaseEvent(acq);

    unstick(poison, copy);
    // Once the failure was reported and the fence signalled, the queue works.
    REQUIRE(env.acquire(env.queue, 1, &b.mem, 0, nullptr, &acq) == CL_SUCCESS);
    CHECK(clWaitForEvents(1, &acq) == CL_SUCCESS);
    CHECK(status_of(acq) == CL_COMPLETE);
    clReleaseEvent(acq);
    REQUIRE(env.release(env.queue, 1, &b.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    clReleaseCommandQueue(poison);
}

TEST_CASE("a failed acquire with event NULL: the command behind it and clFinish report it", "[host-fail]") {
    REQUIRE_STUCK_FENCES();
    ClEnv env;
    cl_command_queue poison = env.make_queue();
    ImportedBuffer a(env, 65536), b(env, 65536);
    cl_event copy = leave_stuck_fence(poison, a.mem, b.mem);

    REQUIRE(env.acquire(env.queue, 1, &b.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    const cl_uint pattern = 7;
    REQUIRE(clEnqueueFillBuffer(env.queue, b.mem, &pattern, sizeof pattern, 0, 4096, 0, nullptr, nullptr) ==
            CL_SUCCESS);
    // The layer's documented way on PoCL 3.1 (side-table mode): clFinish
    // returns CL_OUT_OF_RESOURCES once for the failed step.
    CHECK(clFinish(env.queue) == CL_OUT_OF_RESOURCES);
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    unstick(poison, copy);
    clReleaseCommandQueue(poison);
}

TEST_CASE("a blocking map of an import whose fence never signals returns an error, not a pointer", "[host-fail]") {
    REQUIRE_STUCK_FENCES();
    ClEnv env;
    cl_command_queue poison = env.make_queue();
    ImportedBuffer a(env, 65536), b(env, 65536);
    cl_event copy = leave_stuck_fence(poison, a.mem, b.mem);

    cl_int err = CL_SUCCESS;
    void *p = clEnqueueMapBuffer(env.queue, b.mem, CL_TRUE, CL_MAP_READ, 0, 4096, 0, nullptr, nullptr, &err);
    CHECK(p == nullptr);
    CHECK(err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    CHECK(clFinish(env.queue) == CL_OUT_OF_RESOURCES);

    unstick(poison, copy);
    // The failed map left nothing mapped: a new map and its unmap work.
    p = clEnqueueMapBuffer(env.queue, b.mem, CL_TRUE, CL_MAP_READ, 0, 4096, 0, nullptr, nullptr, &err);
    CHECK(err == CL_SUCCESS);
    REQUIRE(p);
    REQUIRE(clEnqueueUnmapMemObject(env.queue, b.mem, p, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    clReleaseCommandQueue(poison);
}

TEST_CASE("acquire and release events of a profiling queue carry nonzero monotonic timestamps", "[host-fail]") {
    REQUIRE_DMABUF();
    ClEnv env;
    cl_command_queue q = env.make_queue(CL_QUEUE_PROFILING_ENABLE);
    ImportedBuffer d(env, 65536);
    cl_event ev[2] = {nullptr, nullptr};
    REQUIRE(env.acquire(q, 1, &d.mem, 0, nullptr, &ev[0]) == CL_SUCCESS);
    REQUIRE(env.release(q, 1, &d.mem, 0, nullptr, &ev[1]) == CL_SUCCESS);
    REQUIRE(clWaitForEvents(2, ev) == CL_SUCCESS);
    for (cl_event e : ev) {
        const cl_ulong queued = profiling(e, CL_PROFILING_COMMAND_QUEUED);
        const cl_ulong submit = profiling(e, CL_PROFILING_COMMAND_SUBMIT);
        const cl_ulong start = profiling(e, CL_PROFILING_COMMAND_START);
        const cl_ulong end = profiling(e, CL_PROFILING_COMMAND_END);
        const cl_ulong complete = profiling(e, CL_PROFILING_COMMAND_COMPLETE);
        CHECK(queued != 0);
        CHECK(queued <= submit);
        CHECK(submit <= start);
        CHECK(start <= end);
        CHECK(end <= complete);
    }
    // In queue order: the release started after the acquire ended.
    CHECK(profiling(ev[0], CL_PROFILING_COMMAND_END) <= profiling(ev[1], CL_PROFILING_COMMAND_START));
    clReleaseEvent(ev[0]);
    clReleaseEvent(ev[1]);
    clReleaseCommandQueue(q);
}

TEST_CASE("a fence wait on one queue does not hold up another queue's acquire and release", "[.][long-fence]") {
    REQUIRE_STUCK_FENCES();
    ClEnv env;
    cl_command_queue poison = env.make_queue(), qa = env.make_queue(), qb = env.make_queue();
    ImportedBuffer a(env, 65536), b(env, 65536), d(env, 65536);
    cl_event copy = leave_stuck_fence(poison, a.mem, b.mem);

    cl_event stuck = nullptr;  // queue A: waits for b's fence (CLDMABUF_FENCE_TIMEOUT_MS=20000)
    REQUIRE(env.acquire(qa, 1, &b.mem, 0, nullptr, &stuck) == CL_SUCCESS);
    REQUIRE(clFlush(qa) == CL_SUCCESS);
    cl_event done = nullptr;   // queue B: another import, no fence
    REQUIRE(env.acquire(qb, 1, &d.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(env.release(qb, 1, &d.mem, 0, nullptr, &done) == CL_SUCCESS);
    REQUIRE(clWaitForEvents(1, &done) == CL_SUCCESS);
    // B finished while A (and the copy that left the fence) still wait.
    CHECK(status_of(stuck) > CL_COMPLETE);
    CHECK(status_of(copy) > CL_COMPLETE);
    CHECK(clFinish(qb) == CL_SUCCESS);
    clReleaseEvent(done);

    unstick(poison, copy);  // the fence completes: A's acquire goes on
    clWaitForEvents(1, &stuck);
    CHECK(status_of(stuck) == CL_COMPLETE);
    clReleaseEvent(stuck);
    REQUIRE(env.release(qa, 1, &b.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(clFinish(qa) == CL_SUCCESS);
    for (cl_command_queue q : {poison, qa, qb}) clReleaseCommandQueue(q);
}

TEST_CASE("a layer event's START and END bracket its host work, in the device's clock", "[.][long-fence]") {
    REQUIRE_STUCK_FENCES();
    ClEnv env;
    cl_command_queue poison = env.make_queue(CL_QUEUE_PROFILING_ENABLE);
    cl_command_queue other = env.make_queue(CL_QUEUE_PROFILING_ENABLE);
    ImportedBuffer a(env, 65536), b(env, 65536);
    // The copy's host work has started: its batch is submitted, its fence wait runs.
    cl_event copy = leave_stuck_fence(poison, a.mem, b.mem);
    cl_event marker = nullptr;
    REQUIRE(clEnqueueMarkerWithWaitList(other, 0, nullptr, &marker) == CL_SUCCESS);
    REQUIRE(clWaitForEvents(1, &marker) == CL_SUCCESS);
    CHECK(status_of(copy) > CL_COMPLETE);  // still waiting when the marker ended
    vgen9().reset();
    clWaitForEvents(1, &copy);
    // The marker ran inside the copy's host work.
    CHECK(profiling(copy, CL_PROFILING_COMMAND_START) <= profiling(marker, CL_PROFILING_COMMAND_END));
    CHECK(profiling(marker, CL_PROFILING_COMMAND_END) <= profiling(copy, CL_PROFILING_COMMAND_END));
    CHECK(profiling(copy, CL_PROFILING_COMMAND_QUEUED) != 0);
    clReleaseEvent(marker);
    clReleaseEvent(copy);
    clFinish(poison);
    for (cl_command_queue q : {poison, other}) clReleaseCommandQueue(q);
}
