// A release that waits for a user event while an alias's acquire on another
// queue waits for another (the explorer's scenario m, on a real ICD and, in
// the VM, a real kernel's fences): the writes ahead of the release are
// covered by a fence of their own (layer/handoff/release_fences.cpp), and
// that fence waits for no user event, so nothing waits for the fence bound
// whichever user event the application completes first, also when it
// completes the release's only once the alias's acquire ran.  Both halves
// land; no fd is left.  Zero-copy imports (the cover is for writes in place).
#include <catch2/catch_test_macros.hpp>

#include <poll.h>

#include <cstdint>
#include <vector>

#include "cl_fixture.hpp"
#include "dmabuf_view.hpp"
#include "layer_probe.hpp"
#include "test_dmabufs.hpp"

using namespace e2e;

namespace {

cl_mem import_fd(const ClEnv &env, int fd, size_t size) {
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(fd), 0};
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, size, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    return mem;  // owns fd
}

}  // namespace

TEST_CASE("a release behind a pending user event, an alias's acquire behind another: nothing waits for the fence "
          "bound, whichever event ends first",
          "[explicit-fences][user-event-release][kernel]") {
    REQUIRE_DMABUF();
    if (!layer_imports_in_place()) SKIP("imports are not zero-copy here (the cover is for writes in place)");
    ClEnv env;
    if (!layer_has_fence_source(env)) SKIP("the layer has no fence source here (no release fences at all)");
    constexpr size_t N = 64 * 1024, half = N / 2;
    Dmabuf buf = make_dmabuf(N);
    const int fds_before = settled_fds();
    bool release_first = true;
    SECTION("the release's user event ends first") { release_first = true; }
    SECTION("the release's user event ends once the alias's acquire ran") { release_first = false; }
    {
        cl_command_queue q1 = env.make_queue();
        cl_mem x = import_fd(env, buf.dup_fd(), N), y = import_fd(env, buf.dup_fd(), N);
        cl_event ue = env.make_user_event(), ue2 = env.make_user_event();
        cl_event acq_x = nullptr;
        const cl_ulong hits = bound_hits(env);
        const uint32_t vx = 0x11111111u, vy = 0x22222222u;
        REQUIRE(env.acquire(env.queue, 1, &x, 1, &ue2, &acq_x) == CL_SUCCESS);
        REQUIRE(clEnqueueFillBuffer(env.queue, x, &vx, 4, 0, half, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(env.release(env.queue, 1, &x, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(env.acquire(q1, 1, &y, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(clEnqueueFillBuffer(q1, y, &vy, 4, half, N - half, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(env.release(q1, 1, &y, 1, &ue, nullptr) == CL_SUCCESS);
        REQUIRE(clFlush(q1) == CL_SUCCESS);
        if (release_first) {
            REQUIRE(clSetUserEventStatus(ue, CL_COMPLETE) == CL_SUCCESS);
            REQUIRE(clSetUserEventStatus(ue2, CL_COMPLETE) == CL_SUCCESS);
        } else {
            // The application ends the release's event only once the alias's
            // acquire ran: a fence of that release in the dma-buf before would
            // hold the acquire's SYNC START until the bound.
            REQUIRE(clSetUserEventStatus(ue2, CL_COMPLETE) == CL_SUCCESS);
            CHECK(clWaitForEvents(1, &acq_x) == CL_SUCCESS);
            REQUIRE(clSetUserEventStatus(ue, CL_COMPLETE) == CL_SUCCESS);
        }
        CHECK(clFinish(env.queue) == CL_SUCCESS);
        CHECK(clFinish(q1) == CL_SUCCESS);
        CHECK(bound_hits(env) == hits);  // nothing waited for the fence bound
        {
            DmabufView view(buf);
            view.begin(false);
            size_t stale = 0;
            for (size_t i = 0; i < N / 4; ++i) stale += view.words[i] != (i < half / 4 ? vx : vy);
            view.end(false);
            CHECK(stale == 0);
        }
        for (cl_event e : {acq_x, ue, ue2}) clReleaseEvent(e);
        clReleaseMemObject(x);
        clReleaseMemObject(y);
        clReleaseCommandQueue(q1);
    }
    CHECK(open_fds_toward(fds_before) == fds_before);
}
