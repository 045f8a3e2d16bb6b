// A kernel enqueued behind an acquire that failed (its
// dma-buf's write fence never signalled within CLDMABUF_FENCE_TIMEOUT_MS)
// must not run on the unsynchronised bytes: its event fails, the dma-buf
// keeps its bytes, clFinish reports the failure, nothing hangs.
// (docs/layer-rules.md, "When host work fails", has the per-ICD table.)
//
// The fence that never signals: a vgem fence on vgem's own dma-bufs, else a
// fence imported into the dma-buf (sw_sync_fence.hpp: sw_sync, which the
// virtual Gen9 models on the host, or a vgem fence carried over as a
// sync_file in the VM), which only the test signals.
//
// [.failmode-probe] runs the same program and prints what the ICD did
// (event statuses, callbacks, clFinish, the bytes), asserting nothing but
// that it returns; with CLDMABUF_FAILED_EVENTS=propagate forced it measures
// an ICD's handling of a failed user event.
#include <catch2/catch_test_macros.hpp>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <system_error>

#include "cl_fixture.hpp"
#include "dmabuf_view.hpp"
#include "event_info.hpp"
#include "layer_probe.hpp"
#include "test_dmabufs.hpp"
#include "sw_sync_fence.hpp"
#include "test_env.hpp"
#include "vgen9_control.hpp"

using namespace e2e;
using cldmabuf::test::env_is;
using cldmabuf::test::vgen9;
namespace tsup = cldmabuf::test;

namespace {

constexpr size_t kSize = 65536;
constexpr uint32_t kBefore = 0x5A000000;  // the dma-buf's words: kBefore + i
constexpr uint32_t kKernel = 0xC0FFEE11;  // what the kernel writes into every word

const char *put_source = "__kernel void put(__global uint *p, uint v) { p[get_global_id(0)] = v; }";

struct Callbacks {
    std::atomic<int> count{0};
    std::atomic<cl_int> status{1};
};
void CL_CALLBACK on_complete(cl_event, cl_int status, void *data) {
    auto *c = static_cast<Callbacks *>(data);
    c->status = status;
    c->count++;
}

// An import whose next acquire fails: its dma-buf carries a write fence that
// does not signal until unstick().
struct StuckImport {
    const ClEnv &env;
    Dmabuf buf;
    std::unique_ptr<DmabufView> view;
    cl_mem mem = nullptr;
    int owned_fd = -1;  // the import's fd (closed with it)
    // vgem
    uint32_t fence = 0;
    bool fence_pending = false;
    // virtual Gen9: a sw_sync fence the test signals
    SwSyncWriteFence writer;

    explicit StuckImport(const ClEnv &e) : env(e), buf(make_dmabuf(kSize)) {
        view = std::make_unique<DmabufView>(buf);
        view->fill_words(kBefore);
        if (source_has_fences()) {  // vgem: the fence first, then the import
            fence = tsup::attach_fence(buf, /*write=*/true);
            fence_pending = true;
        } else {
            REQUIRE(writer.attach(buf.fd));
        }
        const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                           static_cast<cl_mem_properties>(buf.fd), 0};
        cl_int err = CL_SUCCESS;
        mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, kSize, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        owned_fd = buf.release_fd();  // the import owns it
    }
    void unstick() {
        if (fence_pending) {
            fence_pending = false;
            // vgem signals an unsignalled fence itself after 10 s (a slow VM
            // can get there): then the id is gone, which is fine here.
            try {
                tsup::signal_fence(buf, fence);
            } catch (const std::system_error &) {
            }
        }
        writer.signal();
    }
    ~StuckImport() {
        unstick();
        if (mem) clReleaseMemObject(mem);
    }
};

bool can_make_stuck_fences() {
    if (!have_dmabuf()) return false;
    if (source_has_fences()) return true;
    return vgen9().loaded || SwSyncWriteFence::possible();  // sw_sync (the virtual Gen9's), or vgem's fence carried over
}

struct Outcome {
    cl_int finish = 0, finish_again = 0;
    cl_int acquire = 0, kernel = 0, release = 0;
    int kernel_callbacks = 0;
    cl_int kernel_callback_status = 1;
    size_t words_written = 0;  // words of the dma-buf that hold the kernel's value
    bool bytes_kept = false;   // every word as before
    bool import_freed = false;  // its fd closed after clReleaseMemObject: every step let go of it
    cl_int marker_after = 1;    // a marker enqueued on the queue once the failure was reported
    cl_int finish_after = 1;    // clFinish after that marker
};

