// Semaphores chained to blitter copies on the virtual Gen9
// (layer/blit/fence_chain.hpp, docs/semaphores.md "On the Gen9 blitter").
// A wait right before a copy becomes the batch's I915_EXEC_FENCE_IN and a
// signal right after it the batch's FENCE_OUT: at the default
// CLDMABUF_BLT_SEMAPHORE_FENCES=auto (e2e-sim) where no other enqueue came
// between them (the enqueue epoch, layer/queue/epoch.hpp), at `on`
// (e2e-sim-blt-fences) also across commands between them (the application's
// word); at `off` (e2e-sim-blt-fences-off) the same sequences must give the
// same bytes through host waits, and the counters say no batch was chained.
// The lookup of an ICD enqueue the layer cannot see turns `auto` off for the
// process: that case runs alone (e2e-sim-blt-fences-lookup).  Tagged
// [blt][blt-fence].
//
// The wait's fence is the test's own: a sw_sync timeline the virtual Gen9
// models (tests/sim/vgen9_sw_sync.cpp), imported as the semaphore's sync_fd.
// Nothing produced here is a hardware result.
#include <catch2/catch_test_macros.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/sync_file.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <drm.h>
#include <i915_drm.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "cl_fixture.hpp"
#include "layer_semaphores.hpp"
#include "event_info.hpp"
#include "imported_buffer.hpp"
#include "layer/sync/semaphore_compat.h"
#include "layer_probe.hpp"
#include "test_dmabufs.hpp"
#include "test_env.hpp"
#include "tests/sim/vgen9_sw_sync_uapi.h"
#include "vgen9_control.hpp"

using namespace e2e;
using cldmabuf::test::env_is;
using cldmabuf::test::vgen9;

