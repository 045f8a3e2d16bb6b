// The queue protocol's races made deterministic (issue #28): the test ICD
// parks one call inside itself (tests/icd/park.cpp) while the test puts
// another thread's call exactly where a race would, so each case fails the
// same way every run on a layer that gets it wrong.  Suite testicd-races,
// the layer over the plain test ICD, dma-bufs and sw_sync fences from the
// virtual Gen9.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <array>
#include <catch2/catch_test_macros.hpp>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "dmabuf_view.hpp"
#include "test_dmabufs.hpp"
#include "test_handoff.hpp"
#include "test_park.hpp"

using namespace testicd_test;

namespace {

// A consumer's view of the dma-buf: POLLIN not ready now means a writer's
// fence is pending (what an implicit-sync reader waits for).
bool writer_pending(int fd) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, 0) == 0;
}

// Whether the layer can put a fence of its own into a dma-buf here.
bool layer_has_fence_source(const Env &env) {
    size_t bytes = 0;
    return clGetDeviceInfo(env.device, CL_DEVICE_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR, 0, nullptr, &bytes) ==
               CL_SUCCESS &&
           bytes > 0;
}

cl_int status_of(cl_event e) {
    cl_int s = CL_QUEUED;
    clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr);
    return s;
}

}  // namespace

