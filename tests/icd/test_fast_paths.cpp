// The enqueue word's fast paths engage on every architecture and in either
// form (issue #29; layer/queue/fast_path.hpp), read from the layer's own
// counters: an ICD enqueue handed out by name goes out behind the layer's
// counting trampoline, so looking it up leaves the quiet queue on, and
// calling it ends a quiet stretch as any counted command does.  Suite
// testicd-fast-paths: the test ICD with its own cl_khr_semaphore, whose
// enqueues the application can only reach by name.
//
// The quiet handoffs also stand for the blitter's automatic semaphore
// chain: both are off for the process once an enqueue escapes the count
// (unseen_enqueues(), layer/queue/epoch.hpp), the flag neither can be on
// without.
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <catch2/catch_test_macros.hpp>
#include <cstring>
#include <string>

#include "CL/cl_ext_cldmabuf.h"
#include "test_dmabufs.hpp"
#include "test_handoff.hpp"

using namespace testicd_test;

namespace {

cl_ulong quiet(const Env &env) { return layer_stats(env)[CL_STATS_QUIET_HANDOFFS_CLDMABUF]; }

// The test ICD's call count of one function (PLATFORM_TESTICD_FAIL with a
// call number never reached only counts; tests/icd/testicd.hpp).
constexpr cl_platform_info kFail = 0x7E59, kFaultState = 0x7E5A;
void count_calls_of(const Env &env, std::string spec) {
    REQUIRE(clGetPlatformInfo(env.platform, kFail, spec.size() + 1, spec.data(), nullptr) == CL_SUCCESS);
}
cl_ulong counted_calls(const Env &env) {
    cl_ulong v[4] = {};
    REQUIRE(clGetPlatformInfo(env.platform, kFaultState, sizeof v, v, nullptr) == CL_SUCCESS);
    return v[0];
}

// Which library a function handed out lives in.
std::string library_of(void *fn) {
    Dl_info where{};
    return dladdr(fn, &where) && where.dli_fname ? where.dli_fname : "?";
}

}  // namespace

TEST_CASE("fast paths: the ICD's semaphore enqueues go out counted; looked up they keep the quiet, called they end it",
          "[fast-paths]") {
    REQUIRE_DMABUF();
    Env env;
    const auto [acquire, release] = Handoff(env);
    auto create = reinterpret_cast<clCreateSemaphoreWithPropertiesKHR_fn>(
        env.function("clCreateSemaphoreWithPropertiesKHR"));
    auto release_sema = reinterpret_cast<clReleaseSemaphoreKHR_fn>(env.function("clReleaseSemaphoreKHR"));
    auto signal = reinterpret_cast<clEnqueueSignalSemaphoresKHR_fn>(env.function("clEnqueueSignalSemaphoresKHR"));
    auto wait = reinterpret_cast<clEnqueueWaitSemaphoresKHR_fn>(env.function("clEnqueueWaitSemaphoresKHR"));
    REQUIRE(create);
    REQUIRE(release_sema);
    REQUIRE(signal);
    REQUIRE(wait);
    // The ICD's functions, behind the layer's trampolines: they live in the
    // layer's library, not the test ICD's.
    INFO("clEnqueueWaitSemaphoresKHR handed out from " << library_of(reinterpret_cast<void *>(wait)));
    CHECK(library_of(reinterpret_cast<void *>(wait)).find("libcldmabuf.so") != std::string::npos);
    CHECK(library_of(reinterpret_cast<void *>(signal)).find("libcldmabuf.so") != std::string::npos);

    Imported x(env, 65536);
    const cl_semaphore_properties_khr props[] = {CL_SEMAPHORE_TYPE_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR, 0};
    cl_int err = CL_INVALID_VALUE;
    cl_semaphore_khr s = create(env.context, props, &err);
    REQUIRE(err == CL_SUCCESS);

    // Looked up, not called: the handoffs after clFinish are quiet.
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    cl_ulong before = quiet(env);
    REQUIRE(acquire(env.queue, 1, &x.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(release(env.queue, 1, &x.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(quiet(env) == before + 2);

    // Called between clFinish and the acquire: counted, so not quiet.
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    before = quiet(env);
    REQUIRE(signal(env.queue, 1, &s, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(acquire(env.queue, 1, &x.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(wait(env.queue, 1, &s, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(release(env.queue, 1, &x.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(quiet(env) == before);

    // And with an import alive the trampoline's tracked half ran: quiet again
    // after the next clFinish, the word whole.
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    before = quiet(env);
    REQUIRE(acquire(env.queue, 1, &x.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(release(env.queue, 1, &x.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(quiet(env) == before + 2);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(release_sema(s) == CL_SUCCESS);
}

TEST_CASE("fast paths: a quiet handoff that asks no event and copies nothing enqueues nothing; asked one, its marker "
          "is the event",
          "[fast-paths]") {
    REQUIRE_DMABUF();
    Env env;
    const auto [acquire, release] = Handoff(env);
    Imported x(env, 65536);
    count_calls_of(env, "clEnqueueMarkerWithWaitList:1000000");
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    const cl_ulong quiet_before = quiet(env);
    const cl_ulong markers = counted_calls(env);
    REQUIRE(acquire(env.queue, 1, &x.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(release(env.queue, 1, &x.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(quiet(env) == quiet_before + 2);
    CHECK(counted_calls(env) == markers);  // the syscalls alone: nothing went to the ICD
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);

    // Asked for its event, the quiet acquire enqueues its marker and hands it out, complete.
    cl_event ev = nullptr;
    REQUIRE(acquire(env.queue, 1, &x.mem, 0, nullptr, &ev) == CL_SUCCESS);
    CHECK(counted_calls(env) == markers + 1);
    REQUIRE(ev != nullptr);
    cl_command_type type = 0;
    REQUIRE(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr) == CL_SUCCESS);
    CHECK(type == CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR);
    REQUIRE(clWaitForEvents(1, &ev) == CL_SUCCESS);
    REQUIRE(release(env.queue, 1, &x.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(clReleaseEvent(ev) == CL_SUCCESS);
    count_calls_of(env, "");
}