// Whether the layer hands a failed step's error to the ICD here (propagate)
// or keeps it in its side table and detaches the dma-buf instead, as
// decide_failure_mode() (layer/core/failed_events.cpp) decides per ICD.
bool layer_propagates(const ClEnv &env) {
    if (env_is("CLDMABUF_FAILED_EVENTS", "propagate")) return true;
    if (env_is("CLDMABUF_FAILED_EVENTS", "sidetable")) return false;
    return env.platform_name.find("NVIDIA") != std::string::npos;
}

// acquire (fails) -> kernel writing every word -> release, then clFinish.
Outcome kernel_behind_failed_acquire(const ClEnv &env) {
    // Built first: a vgem fence signals itself after 10 s, which a compiler
    // under the VM lane's TCG can take.
    cl_kernel k = env.build_kernel(put_source, "put");
    StuckImport stuck(env);
    const cl_uint value = kKernel;
    REQUIRE(clSetKernelArg(k, 0, sizeof stuck.mem, &stuck.mem) == CL_SUCCESS);
    REQUIRE(clSetKernelArg(k, 1, sizeof value, &value) == CL_SUCCESS);

    cl_event acq = nullptr, kev = nullptr, rel = nullptr;
    REQUIRE(env.acquire(env.queue, 1, &stuck.mem, 0, nullptr, &acq) == CL_SUCCESS);
    const size_t global = kSize / 4;
    REQUIRE(clEnqueueNDRangeKernel(env.queue, k, 1, nullptr, &global, nullptr, 0, nullptr, &kev) == CL_SUCCESS);
    Callbacks callbacks;
    REQUIRE(clSetEventCallback(kev, CL_COMPLETE, on_complete, &callbacks) == CL_SUCCESS);
    REQUIRE(env.release(env.queue, 1, &stuck.mem, 0, nullptr, &rel) == CL_SUCCESS);

    Outcome o;
    o.finish = clFinish(env.queue);
    o.finish_again = clFinish(env.queue);
    o.acquire = status_of(acq);
    o.kernel = status_of(kev);
    o.release = status_of(rel);
    for (int i = 0; i < 2000 && callbacks.count == 0; ++i) usleep(1000);
    o.kernel_callbacks = callbacks.count;
    o.kernel_callback_status = callbacks.status;
    clReleaseEvent(acq);
    clReleaseEvent(kev);
    clReleaseEvent(rel);
    clReleaseKernel(k);

    // The writer's fence signals; the dma-buf's own bytes, through its own mapping.
    stuck.unstick();
    stuck.view->begin(false);
    for (size_t i = 0; i < kSize / 4; ++i) o.words_written += stuck.view->words[i] == kKernel;
    stuck.view->end(false);
    o.bytes_kept = stuck.view->has_words(kBefore);
    clReleaseMemObject(stuck.mem);
    stuck.mem = nullptr;
    o.import_freed = closes_soon(stuck.owned_fd);
    // Whether the queue itself still works (an ICD may fail every later
    // command of an in-order queue behind a failed one).
    cl_event marker = nullptr;
    REQUIRE(clEnqueueMarkerWithWaitList(env.queue, 0, nullptr, &marker) == CL_SUCCESS);
    clWaitForEvents(1, &marker);
    o.marker_after = status_of(marker);
    clReleaseEvent(marker);
    o.finish_after = clFinish(env.queue);
    return o;
}

}  // namespace

TEST_CASE("a kernel behind a failed acquire does not run: its event fails, the dma-buf keeps its bytes",
          "[host-fail][kernel]") {
    if (!can_make_stuck_fences()) SKIP("needs a fence that never signals (vgem, or the virtual Gen9's sw_sync)");
    ClEnv env;
    const Outcome o = kernel_behind_failed_acquire(env);
    CHECK(o.finish == CL_OUT_OF_RESOURCES);
    // The side table reports the failure once.  Under propagate the failed
    // events are the ICD's, and so is clFinish's answer: NVIDIA repeats it
    // until a later command completed (finish_after, below, is 0).
    if (!layer_propagates(env)) CHECK(o.finish_again == CL_SUCCESS);
    CHECK(o.acquire < 0);
    if (layer_propagates(env))
        CHECK(o.kernel < 0);  // terminated by the ICD, not CL_COMPLETE
    else
        CHECK(o.kernel == CL_COMPLETE);  // it ran, on the anonymous pages that replaced the dma-buf's
    CHECK(o.release < 0);
    CHECK(o.words_written == 0);  // the kernel never wrote the dma-buf
    CHECK(o.bytes_kept);
    CHECK(o.import_freed);  // no step behind the failure was left holding the import
    // After the failure was reported and the fence signalled the queue works.
    CHECK(o.marker_after == CL_COMPLETE);
    CHECK(o.finish_after == CL_SUCCESS);
}

