// An acquire whose wait list fails: the ICD terminates the step's marker.
// On an ICD that never calls the callbacks of commands it terminates (mode
// no_terminated_callbacks, as PoCL 3.1) the layer still resolves the step,
// as it does where the callback comes (the plain mode): the failure is
// reported once, the import's objects and fds go with its last release,
// the dma-buf's next release through a new import attaches its fence, the
// fast paths come back.  Suites testicd-terminated and
// testicd-terminated-no-callbacks, dma-bufs and sw_sync fences from the
// virtual Gen9.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <chrono>
#include <thread>

#include "CL/cl_ext_cldmabuf.h"
#include "settled_counts.hpp"
#include "test_dmabufs.hpp"
#include "test_handoff.hpp"

using namespace testicd_test;

namespace {

constexpr cl_platform_info kState = 0x7E5A;  // tests/icd/testicd.hpp: calls, failed, live buffers, live events

struct Counts {
    cl_ulong mems = 0, events = 0;
    int fds = 0;
    bool operator==(const Counts &) const = default;
};

Counts counts(const Env &env) {
    cl_ulong v[4] = {};
    REQUIRE(clGetPlatformInfo(env.platform, kState, sizeof v, v, nullptr) == CL_SUCCESS);
    return {v[2], v[3], cldmabuf::test::unparked_fds_now(env.platform)};
}

// The counts as soon as they equal `expected`, or as they stand after 3 s
// (the layer's workers end a step a moment after clFinish).
Counts counts_toward(const Env &env, const Counts &expected) {
    Counts now = counts(env);
    for (int i = 0; i < 600 && !(now == expected); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        now = counts(env);
    }
    return now;
}

void check_back(const Counts &now, const Counts &before) {
    CHECK(now.fds == before.fds);
    CHECK(now.mems == before.mems);
    CHECK(now.events == before.events);
}

bool writer_pending(int fd) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, 0) == 0;
}

bool layer_has_fence_source(const Env &env) {
    size_t bytes = 0;
    return clGetDeviceInfo(env.device, CL_DEVICE_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR, 0, nullptr, &bytes) ==
               CL_SUCCESS &&
           bytes > 0;
}

cl_event user_event(const Env &env) {
    cl_int err = CL_OUT_OF_RESOURCES;
    cl_event e = clCreateUserEvent(env.context, &err);
    REQUIRE(err == CL_SUCCESS);
    return e;
}

cl_mem import_fd(const Env &env, int fd, size_t size) {
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(fd),
                                       0};
    cl_int err = CL_OUT_OF_RESOURCES;
    cl_mem mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, size, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    return mem;
}

}  // namespace

TEST_CASE("terminated steps: an acquire whose wait list failed is resolved, and its dma-buf works as a fresh one",
          "[terminated]") {
    REQUIRE_DMABUF();
    constexpr size_t kSize = 65536;
    const cl_uint pattern = 0x40c0ffeeu;
    Env env;
    const auto [acquire, release] = Handoff(env);
    e2e::Dmabuf buf = e2e::make_dmabuf(kSize);
    const int watch = fcntl(buf.fd, F_DUPFD_CLOEXEC, 0);  // a consumer's fd, and the later import's source
    REQUIRE(watch >= 0);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    Counts before = counts(env);
    before.fds -= 1;  // buf's fd: the import owns it, it closes with the import
    const cl_ulong records_before = cldmabuf::test::step_callback_records_toward(env.platform, env.queue, 0);

    // acquire (waits for U) -> fill -> release; U fails.
    cl_mem x = import_fd(env, buf.release_fd(), kSize);
    cl_event u = user_event(env);
    cl_event acq = nullptr, rel = nullptr;
    REQUIRE(acquire(env.queue, 1, &x, 1, &u, &acq) == CL_SUCCESS);
    REQUIRE(clEnqueueFillBuffer(env.queue, x, &pattern, sizeof pattern, 0, kSize, 0, nullptr, nullptr) ==
            CL_SUCCESS);
    REQUIRE(release(env.queue, 1, &x, 0, nullptr, &rel) == CL_SUCCESS);
    REQUIRE(clSetUserEventStatus(u, -1) == CL_SUCCESS);

    // The failure is reported at most once: the acquire's event, and
    // clFinish once; the queue then finishes clean.
    const cl_int first = clFinish(env.queue);
    INFO("first clFinish " << first);
    CHECK((first == CL_SUCCESS || first == CL_OUT_OF_RESOURCES));
    cl_int acq_status = CL_QUEUED;
    REQUIRE(clGetEventInfo(acq, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof acq_status, &acq_status, nullptr) ==
            CL_SUCCESS);
    CHECK(acq_status < 0);
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    CHECK(clWaitForEvents(1, &rel) != CL_SUCCESS);  // behind the failed acquire: failed too (a bounded wait)
    clReleaseEvent(acq);
    clReleaseEvent(rel);
    clReleaseEvent(u);

    // (a) The import's fd and every ICD object of its steps go with its last release.
    clReleaseMemObject(x);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    check_back(counts_toward(env, before), before);

    // (b) A new import of the same dma-buf: its queued release's fence is in
    // the dma-buf until the release ran, as on a fresh dma-buf.
    const int again_fd = fcntl(watch, F_DUPFD_CLOEXEC, 0);
    REQUIRE(again_fd >= 0);
    cl_mem y = import_fd(env, again_fd, kSize);
    REQUIRE(acquire(env.queue, 1, &y, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clEnqueueFillBuffer(env.queue, y, &pattern, sizeof pattern, 0, kSize, 0, nullptr, nullptr) ==
            CL_SUCCESS);
    cl_event g = user_event(env);
    REQUIRE(release(env.queue, 1, &y, 1, &g, &rel) == CL_SUCCESS);
    if (layer_has_fence_source(env)) CHECK(writer_pending(watch));
    REQUIRE(clSetUserEventStatus(g, CL_COMPLETE) == CL_SUCCESS);
    CHECK(clWaitForEvents(1, &rel) == CL_SUCCESS);
    CHECK(clFinish(env.queue) == CL_SUCCESS);  // (d) a round whose commands succeeded
    CHECK_FALSE(writer_pending(watch));
    clReleaseEvent(rel);
    clReleaseEvent(g);

    // (c) The quiet queue's fast path is back: nothing of the failed round is unfinished.
    const cl_ulong quiet = layer_stats(env)[CL_STATS_QUIET_HANDOFFS_CLDMABUF];
    REQUIRE(acquire(env.queue, 1, &y, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(release(env.queue, 1, &y, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(layer_stats(env)[CL_STATS_QUIET_HANDOFFS_CLDMABUF] == quiet + 2);
    CHECK(clFinish(env.queue) == CL_SUCCESS);

    clReleaseMemObject(y);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    check_back(counts_toward(env, before), before);
    // (e) Nothing of the failed round's barrier callbacks stays in the layer
    // (the barriers the test ICD terminates are PoCL's case:
    // tests/e2e/test_terminated_steps.cpp checks the same there).
    CHECK(cldmabuf::test::step_callback_records_toward(env.platform, env.queue, records_before) == records_before);
    close(watch);
}