// Issue #28 item 1.  Thread B's write into the import is counted by the
// layer and parked inside the ICD, not yet in the queue, while thread A's
// clFinish drains the queue and returns; B's call then returns and only
// after that does A release.  The release is ordered after the write, so it
// must wait for it: not take the queue for quiet (which did SYNC END at once
// and put no fence in the dma-buf while the write was still to come).
TEST_CASE("races: a write counted but not yet in the queue while clFinish ran is covered by a release after it",
          "[races]") {
    REQUIRE_DMABUF();
    Env env;
    Handoff h(env);
    Imported x(env, 65536);
    const bool fences = layer_has_fence_source(env);
    REQUIRE(h.acquire(env.queue, 1, &x.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);

    cl_int err = CL_SUCCESS;
    cl_event gate = clCreateUserEvent(env.context, &err);  // holds the write once it is in the queue
    REQUIRE(err == CL_SUCCESS);
    const cl_uint pattern = 0x28c0ffeeu;
    park(env, "clEnqueueFillBuffer");
    cl_int fill_err = CL_OUT_OF_RESOURCES;
    std::thread b([&] {
        fill_err = clEnqueueFillBuffer(env.queue, x.mem, &pattern, sizeof pattern, 0, 65536, 1, &gate, nullptr);
    });
    REQUIRE(wait_parked(env));
    CHECK(clFinish(env.queue) == CL_SUCCESS);  // the write is not in the queue: nothing to wait for
    unpark(env);
    b.join();
    REQUIRE(fill_err == CL_SUCCESS);

    const auto before = layer_stats(env);
    cl_event rel = nullptr;
    REQUIRE(h.release(env.queue, 1, &x.mem, 0, nullptr, &rel) == CL_SUCCESS);
    const auto after = layer_stats(env);
    CHECK(after[CL_STATS_QUIET_HANDOFFS_CLDMABUF] == before[CL_STATS_QUIET_HANDOFFS_CLDMABUF]);
    CHECK(after[CL_STATS_QUEUED_HANDOFFS_CLDMABUF] == before[CL_STATS_QUEUED_HANDOFFS_CLDMABUF] + 1);
    CHECK(status_of(rel) != CL_COMPLETE);
    if (fences) CHECK(writer_pending(x.watch));  // an implicit-sync consumer waits for the release

    REQUIRE(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS);
    CHECK(clWaitForEvents(1, &rel) == CL_SUCCESS);
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    if (fences) CHECK_FALSE(writer_pending(x.watch));
    clReleaseEvent(rel);
    clReleaseEvent(gate);
}

// The other side of the same window: a write enqueued (and returned) while
// clFinish is inside the ICD, past its drain.  The finish read the word
// before the write began, so the release after it is not quiet either.
TEST_CASE("races: a write enqueued while clFinish is inside the ICD keeps the next release from being quiet",
          "[races]") {
    REQUIRE_DMABUF();
    Env env;
    Handoff h(env);
    Imported x(env, 65536);
    REQUIRE(h.acquire(env.queue, 1, &x.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);

    cl_int err = CL_SUCCESS;
    cl_event gate = clCreateUserEvent(env.context, &err);
    REQUIRE(err == CL_SUCCESS);
    park(env, "clFinish");
    cl_int finish_err = CL_OUT_OF_RESOURCES;
    std::thread a([&] { finish_err = clFinish(env.queue); });
    REQUIRE(wait_parked(env));
    const cl_uint pattern = 0x5eed28u;
    REQUIRE(clEnqueueFillBuffer(env.queue, x.mem, &pattern, sizeof pattern, 0, 65536, 1, &gate, nullptr) ==
            CL_SUCCESS);
    unpark(env);
    a.join();
    CHECK(finish_err == CL_SUCCESS);

    const auto before = layer_stats(env);
    cl_event rel = nullptr;
    REQUIRE(h.release(env.queue, 1, &x.mem, 0, nullptr, &rel) == CL_SUCCESS);
    CHECK(layer_stats(env)[CL_STATS_QUIET_HANDOFFS_CLDMABUF] == before[CL_STATS_QUIET_HANDOFFS_CLDMABUF]);
    CHECK(status_of(rel) != CL_COMPLETE);
    REQUIRE(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS);
    CHECK(clWaitForEvents(1, &rel) == CL_SUCCESS);
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    clReleaseEvent(rel);
    clReleaseEvent(gate);
}

// What the quiet queue is for still holds: nothing between clFinish and the
// handoffs, both quiet.
TEST_CASE("races: with nothing between, the handoffs after clFinish stay quiet", "[races]") {
    REQUIRE_DMABUF();
    Env env;
    Handoff h(env);
    Imported x(env, 65536);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    const auto before = layer_stats(env);
    REQUIRE(h.acquire(env.queue, 1, &x.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(h.release(env.queue, 1, &x.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(layer_stats(env)[CL_STATS_QUIET_HANDOFFS_CLDMABUF] == before[CL_STATS_QUIET_HANDOFFS_CLDMABUF] + 2);
    CHECK(clFinish(env.queue) == CL_SUCCESS);
}

// The copy route's late alias (layer/handoff/alias_merge.hpp), made
// deterministic: the first import's acquire is parked inside the ICD in its
// upload (the layer decided then that the import was alone on its dma-buf),
// and the second import of the same dma-buf is made exactly then, on this
// thread.  The second's write, released first, must survive the first's
// release: the layer snapshots the first import when the alias appears.  On
// a layer that only looks at the acquire, the first import's release writes
// its whole, stale copy over the second's write.  Run by testicd-races-copy
// (a discrete device: every import takes the copy route).
TEST_CASE("races: a second import of the dma-buf made while the first's acquire is in its upload: both writes "
          "survive",
          "[races-copy]") {
    REQUIRE_DMABUF();
    Env env;
    Handoff h(env);
    constexpr size_t N = 16384;
    Imported x(env, N);
    cl_uint route = 99;
    REQUIRE(clGetMemObjectInfo(x.mem, CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, sizeof route, &route, nullptr) ==
            CL_SUCCESS);
    REQUIRE(route == CL_DMA_BUF_ROUTE_COPY_CLDMABUF);
    e2e::DmabufView view(fcntl(x.watch, F_DUPFD_CLOEXEC, 0), N);
    view.begin(true);
    std::memset(view.bytes, 0x11, N);
    view.end(true);

    park(env, "clEnqueueWriteBuffer");  // the acquire's upload
    cl_int acquire_err = CL_OUT_OF_RESOURCES;
    std::thread a([&] { acquire_err = h.acquire(env.queue, 1, &x.mem, 0, nullptr, nullptr); });
    REQUIRE(wait_parked(env));
    const int fd = fcntl(x.watch, F_DUPFD_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(fd), 0};
    cl_int err = CL_OUT_OF_RESOURCES;
    cl_mem y = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, N, nullptr, &err);
    if (err != CL_SUCCESS) close(fd);
    unpark(env);
    a.join();
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(acquire_err == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);

    REQUIRE(h.acquire(env.queue, 1, &y, 0, nullptr, nullptr) == CL_SUCCESS);
    const std::vector<uint8_t> a_bytes(1024, 0xa1), b_bytes(1024, 0xb2);
    REQUIRE(clEnqueueWriteBuffer(env.queue, x.mem, CL_TRUE, 0, 1024, a_bytes.data(), 0, nullptr, nullptr) ==
            CL_SUCCESS);
    REQUIRE(clEnqueueWriteBuffer(env.queue, y, CL_TRUE, 4096, 1024, b_bytes.data(), 0, nullptr, nullptr) ==
            CL_SUCCESS);
    const auto before = layer_stats(env);
    REQUIRE(h.release(env.queue, 1, &y, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    REQUIRE(h.release(env.queue, 1, &x.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(layer_stats(env)[CL_STATS_ALIAS_MERGES_CLDMABUF] == before[CL_STATS_ALIAS_MERGES_CLDMABUF] + 2);
    view.begin(false);
    size_t wrong = 0;
    for (size_t i = 0; i < N; ++i) wrong += view.bytes[i] != (i < 1024 ? 0xa1 : i >= 4096 && i < 5120 ? 0xb2 : 0x11);
    view.end(false);
    CHECK(wrong == 0);
    clReleaseMemObject(y);
}
