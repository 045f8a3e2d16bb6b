// Implicit fences: acquire waits for a pending writer, and gives up cleanly
// (an error status, no hang, no leak) when the fence never signals.  Needs
// vgem (the VM lane): it is the exporter that can attach fences.
#include <catch2/catch_test_macros.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "cl_fixture.hpp"
#include "event_info.hpp"
#include "layer_probe.hpp"
#include "test_dmabufs.hpp"

using namespace e2e;
namespace tsup = cldmabuf::test;

namespace {

cl_mem import(const ClEnv &env, Dmabuf &buf) {
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(buf.fd),
                                       0};
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, buf.size, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    return mem;
}

int timeout_ms() {
    const char *v = std::getenv("CLDMABUF_FENCE_TIMEOUT_MS");
    return v ? std::atoi(v) : 1000;
}

}  // namespace

TEST_CASE("acquire waits for a pending write fence until it is signalled") {
    if (!source_has_fences()) SKIP("needs vgem fences (VM lane)");
    ClEnv env;
    Dmabuf buf = make_dmabuf(65536);
    const uint32_t fence = tsup::attach_fence(buf, /*write=*/true);
    cl_mem mem = import(env, buf);
    const int owned_fd = buf.release_fd();
    cl_event acq = nullptr;
    REQUIRE(env.acquire(env.queue, 1, &mem, 0, nullptr, &acq) == CL_SUCCESS);
    usleep(timeout_ms() * 1000 / 4);
    CHECK(status_of(acq) > CL_COMPLETE);  // still waiting for the writer
    tsup::signal_fence(buf, fence);
    REQUIRE(clWaitForEvents(1, &acq) == CL_SUCCESS);
    CHECK(status_of(acq) == CL_COMPLETE);
    REQUIRE(env.release(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    clReleaseEvent(acq);
    clReleaseMemObject(mem);
    for (int i = 0; i < 200 && fd_is_open(owned_fd); ++i) usleep(5000);
    CHECK_FALSE(fd_is_open(owned_fd));
}

TEST_CASE("a fence that never signals fails the acquire after CLDMABUF_FENCE_TIMEOUT_MS, without hanging") {
    if (!source_has_fences()) SKIP("needs vgem fences (VM lane)");
    ClEnv env;
    Dmabuf buf = make_dmabuf(65536);
    const int fds_before = settled_fds();
    const uint32_t fence = tsup::attach_fence(buf, /*write=*/true);
    cl_mem mem = import(env, buf);
    const int owned_fd = buf.release_fd();
    cl_event acq = nullptr;
    const auto start = std::chrono::steady_clock::now();
    REQUIRE(env.acquire(env.queue, 1, &mem, 0, nullptr, &acq) == CL_SUCCESS);
    cl_int wait = clWaitForEvents(1, &acq);
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    CHECK(wait == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    CHECK(status_of(acq) < 0);
    CHECK(waited.count() >= timeout_ms() - 50);
    CHECK(waited.count() < timeout_ms() + 5000);
    // Once the writer signals, the object can be acquired again, and that
    // acquire must succeed.  It goes to a NEW queue on purpose: whether a
    // failed command poisons later commands of its own in-order queue is the
    // queue's failure semantics (being reworked, and different between ICDs);
    // a fresh queue has no failed command ahead of it in any design, so this
    // holds either way.
    tsup::signal_fence(buf, fence);
    cl_command_queue fresh = env.make_queue();
    cl_event ok = nullptr;
    REQUIRE(env.acquire(fresh, 1, &mem, 0, nullptr, &ok) == CL_SUCCESS);
    CHECK(clWaitForEvents(1, &ok) == CL_SUCCESS);
    CHECK(status_of(ok) == CL_COMPLETE);
    CHECK(env.release(fresh, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(clFinish(fresh) == CL_SUCCESS);
    clReleaseEvent(ok);
    clReleaseEvent(acq);
    clFinish(env.queue);
    clReleaseCommandQueue(fresh);
    clReleaseMemObject(mem);
    // ICDs destroy a released buffer once its last command retired (the
    // copy strategy's device copies are commands too): wait, bounded.
    for (int i = 0; i < 200 && fd_is_open(owned_fd); ++i) usleep(5000);
    CHECK_FALSE(fd_is_open(owned_fd));
    CHECK(open_fds_toward(fds_before - 1) == fds_before - 1);
}