TEST_CASE("probe: what the ICD does with the commands behind a failed acquire", "[.failmode-probe]") {
    if (!can_make_stuck_fences()) SKIP("needs a fence that never signals (vgem, or the virtual Gen9's sw_sync)");
    ClEnv env;
    const char *mode = std::getenv("CLDMABUF_FAILED_EVENTS");
    const Outcome o = kernel_behind_failed_acquire(env);
    std::printf("failmode-probe: platform \"%s\" (%s), source %s, CLDMABUF_FAILED_EVENTS=%s: clFinish %d then %d; "
                "acquire %d, kernel %d, release %d; kernel callbacks %d (status %d); dma-buf words written by "
                "the kernel %zu of %zu, bytes kept %s; import freed %s; then a marker %d, clFinish %d\n",
                env.platform_name.c_str(), platform_string(env.platform, CL_PLATFORM_VERSION).c_str(),
                dmabuf_source().c_str(), mode ? mode : "(unset)", o.finish, o.finish_again, o.acquire, o.kernel,
                o.release, o.kernel_callbacks, o.kernel_callback_status, o.words_written, kSize / 4,
                o.bytes_kept ? "yes" : "no", o.import_freed ? "yes" : "no", o.marker_after, o.finish_after);
    std::fflush(stdout);
}