namespace {

constexpr size_t N = 64u << 10;

// CLDMABUF_BLT_SEMAPHORE_FENCES as the layer reads it (auto when unset).
bool fences_on() { return env_is("CLDMABUF_BLT_SEMAPHORE_FENCES", "on"); }
bool fences_off() { return env_is("CLDMABUF_BLT_SEMAPHORE_FENCES", "off"); }
// A wait right before a copy (a copy right before a signal), nothing between: chained.
bool chained() { return !fences_off(); }

bool expect_blt() {
    return vgen9().loaded && !env_is("CLDMABUF_IMPORT", "copy") && !env_is("CLDMABUF_BLT", "off") &&
           layer_takes_blitter();
}

#define REQUIRE_BLT_FENCES()                                                                \
    do {                                                                                    \
        REQUIRE_DMABUF();                                                                   \
        if (!expect_blt()) SKIP("the layer does not take the blitter here (see [probe])"); \
    } while (0)

using SemFns = LayerSemaphores;

// A sw_sync timeline of the test's own with one fence at point 1.
struct TestFence {
    int timeline = -1;
    int fence = -1;  // handed to the semaphore (the import owns it)
    TestFence() {
        timeline = open("/sys/kernel/debug/sync/sw_sync", O_RDWR | O_CLOEXEC);
        if (timeline < 0) SKIP("no sw_sync here (the virtual Gen9 models it under e2e-sim)");
        vgen9_sw_sync_create_fence_data d{};
        d.value = 1;
        std::strcpy(d.name, "blt-fence-test");
        REQUIRE(ioctl(timeline, VGEN9_SW_SYNC_IOC_CREATE_FENCE, &d) == 0);
        fence = d.fence;
    }
    void signal() {
        __u32 one = 1;
        REQUIRE(ioctl(timeline, VGEN9_SW_SYNC_IOC_INC, &one) == 0);
    }
    // Closing the timeline with the point unreached fails the fence (-ENOENT).
    void fail() {
        if (timeline >= 0) close(timeline);
        timeline = -1;
    }
    ~TestFence() { fail(); }
};

bool readable(int fd, int timeout_ms = 0) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

int sync_status(int fd) {
    sync_file_info info{};
    return ioctl(fd, SYNC_IOC_FILE_INFO, &info) == 0 ? info.status : -1000;
}

cl_ulong counter(const ClEnv &env, int which) { return layer_stats(env.platform)[which]; }

// The two imports, a source pattern and a zeroed destination written through
// the test's own CPU mappings (no ICD transfer: the NEO lane runs this too,
// and NEO in AUB mode executes no device work), read back the same way.
struct CopyPair {
    ImportedBuffer a, b;
    std::vector<uint8_t> pattern = std::vector<uint8_t>(N);
    uint8_t *src = nullptr;
    const volatile uint8_t *view = nullptr;
    explicit CopyPair(const ClEnv &env) : a(env, N), b(env, N) {
        for (size_t i = 0; i < N; ++i) pattern[i] = static_cast<uint8_t>(i * 7 + 3);
        void *ms = mmap(nullptr, N, PROT_READ | PROT_WRITE, MAP_SHARED, a.buf.fd, 0);
        void *md = mmap(nullptr, N, PROT_READ | PROT_WRITE, MAP_SHARED, b.buf.fd, 0);
        REQUIRE(ms != MAP_FAILED);
        REQUIRE(md != MAP_FAILED);
        src = static_cast<uint8_t *>(ms);
        std::memcpy(src, pattern.data(), N);
        std::memset(md, 0, N);
        view = static_cast<const volatile uint8_t *>(md);
    }
    ~CopyPair() {
        munmap(src, N);
        munmap(const_cast<uint8_t *>(view), N);
    }
    bool copied() const { return holds(view, true); }
    // Zeroes the destination again (through the test's own mapping).
    void reset() { std::memset(const_cast<uint8_t *>(view), 0, N); }
    bool untouched() const { return holds(view, false); }
    // Whether `p` holds the pattern (or zeros).
    bool holds(const volatile uint8_t *p, bool copy) const {
        for (size_t i = 0; i < N; ++i)
            if (p[i] != (copy ? pattern[i] : 0)) return false;
        return true;
    }
};

// Nothing left behind: the process's fds, the sim's sync_files and GEM objects.
struct LeakCheck {
    int fds = settled_fds();
    struct vgen9_stats sim = vgen9().now();
    ~LeakCheck() {
        vgen9().drain();
        CHECK(open_fds_toward(fds) == fds);
        const struct vgen9_stats now = vgen9().now();
        INFO("sim dma-buf fds " << now.live_dmabuf_fds << " (were " << sim.live_dmabuf_fds << "), memfds "
                                << now.live_memfds << " (were " << sim.live_memfds << ")");
        CHECK(now.live_sync_fds == sim.live_sync_fds);
        CHECK(now.live_objects <= sim.live_objects);
    }
};

// The start of a case: skipped where the layer does not take the blitter,
// else the leak check taken after a first environment and copy pair came and
// went (the ICD's and the engine's process-wide fds and buffers exist by
// then, so only what the case leaves behind counts).
LeakCheck blt_fence_case() {
    REQUIRE_BLT_FENCES();
    {
        ClEnv warm;
        CopyPair warm_pair(warm);
    }
    return LeakCheck{};
}

// A case's environment: the queue, the layer's semaphore entry points, the
// two imports; WaitCase adds a semaphore waiting on a fence of the test's.
struct CopyCase {
    ClEnv env;
    SemFns sem{env};
    CopyPair pair{env};
};
struct WaitCase {
    ClEnv env;
    SemFns sem{env};
    CopyPair pair{env};
    TestFence tf;
    cl_semaphore_khr s = sem.make(env, false, tf.fence);
};

}  // namespace