TEST_CASE("after a failed acquire the import works again: on another queue at once, on its own after clFinish",
          "[host-fail][kernel]") {
    if (!can_make_stuck_fences()) SKIP("needs a fence that never signals (vgem, or the virtual Gen9's sw_sync)");
    ClEnv env;
    cl_kernel k = env.build_kernel(put_source, "put");
    StuckImport stuck(env);
    REQUIRE(clSetKernelArg(k, 0, sizeof stuck.mem, &stuck.mem) == CL_SUCCESS);
    const size_t global = kSize / 4;
    auto put = [&](cl_command_queue q, cl_uint value) {
        REQUIRE(clSetKernelArg(k, 1, sizeof value, &value) == CL_SUCCESS);
        REQUIRE(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
    };
    cl_event acq = nullptr;
    REQUIRE(env.acquire(env.queue, 1, &stuck.mem, 0, nullptr, &acq) == CL_SUCCESS);
    put(env.queue, kKernel);
    CHECK(clWaitForEvents(1, &acq) == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    clReleaseEvent(acq);
    stuck.unstick();  // the writer is done

    // Another queue, before anyone called clFinish on the first: its acquire
    // waits for the first queue's commands, then the kernel writes the dma-buf.
    cl_command_queue other = env.make_queue();
    REQUIRE(env.acquire(other, 1, &stuck.mem, 0, nullptr, &acq) == CL_SUCCESS);
    CHECK(clWaitForEvents(1, &acq) == CL_SUCCESS);
    clReleaseEvent(acq);
    put(other, kKernel + 1);
    REQUIRE(env.release(other, 1, &stuck.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(clFinish(other) == CL_SUCCESS);
    CHECK(stuck.view->has_words(kKernel + 1, 1));
    stuck.view->begin(false);
    size_t theirs = 0;
    for (size_t i = 0; i < kSize / 4; ++i) theirs += stuck.view->words[i] == kKernel + 1;
    stuck.view->end(false);
    CHECK(theirs == kSize / 4);

    // The first queue reports its failure once, then works on the dma-buf too.
    CHECK(clFinish(env.queue) == CL_OUT_OF_RESOURCES);
    {
        REQUIRE(env.acquire(env.queue, 1, &stuck.mem, 0, nullptr, nullptr) == CL_SUCCESS);
        put(env.queue, kKernel + 2);
        REQUIRE(env.release(env.queue, 1, &stuck.mem, 0, nullptr, nullptr) == CL_SUCCESS);
        CHECK(clFinish(env.queue) == CL_SUCCESS);
        stuck.view->begin(false);
        size_t ours = 0;
        for (size_t i = 0; i < kSize / 4; ++i) ours += stuck.view->words[i] == kKernel + 2;
        stuck.view->end(false);
        CHECK(ours == kSize / 4);
    }
    clReleaseCommandQueue(other);
    clReleaseKernel(k);
}

// Two live imports X and Y of one dma-buf.  Y is acquired and its kernel
// waits on a gate; then X's acquire fails (a write fence that never
// signals), so the layer detaches X's mapping from the commands behind it
// (layer/handoff/failed_acquire_shield.hpp).  Y's kernel, acquired
// legitimately, then runs while X stays detached: its words must reach the
// dma-buf.  The mapping the shield replaced is X's alone: the mapping cache
// never hands one mapping to two live imports (layer/dmabuf/mapping_cache.hpp,
// invariant 1), and X had taken a mapping parked by an earlier import.
TEST_CASE("a failed acquire on one import leaves another live import of its dma-buf attached",
          "[host-fail][kernel][mapcache]") {
    if (!have_dmabuf() || !(vgen9().loaded || SwSyncWriteFence::possible()))
        SKIP("needs a fence the test holds and puts in after the imports (sw_sync, or vgem's carried over)");
    ClEnv env;
    constexpr uint32_t kY = 0xB0B0B0B0;
    const size_t words = kSize / 4;
    Dmabuf buf = make_dmabuf(kSize);
    DmabufView view(buf);
    view.fill_words(kBefore);
    auto import = [&] {
        const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                           static_cast<cl_mem_properties>(buf.dup_fd()), 0};
        cl_int err = CL_SUCCESS;
        cl_mem m = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, kSize, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        return m;
    };
    // A pipeline's second frame: the mapping of an earlier import is parked.
    REQUIRE(clReleaseMemObject(import()) == CL_SUCCESS);
    cl_mem x = import(), y = import();
    cl_kernel k = env.build_kernel(put_source, "put");
    const size_t global = words;

    // Y: acquired, then its kernel behind a gate, then its release.
    cl_command_queue qy = env.make_queue();
    REQUIRE(env.acquire(qy, 1, &y, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(qy) == CL_SUCCESS);
    cl_event gate = env.make_user_event();
    REQUIRE(clSetKernelArg(k, 0, sizeof y, &y) == CL_SUCCESS);
    REQUIRE(clSetKernelArg(k, 1, sizeof kY, &kY) == CL_SUCCESS);
    REQUIRE(clEnqueueNDRangeKernel(qy, k, 1, nullptr, &global, nullptr, 1, &gate, nullptr) == CL_SUCCESS);
    REQUIRE(env.release(qy, 1, &y, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFlush(qy) == CL_SUCCESS);

    // X: a writer's fence that does not signal until the test says so (a
    // fence the layer cannot end early, so X's acquire fails at its own bound).
    SwSyncWriteFence writer;
    REQUIRE(writer.attach(buf.fd));
    cl_command_queue qx = env.make_queue();
    cl_event x_acquired = nullptr;
    REQUIRE(env.acquire(qx, 1, &x, 0, nullptr, &x_acquired) == CL_SUCCESS);
    const uint32_t kX = kKernel;
    REQUIRE(clSetKernelArg(k, 0, sizeof x, &x) == CL_SUCCESS);
    REQUIRE(clSetKernelArg(k, 1, sizeof kX, &kX) == CL_SUCCESS);
    REQUIRE(clEnqueueNDRangeKernel(qx, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(clWaitForEvents(1, &x_acquired) == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    clReleaseEvent(x_acquired);

    // Y's kernel runs while X is detached (qx not drained).
    REQUIRE(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS);
    CHECK(clFinish(qy) == CL_SUCCESS);
    writer.signal();
    view.begin(false);
    size_t landed = 0;
    for (size_t i = 0; i < words; ++i) landed += view.words[i] == kY;
    view.end(false);
    INFO("words of Y's kernel in the dma-buf: " << landed << " of " << words);
    CHECK(landed == words);

    CHECK(clFinish(qx) == CL_OUT_OF_RESOURCES);  // X's failure, reported once
    clReleaseEvent(gate);
    clReleaseKernel(k);
    clReleaseMemObject(x);
    clReleaseMemObject(y);
    clReleaseCommandQueue(qx);
    clReleaseCommandQueue(qy);
}