TEST_CASE("[blt-fence] a semaphore wait right before a copy: the batch waits for its sync_file on the GPU",
          "[blt][blt-fence]") {
    const LeakCheck leaks = blt_fence_case();
    {
        WaitCase wc;
        auto &[env, sem, pair, tf, s] = wc;
        const cl_ulong fence_in = counter(env, CL_STATS_BLT_FENCE_IN_CLDMABUF);
        const uint64_t submitted = vgen9().submitted();
        REQUIRE(sem.wait(env.queue, 1, &s, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
        cl_event ev = nullptr;
        REQUIRE(clEnqueueCopyBuffer(env.queue, pair.a.mem, pair.b.mem, 0, 0, N, 0, nullptr, &ev) == CL_SUCCESS);
        if (chained()) {
            // In the kernel before the fence signalled: nobody waited on the host.
            REQUIRE(vgen9().wait_for_submission(submitted, 5000));
            // Counted once the execbuffer returned to the layer, a moment after the sim took it.
            CHECK(eventually([&] { return counter(env, CL_STATS_BLT_FENCE_IN_CLDMABUF) == fence_in + 1; }));
            CHECK(status_of(ev) != CL_COMPLETE);
            CHECK(pair.untouched());  // the engine holds the batch behind its FENCE_IN
        } else {
            // The wait's host step holds the queue: the batch cannot be submitted yet.
            CHECK_FALSE(vgen9().wait_for_submission(submitted, 50));
        }
        tf.signal();
        REQUIRE(clWaitForEvents(1, &ev) == CL_SUCCESS);
        CHECK(pair.copied());
        CHECK(counter(env, CL_STATS_BLT_FENCE_IN_CLDMABUF) == fence_in + (chained() ? 1 : 0));
        REQUIRE(clFinish(env.queue) == CL_SUCCESS);
        clReleaseEvent(ev);
        REQUIRE(sem.release(s) == CL_SUCCESS);
    }
}

TEST_CASE("[blt-fence] a signal right after a copy: the semaphore's sync_fd is the batch's fence",
          "[blt][blt-fence]") {
    const LeakCheck leaks = blt_fence_case();
    {
        CopyCase cc;
        auto &[env, sem, pair] = cc;
        cl_semaphore_khr s = sem.make(env, true);
        const cl_ulong fence_out = counter(env, CL_STATS_BLT_FENCE_OUT_CLDMABUF);
        vgen9().set_manual(1);  // the batch runs only when the test ticks the engine
        const uint64_t submitted = vgen9().submitted();
        REQUIRE(clEnqueueCopyBuffer(env.queue, pair.a.mem, pair.b.mem, 0, 0, N, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(sem.signal(env.queue, 1, &s, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(vgen9().wait_for_submission(submitted, 5000));
        if (chained()) {
            // The payload adopts the batch fence once the layer has it back from the execbuffer.
            REQUIRE(eventually([&] { return counter(env, CL_STATS_BLT_FENCE_OUT_CLDMABUF) == fence_out + 1; }));
        }
        int fd = -1;
        REQUIRE(sem.handle(s, env.device, CL_SEMAPHORE_HANDLE_SYNC_FD_KHR, sizeof fd, &fd, nullptr) == CL_SUCCESS);
        REQUIRE(fd >= 0);
        CHECK_FALSE(readable(fd));  // the batch has not run
        CHECK(pair.untouched());
        REQUIRE(vgen9().tick(1) == 1);  // returns once the batch completed
        if (chained()) {
            // The batch itself signalled it: no host step ran in between.
            CHECK(readable(fd));
        } else {
            CHECK(counter(env, CL_STATS_BLT_FENCE_OUT_CLDMABUF) == fence_out);
            CHECK(readable(fd, 5000));
        }
        CHECK(sync_status(fd) == 1);
        CHECK(pair.copied());
        vgen9().set_manual(0);
        REQUIRE(clFinish(env.queue) == CL_SUCCESS);
        close(fd);
        REQUIRE(sem.release(s) == CL_SUCCESS);
    }
}

TEST_CASE("[blt-fence] a wait whose sync_file fails: the copy fails with the layer's error, the queue goes on",
          "[blt][blt-fence]") {
    const LeakCheck leaks = blt_fence_case();
    {
        WaitCase wc;
        auto &[env, sem, pair, tf, s] = wc;
        const uint64_t submitted = vgen9().submitted();
        REQUIRE(sem.wait(env.queue, 1, &s, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
        cl_event ev = nullptr;
        REQUIRE(clEnqueueCopyBuffer(env.queue, pair.a.mem, pair.b.mem, 0, 0, N, 0, nullptr, &ev) == CL_SUCCESS);
        if (chained()) REQUIRE(vgen9().wait_for_submission(submitted, 5000));
        tf.fail();  // the fence completes with -ENOENT: the kernel skips the batch
        CHECK(clWaitForEvents(1, &ev) == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        CHECK(status_of(ev) < 0);
        CHECK(clFinish(env.queue) == CL_OUT_OF_RESOURCES);  // the queue reports the failed step once
        CHECK(pair.untouched());
        clReleaseEvent(ev);
        // The next copy runs.
        REQUIRE(clEnqueueCopyBuffer(env.queue, pair.a.mem, pair.b.mem, 0, 0, N, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(clFinish(env.queue) == CL_SUCCESS);
        CHECK(pair.copied());
        REQUIRE(sem.release(s) == CL_SUCCESS);
    }
}

TEST_CASE("[blt-fence] an execbuffer that refuses the fence: the copy waits for it on the host instead",
          "[blt][blt-fence]") {
    REQUIRE_BLT_FENCES();
    if (!chained()) SKIP("CLDMABUF_BLT_SEMAPHORE_FENCES is off: no FENCE_IN to refuse");
    const LeakCheck leaks = blt_fence_case();
    {
        WaitCase wc;
        auto &[env, sem, pair, tf, s] = wc;
        const cl_ulong fence_in = counter(env, CL_STATS_BLT_FENCE_IN_CLDMABUF);
        const cl_ulong fallbacks = counter(env, CL_STATS_BLT_FENCE_IN_FALLBACKS_CLDMABUF);
        REQUIRE(vgen9().fail_ioctl(DRM_IOCTL_I915_GEM_EXECBUFFER2_WR, 1, EINVAL) == 0);
        REQUIRE(sem.wait(env.queue, 1, &s, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
        cl_event ev = nullptr;
        REQUIRE(clEnqueueCopyBuffer(env.queue, pair.a.mem, pair.b.mem, 0, 0, N, 0, nullptr, &ev) == CL_SUCCESS);
        REQUIRE(eventually([&] { return counter(env, CL_STATS_BLT_FENCE_IN_FALLBACKS_CLDMABUF) == fallbacks + 1; }));
        CHECK(pair.untouched());  // the host wait holds the batch back
        tf.signal();
        REQUIRE(clWaitForEvents(1, &ev) == CL_SUCCESS);
        CHECK(pair.copied());
        CHECK(counter(env, CL_STATS_BLT_FENCE_IN_CLDMABUF) == fence_in);
        REQUIRE(clFinish(env.queue) == CL_SUCCESS);
        clReleaseEvent(ev);
        REQUIRE(sem.release(s) == CL_SUCCESS);
    }
}

TEST_CASE("[blt-fence] copy, signal, wait on another queue, copy: the second batch waits for the first's fence",
          "[blt][blt-fence]") {
    REQUIRE_BLT_FENCES();
    auto run = [] {
        ClEnv env;
        SemFns sem(env);
        CopyPair pair(env);
        ImportedBuffer c(env, N);
        void *cm = mmap(nullptr, N, PROT_READ | PROT_WRITE, MAP_SHARED, c.buf.fd, 0);
        REQUIRE(cm != MAP_FAILED);
        std::memset(cm, 0, N);
        cl_command_queue q2 = env.make_queue();
        cl_semaphore_khr s = sem.make(env, false);
        const cl_ulong fence_in = counter(env, CL_STATS_BLT_FENCE_IN_CLDMABUF);
        const cl_ulong fence_out = counter(env, CL_STATS_BLT_FENCE_OUT_CLDMABUF);
        vgen9().set_manual(1);
        const uint64_t submitted = vgen9().submitted();
        REQUIRE(clEnqueueCopyBuffer(env.queue, pair.a.mem, pair.b.mem, 0, 0, N, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(sem.signal(env.queue, 1, &s, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(vgen9().wait_for_submission(submitted, 5000));
        if (chained())
            REQUIRE(eventually([&] { return counter(env, CL_STATS_BLT_FENCE_OUT_CLDMABUF) == fence_out + 1; }));
        const uint64_t first = vgen9().submitted();
        REQUIRE(sem.wait(q2, 1, &s, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(clEnqueueCopyBuffer(q2, pair.b.mem, c.mem, 0, 0, N, 0, nullptr, nullptr) == CL_SUCCESS);
        if (chained()) {
            // Both batches in the kernel before either ran: the second waits on the first's fence.
            REQUIRE(vgen9().wait_for_submission(first, 5000));
            CHECK(eventually([&] { return counter(env, CL_STATS_BLT_FENCE_IN_CLDMABUF) == fence_in + 1; }));
            REQUIRE(vgen9().tick(2) == 2);
        } else {
            REQUIRE(vgen9().tick(1) == 1);
            REQUIRE(vgen9().wait_for_submission(first, 5000));
            REQUIRE(vgen9().tick(1) == 1);
            CHECK(counter(env, CL_STATS_BLT_FENCE_IN_CLDMABUF) == fence_in);
        }
        vgen9().set_manual(0);
        REQUIRE(clFinish(env.queue) == CL_SUCCESS);
        REQUIRE(clFinish(q2) == CL_SUCCESS);
        CHECK(pair.holds(static_cast<const volatile uint8_t *>(cm), true));
        munmap(cm, N);
        clReleaseCommandQueue(q2);
        REQUIRE(sem.release(s) == CL_SUCCESS);
    };
    // Twice: two batches in flight at once grow the engine's batch pool by
    // one buffer the first time (kept for reuse, not a leak).
    run();
    const LeakCheck leaks;
    run();
}

TEST_CASE("[blt-fence] a copy held by its semaphore's fence holds back no other queue, and its cancel fails none",
          "[blt][blt-fence]") {
    REQUIRE_BLT_FENCES();
    auto run = [] {
        WaitCase wc;  // queue A: a semaphore whose fence does not signal within the bound
        auto &[env, sem, pair, tf, s] = wc;
        cl_command_queue qb = env.make_queue();
        CopyPair other(env);  // queue B's imports
        // B's copies: each completes, bit-exact.
        auto copies_on_b = [&](int rounds) {
            for (int i = 0; i < rounds; ++i) {
                other.reset();
                cl_event ev = nullptr;
                REQUIRE(clEnqueueCopyBuffer(qb, other.a.mem, other.b.mem, 0, 0, N, 0, nullptr, &ev) ==
                        CL_SUCCESS);
                CHECK(clWaitForEvents(1, &ev) == CL_SUCCESS);
                CHECK(status_of(ev) == CL_COMPLETE);
                CHECK(other.copied());
                clReleaseEvent(ev);
            }
            CHECK(clFinish(qb) == CL_SUCCESS);
        };
        const uint64_t submitted = vgen9().submitted();
        REQUIRE(sem.wait(env.queue, 1, &s, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
        cl_event held = nullptr;
        REQUIRE(clEnqueueCopyBuffer(env.queue, pair.a.mem, pair.b.mem, 0, 0, N, 0, nullptr, &held) == CL_SUCCESS);
        if (chained()) REQUIRE(vgen9().wait_for_submission(submitted, 5000));  // A's batch waits in the kernel
        copies_on_b(3);
        CHECK(status_of(held) > CL_COMPLETE);  // B never waited for A's bound
        // A's copy fails at the bound (its batch cancelled); B's copies after it still succeed.
        CHECK(clWaitForEvents(1, &held) == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        CHECK(clFinish(env.queue) == CL_OUT_OF_RESOURCES);
        clReleaseEvent(held);
        copies_on_b(3);
        // The fence comes late: A's cancelled batch writes nothing, and A's next copy runs.
        tf.signal();
        vgen9().drain();
        CHECK(pair.untouched());
        REQUIRE(clEnqueueCopyBuffer(env.queue, pair.a.mem, pair.b.mem, 0, 0, N, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(clFinish(env.queue) == CL_SUCCESS);
        CHECK(pair.copied());
        clReleaseCommandQueue(qb);
        REQUIRE(sem.release(s) == CL_SUCCESS);
    };
    // Twice: a batch held while another queue's run grows the engine's batch
    // pool by one buffer the first time (kept for reuse, not a leak).
    run();
    const LeakCheck leaks;
    const uint64_t contexts = vgen9().live_contexts();
    run();
    // Each queue's GEM context went with its queue (once its last step's closure was dropped).
    CHECK(eventually([&] { return vgen9().live_contexts() == contexts; }));
}

namespace {

// The copy stays unsubmitted until the wait's fence signals: no chain.
void expect_no_chain(bool icd_copies) {
    const LeakCheck leaks = blt_fence_case();
    {
        WaitCase wc;
        auto &[env, sem, pair, tf, s] = wc;
        cl_semaphore_khr other = sem.make(env, false);
        cl_command_queue q = env.queue, ooo = nullptr;
        if (icd_copies) {
            // A copy between buffers that are not imports: the layer hands it
            // to the ICD (tagged [kernel] for that: NEO in AUB mode runs no
            // copy of its own, and its lane leaves [kernel] out).
            REQUIRE(sem.wait(q, 1, &s, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
            cl_int err = CL_SUCCESS;
            cl_mem plain = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 4096, nullptr, &err);
            REQUIRE(plain);
            REQUIRE(clEnqueueCopyBuffer(q, plain, plain, 0, 2048, 1024, 0, nullptr, nullptr) == CL_SUCCESS);
            clReleaseMemObject(plain);
        } else {
            SECTION("a semaphore signal between the wait and the copy") {
                REQUIRE(sem.wait(q, 1, &s, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
                REQUIRE(sem.signal(q, 1, &other, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
            }
            SECTION("an out-of-order queue") {
                ooo = env.make_queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
                q = ooo;
                REQUIRE(sem.wait(q, 1, &s, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
            }
        }
        const cl_ulong fence_in = counter(env, CL_STATS_BLT_FENCE_IN_CLDMABUF);
        const uint64_t submitted = vgen9().submitted();
        cl_event ev = nullptr;
        REQUIRE(clEnqueueCopyBuffer(q, pair.a.mem, pair.b.mem, 0, 0, N, 0, nullptr, &ev) == CL_SUCCESS);
        // The wait's host step holds the copy until the fence signals.
        CHECK_FALSE(vgen9().wait_for_submission(submitted, 50));
        tf.signal();
        REQUIRE(clWaitForEvents(1, &ev) == CL_SUCCESS);
        CHECK(pair.copied());
        CHECK(counter(env, CL_STATS_BLT_FENCE_IN_CLDMABUF) == fence_in);
        REQUIRE(clFinish(q) == CL_SUCCESS);
        clReleaseEvent(ev);
        if (ooo) clReleaseCommandQueue(ooo);
        REQUIRE(sem.release(other) == CL_SUCCESS);
        REQUIRE(sem.release(s) == CL_SUCCESS);
    }
}

}  // namespace

TEST_CASE("[blt-fence] no chain across a semaphore signal between the wait and the copy, nor on an out-of-order queue",
          "[blt][blt-fence]") {
    expect_no_chain(false);
}

TEST_CASE("[blt-fence] no chain across an ICD copy between the wait and the copy", "[blt][blt-fence][kernel]") {
    expect_no_chain(true);
}

// ---- what comes between: the enqueue epoch (layer/queue/epoch.hpp) -----------------

namespace {

// wait(sem) ; between(queue) ; copy on the env's queue, with the copy's
// destination zeroed first.  `expect_chain`: the batch takes the wait's
// sync_file as its FENCE_IN.  Either way the copy must not run before the
// semaphore's fence signalled: asserted without waiting on a clock (nothing
// of the copy may be submitted or done until the test signals).
void wait_then_copy(const ClEnv &env, const SemFns &sem, CopyPair &pair, bool expect_chain,
                    const std::function<void(cl_command_queue)> &between = {}) {
    pair.reset();
    TestFence tf;
    cl_semaphore_khr s = sem.make(env, false, tf.fence);
    const cl_ulong fence_in = counter(env, CL_STATS_BLT_FENCE_IN_CLDMABUF);
    const uint64_t submitted = vgen9().submitted();
    REQUIRE(sem.wait(env.queue, 1, &s, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
    if (between) between(env.queue);
    cl_event ev = nullptr;
    REQUIRE(clEnqueueCopyBuffer(env.queue, pair.a.mem, pair.b.mem, 0, 0, N, 0, nullptr, &ev) == CL_SUCCESS);
    if (expect_chain) {
        // In the kernel before the fence signalled: the engine holds it behind its FENCE_IN.
        REQUIRE(vgen9().wait_for_submission(submitted, 5000));
        CHECK(eventually([&] { return counter(env, CL_STATS_BLT_FENCE_IN_CLDMABUF) == fence_in + 1; }));
    } else {
        // The wait's host step holds the queue: the batch is not even submitted.
        CHECK(vgen9().submitted() == submitted);
    }
    CHECK(status_of(ev) != CL_COMPLETE);
    CHECK(pair.untouched());
    tf.signal();
    REQUIRE(clWaitForEvents(1, &ev) == CL_SUCCESS);
    CHECK(pair.copied());
    CHECK(counter(env, CL_STATS_BLT_FENCE_IN_CLDMABUF) == fence_in + (expect_chain ? 1 : 0));
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    clReleaseEvent(ev);
    REQUIRE(sem.release(s) == CL_SUCCESS);
}

// A command to enqueue between the wait and the copy: made for the case's
// environment before the wait (a kernel built and run once, so that the
// command between is only its enqueue), `done` once the queue finished.
struct Between {
    std::function<void(cl_command_queue)> enqueue;
    std::function<void()> done = [] {};
};

// wait_then_copy in a fresh environment, after a warm-up and with the leak
// check, first with nothing between (chained unless off): the case's own
// evidence that the chain is made here at all, so that "not chained" after
// it says the command between broke it.
void check_between(const std::function<Between(const ClEnv &)> &make) {
    const LeakCheck leaks = blt_fence_case();
    {
        CopyCase cc;
        auto &[env, sem, pair] = cc;
        const Between between = make(env);
        wait_then_copy(env, sem, pair, chained());
        // At auto the command between is seen and breaks the chain; `on`
        // chains across it on the application's word.
        wait_then_copy(env, sem, pair, fences_on(), between.enqueue);
        between.done();
    }
}

cl_mem plain_buffer(const ClEnv &env, size_t size) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(env.context, CL_MEM_READ_WRITE, size, nullptr, &err);
    REQUIRE(m);
    return m;
}

}  // namespace

TEST_CASE("[blt-fence] a marker or barrier between the wait and the copy: chained only at on", "[blt][blt-fence]") {
    SECTION("clEnqueueMarkerWithWaitList") {
        check_between([](const ClEnv &) {
            return Between{[](cl_command_queue q) {
                REQUIRE(clEnqueueMarkerWithWaitList(q, 0, nullptr, nullptr) == CL_SUCCESS);
            }};
        });
    }
    SECTION("clEnqueueBarrierWithWaitList") {
        check_between([](const ClEnv &) {
            return Between{[](cl_command_queue q) {
                REQUIRE(clEnqueueBarrierWithWaitList(q, 0, nullptr, nullptr) == CL_SUCCESS);
            }};
        });
    }
    SECTION("clEnqueueMarker (OpenCL 1.1)") {
        check_between([](const ClEnv &) {
            return Between{[](cl_command_queue q) {
                cl_event ev = nullptr;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // the slot is the point
                REQUIRE(clEnqueueMarker(q, &ev) == CL_SUCCESS);
#pragma GCC diagnostic pop
                clReleaseEvent(ev);
            }};
        });
    }
}

// Commands that do device work (tagged [kernel]: NEO in AUB mode runs none,
// and its lane leaves [kernel] out).  Non-blocking: the queue waits for the
// semaphore, which the test signals only after the copy is enqueued.
TEST_CASE("[blt-fence] a kernel, a read, a migration or an SVM command between the wait and the copy: chained "
          "only at on",
          "[blt][blt-fence][kernel]") {
    static std::vector<uint8_t> host(4096);
    SECTION("clEnqueueNDRangeKernel") {
        check_between([](const ClEnv &env) {
            cl_kernel k = env.build_kernel("kernel void k(global uint *b) { b[get_global_id(0)] = 7; }", "k");
            cl_mem m = plain_buffer(env, 4096);
            REQUIRE(clSetKernelArg(k, 0, sizeof m, &m) == CL_SUCCESS);
            static const size_t global = 64;
            // Once before: PoCL compiles the work-group function at the first launch.
            REQUIRE(clEnqueueNDRangeKernel(env.queue, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr) ==
                    CL_SUCCESS);
            REQUIRE(clFinish(env.queue) == CL_SUCCESS);
            return Between{[k](cl_command_queue q) {
                               REQUIRE(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr,
                                                              nullptr) == CL_SUCCESS);
                           },
                           [k, m] {
                               clReleaseKernel(k);
                               clReleaseMemObject(m);
                           }};
        });
    }
    SECTION("clEnqueueReadBuffer (an override that passes the command on)") {
        check_between([](const ClEnv &env) {
            cl_mem m = plain_buffer(env, host.size());
            return Between{[m](cl_command_queue q) {
                               REQUIRE(clEnqueueReadBuffer(q, m, CL_FALSE, 0, host.size(), host.data(), 0, nullptr,
                                                           nullptr) == CL_SUCCESS);
                           },
                           [m] { clReleaseMemObject(m); }};
        });
    }
    SECTION("clEnqueueMigrateMemObjects") {
        check_between([](const ClEnv &env) {
            cl_mem m = plain_buffer(env, host.size());
            return Between{[m](cl_command_queue q) {
                               REQUIRE(clEnqueueMigrateMemObjects(q, 1, &m, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED,
                                                                  0, nullptr, nullptr) == CL_SUCCESS);
                           },
                           [m] { clReleaseMemObject(m); }};
        });
    }
    SECTION("clEnqueueReadImage") {
        check_between([](const ClEnv &env) {
            if (!device_has_images(env)) SKIP("the device has no images");
            const cl_image_format format{CL_RGBA, CL_UNSIGNED_INT8};
            cl_image_desc desc{};
            desc.image_type = CL_MEM_OBJECT_IMAGE2D;
            desc.image_width = 16;
            desc.image_height = 16;
            cl_int err = CL_SUCCESS;
            cl_mem image = clCreateImage(env.context, CL_MEM_READ_WRITE, &format, &desc, nullptr, &err);
            REQUIRE(image);
            return Between{[image](cl_command_queue q) {
                               static const size_t origin[3] = {0, 0, 0}, region[3] = {16, 16, 1};
                               REQUIRE(clEnqueueReadImage(q, image, CL_FALSE, origin, region, 0, 0, host.data(), 0,
                                                          nullptr, nullptr) == CL_SUCCESS);
                           },
                           [image] { clReleaseMemObject(image); }};
        });
    }
    SECTION("clEnqueueSVMMemFill, clEnqueueSVMFree") {
        check_between([](const ClEnv &env) {
            cl_device_svm_capabilities caps = 0;
            if (clGetDeviceInfo(env.device, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, nullptr) != CL_SUCCESS ||
                !(caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER))
                SKIP("no SVM on this device");
            void *svm = clSVMAlloc(env.context, CL_MEM_READ_WRITE, host.size(), 0);
            REQUIRE(svm);
            return Between{[svm](cl_command_queue q) mutable {
                static const cl_uint pattern = 0x5a5a5a5a;
                REQUIRE(clEnqueueSVMMemFill(q, svm, &pattern, sizeof pattern, host.size(), 0, nullptr, nullptr) ==
                        CL_SUCCESS);
                // Freed in queue order, after the fill.
                REQUIRE(clEnqueueSVMFree(q, 1, &svm, nullptr, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
            }};
        });
    }
}

TEST_CASE("[blt-fence] a marker between the copy and the signal: the signal takes the batch's fence only at on",
          "[blt][blt-fence]") {
    const LeakCheck leaks = blt_fence_case();
    {
        CopyCase cc;
        auto &[env, sem, pair] = cc;
        auto copy_then_signal = [&](bool expect_chain, bool marker_between) {
            pair.reset();
            cl_semaphore_khr s = sem.make(env, true);
            const cl_ulong fence_out = counter(env, CL_STATS_BLT_FENCE_OUT_CLDMABUF);
            // The batch runs only when the test ticks the engine: the copy's
            // step is still on when the signal is enqueued (a signal after a
            // finished copy has nothing to adopt).
            vgen9().set_manual(1);
            const uint64_t submitted = vgen9().submitted();
            REQUIRE(clEnqueueCopyBuffer(env.queue, pair.a.mem, pair.b.mem, 0, 0, N, 0, nullptr, nullptr) ==
                    CL_SUCCESS);
            if (marker_between) REQUIRE(clEnqueueMarkerWithWaitList(env.queue, 0, nullptr, nullptr) == CL_SUCCESS);
            REQUIRE(sem.signal(env.queue, 1, &s, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
            REQUIRE(vgen9().wait_for_submission(submitted, 5000));
            REQUIRE(vgen9().tick(1) == 1);  // returns once the batch completed
            vgen9().set_manual(0);
            REQUIRE(clFinish(env.queue) == CL_SUCCESS);
            CHECK(pair.copied());
            int fd = -1;
            REQUIRE(sem.handle(s, env.device, CL_SEMAPHORE_HANDLE_SYNC_FD_KHR, sizeof fd, &fd, nullptr) ==
                    CL_SUCCESS);
            REQUIRE(fd >= 0);
            CHECK(readable(fd, 5000));
            CHECK(sync_status(fd) == 1);
            close(fd);
            // Adopted before the copy's step ended, so counted by now.
            CHECK(counter(env, CL_STATS_BLT_FENCE_OUT_CLDMABUF) == fence_out + (expect_chain ? 1 : 0));
            REQUIRE(sem.release(s) == CL_SUCCESS);
        };
        copy_then_signal(chained(), false);
        copy_then_signal(fences_on(), true);
    }
}

// Hidden ([.]): once the application holds an ICD enqueue the layer cannot
// see, `auto` stays off for the process, so this runs in its own
// (e2e-sim-blt-fences-lookup).  The layer hands such an enqueue out behind a
// counting trampoline (layer/queue/looked_up.hpp): then the epoch sees
// its calls and `auto` stays on; only where it has none (TSan builds, an
// exhausted pool) is the ICD's own function handed out, and `auto` goes off.
TEST_CASE("[blt-fence] after the application looked up an ICD enqueue: chained at auto only if the layer counts it",
          "[.blt-fence-lookup]") {
    REQUIRE_BLT_FENCES();
    if (fences_on() || fences_off()) SKIP("CLDMABUF_BLT_SEMAPHORE_FENCES is not auto");
    const LeakCheck leaks = blt_fence_case();
    {
        CopyCase cc;
        auto &[env, sem, pair] = cc;
        wait_then_copy(env, sem, pair, true);  // chained so far
        // PoCL's cl_khr_command_buffer (NEO has it too); any clEnqueue* of the ICD's would do.
        void *fn = clGetExtensionFunctionAddressForPlatform(env.platform, "clEnqueueCommandBufferKHR");
        if (!fn) SKIP("the ICD hands out no clEnqueueCommandBufferKHR here");
        // A trampoline lives in the layer's library, the ICD's function in the ICD's.
        Dl_info where{};
        const bool counted = dladdr(fn, &where) && where.dli_fname && std::strstr(where.dli_fname, "libcldmabuf");
        INFO("clEnqueueCommandBufferKHR handed out from " << (where.dli_fname ? where.dli_fname : "?"));
        // Counted: nothing between, so chained.  Not: not chained, the
        // application may call it at any time.
        wait_then_copy(env, sem, pair, counted);
    }
}
