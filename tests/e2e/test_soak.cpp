// Soak (issue #16 item 4): 8 threads, two contexts each with its own queue
// (four threads per queue), cycles of
//   import two dma-bufs of the virtual Gen9 -> acquire -> kernel writes the
//   source -> release -> clEnqueueCopyBuffer source -> destination (the
//   blitter on the virtual Gen9) -> release of both cl_mems
// with random faults injected through the virtual Gen9's control API
// (failed execbuffers, a hung ring, fences that never signal, a failed
// DMA_BUF_IOCTL_SYNC) and random fence delays.
//
// What it asserts: no crash; no hang (every wait in the layer is bounded, and
// a watchdog ends the process when no cycle finished for 60 s); every error an
// OpenCL call or event reports is one the spec names for these failures; the
// bytes of both dma-bufs are exact in every cycle that saw no error; fds,
// dma-buf fds, sync_file fds and mappings back to their count before the run
// (less the blitter's batch pool, which keeps the buffers that batches still
// in flight made it add: at most i915::GemDevice::kMaxBatches GEM objects).
//
// The faults are the device's, not a thread's: one thread injects, whichever
// thread submits next meets it.  So a cycle counts as faulted by what it saw
// (an error from a call, a failed event, clFinish reporting a failure on the
// shared queue), never by who injected.
//
// Environment (test knobs, not layer settings):
//   CLDMABUF_SOAK_CYCLES=<n>         cycles per thread (default 25)
//   CLDMABUF_SOAK_FAULT_PERCENT=<p>  chance a cycle injects a fault (default 10)
//   CLDMABUF_SOAK_SEED=<s>           random seed (default: drawn, printed)
// Tagged [.][soak]: only the e2e-sim-soak test (and scripts/soak) run it.
#include <catch2/catch_test_macros.hpp>

#include <linux/dma-buf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <drm.h>
#include <i915_drm.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cl_fixture.hpp"
#include "layer_probe.hpp"
#include "test_dmabufs.hpp"
#include "vgen9_control.hpp"

using namespace e2e;
using cldmabuf::test::vgen9;

namespace {

constexpr int kThreads = 8;
constexpr uint64_t kMaxPoolGrowth = 64;  // i915::GemDevice::kMaxBatches

const char *kSource =
    "__kernel void soak_fill(__global uint *a, uint seed) {\n"
    "    uint i = (uint)get_global_id(0);\n"
    "    a[i] = (seed ^ i) * 2654435761u + 1u;\n"
    "}\n";

uint32_t expected_word(uint32_t seed, uint32_t i) { return (seed ^ i) * 2654435761u + 1u; }

unsigned env_number(const char *name, unsigned fallback) {
    const char *v = std::getenv(name);
    return v && *v ? static_cast<unsigned>(std::strtoul(v, nullptr, 10)) : fallback;
}

// The errors the spec lets these failures surface as: a host step (fence
// timeout, failed SYNC, failed or hung blitter batch) fails its event with
// CL_OUT_OF_RESOURCES (CL_OUT_OF_HOST_MEMORY for an allocation), waits on it
// and commands behind it report CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST.
bool spec_error(cl_int err) {
    return err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY ||
           err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
}

struct Tally {
    std::atomic<int> clean{0}, faulted{0}, injected{0}, mismatches{0}, bad_errors{0}, setup_failures{0};
    std::atomic<int> finished{0};
    std::atomic<long> progress{0};  // cycles done, read by the watchdog
    std::mutex mutex;
    std::string first_problem;
    void problem(const std::string &what) {
        std::lock_guard<std::mutex> lock(mutex);
        if (first_problem.empty()) first_problem = what;
    }
};

// The test's own CPU view of a dma-buf: its own dup (taken before the import
// hands the application's fd to the layer) and mapping.  No Catch2 macro
// here: it runs on the soak's threads.
struct View {
    int fd = -1;
    size_t size = 0;
    uint32_t *words = nullptr;
    View(const Dmabuf &buf, size_t sz) : fd(buf.dup_fd()), size(sz) {
        void *p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) words = static_cast<uint32_t *>(p);
    }
    ~View() {
        if (words) munmap(words, size);
        if (fd >= 0) close(fd);
    }
    View(const View &) = delete;
    View &operator=(const View &) = delete;
    // DMA_BUF_IOCTL_SYNC straight, not through the test support's throwing
    // helper: an injected SYNC fault may meet the test's own read.
    bool sync(uint64_t flags) {
        dma_buf_sync s{};
        s.flags = flags;
        return ioctl(fd, DMA_BUF_IOCTL_SYNC, &s) == 0;
    }
};

// One random fault of the device, or a fence delay.
void inject(std::mt19937 &rng, Tally &tally) {
    const auto &sim = vgen9();
    switch (rng() % 6) {
    case 0: sim.fail_ioctl(DRM_IOCTL_I915_GEM_EXECBUFFER2_WR, 1, EIO); break;
    case 1: sim.fail_ioctl(DRM_IOCTL_I915_GEM_EXECBUFFER2_WR, 1, ENOMEM); break;
    case 2: sim.hang_next(1); break;
    case 3: sim.never_signal_next(1); break;
    case 4: sim.fail_ioctl(DMA_BUF_IOCTL_SYNC, 1, EIO); break;
    case 5: sim.set_delay_ms(rng() % 40); return;  // a late fence, below the bound: no fault
    }
    tally.injected++;
}

struct Context {
    ClEnv env;
    cl_program program = nullptr;
    Context() {
        cl_kernel k = env.build_kernel(kSource, "soak_fill");
        clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof program, &program, nullptr);
        clRetainProgram(program);
        clReleaseKernel(k);
    }
    ~Context() { clReleaseProgram(program); }
};

cl_mem import(const Context &ctx, Dmabuf &buf, size_t size, cl_int *err) {
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(buf.fd),
                                       0};
    cl_mem m = clCreateBufferWithProperties(ctx.env.context, props, CL_MEM_READ_WRITE, size, nullptr, err);
    if (m) buf.release_fd();  // the import owns it now
    return m;
}

// One cycle; returns false when it saw any error (the errors themselves are
// judged here: one the spec does not name is a problem of the run).
bool cycle(const Context &ctx, cl_kernel kernel, std::mt19937 &rng, Tally &tally, int thread, int n) {
    const ClEnv &env = ctx.env;
    cl_command_queue q = env.queue;
    const size_t size = 4096 * (1 + rng() % 16);
    const uint32_t words = static_cast<uint32_t>(size / 4);
    const uint32_t seed = static_cast<uint32_t>(rng());
    // A copy of a random word range: the rest of the destination stays zero.
    const uint32_t first = static_cast<uint32_t>(rng() % words);
    const uint32_t count = 1 + static_cast<uint32_t>(rng() % (words - first));

    bool ok = true;
    auto judge = [&](cl_int err, const char *what) {
        if (err == CL_SUCCESS || err == CL_COMPLETE) return;
        ok = false;
        if (!spec_error(err)) {
            tally.bad_errors++;
            tally.problem("thread " + std::to_string(thread) + " cycle " + std::to_string(n) + ": " + what +
                          " answered " + std::to_string(err));
        }
    };
    auto status = [&](cl_event ev, const char *what) {
        if (!ev) return;
        judge(clWaitForEvents(1, &ev), what);
        cl_int s = 0;
        if (clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr) == CL_SUCCESS) judge(s, what);
        clReleaseEvent(ev);
    };

    Dmabuf src_buf = make_dmabuf(size), dst_buf = make_dmabuf(size);
    View src_view(src_buf, size), dst_view(dst_buf, size);
    if (!src_view.words || !dst_view.words) {
        tally.setup_failures++;
        tally.problem("mmap of a test dma-buf failed");
        return false;
    }
    cl_int err_a = CL_SUCCESS, err_b = CL_SUCCESS;
    cl_mem mems[2] = {import(ctx, src_buf, size, &err_a), import(ctx, dst_buf, size, &err_b)};
    judge(err_a, "import of the source");
    judge(err_b, "import of the destination");
    if (mems[0] && mems[1]) {
        cl_event acq = nullptr, fill = nullptr, rel = nullptr, copy = nullptr;
        judge(env.acquire(q, 2, mems, 0, nullptr, &acq), "clEnqueueAcquireExternalMemObjectsKHR");
        const size_t global = words;
        judge(clSetKernelArg(kernel, 0, sizeof(cl_mem), &mems[0]), "clSetKernelArg");
        judge(clSetKernelArg(kernel, 1, sizeof seed, &seed), "clSetKernelArg");
        judge(clEnqueueNDRangeKernel(q, kernel, 1, nullptr, &global, nullptr, 0, nullptr, &fill),
              "clEnqueueNDRangeKernel");
        judge(env.release(q, 2, mems, 0, nullptr, &rel), "clEnqueueReleaseExternalMemObjectsKHR");
        judge(clEnqueueCopyBuffer(q, mems[0], mems[1], size_t{first} * 4, size_t{first} * 4, size_t{count} * 4, 0,
                                  nullptr, &copy),
              "clEnqueueCopyBuffer");
        status(acq, "the acquire's event");
        status(fill, "the kernel's event");
        status(rel, "the release's event");
        status(copy, "the copy's event");
        judge(clFinish(q), "clFinish");
    }
    for (cl_mem m : mems)
        if (m) judge(clReleaseMemObject(m), "clReleaseMemObject");
    if (!ok) return false;

    // No error anywhere: both dma-bufs hold exactly what the kernel and the copy wrote.
    if (!src_view.sync(DMA_BUF_SYNC_READ | DMA_BUF_SYNC_START)) return false;  // the test met an injected fault
    if (!dst_view.sync(DMA_BUF_SYNC_READ | DMA_BUF_SYNC_START)) {
        src_view.sync(DMA_BUF_SYNC_READ | DMA_BUF_SYNC_END);
        return false;
    }
    uint32_t bad = 0;
    for (uint32_t i = 0; i < words; ++i) {
        if (src_view.words[i] != expected_word(seed, i)) bad++;
        const uint32_t want = i >= first && i < first + count ? expected_word(seed, i) : 0;
        if (dst_view.words[i] != want) bad++;
    }
    src_view.sync(DMA_BUF_SYNC_READ | DMA_BUF_SYNC_END);
    dst_view.sync(DMA_BUF_SYNC_READ | DMA_BUF_SYNC_END);
    if (bad) {
        tally.mismatches++;
        tally.problem("thread " + std::to_string(thread) + " cycle " + std::to_string(n) + ": " + std::to_string(bad) +
                      " words differ after a cycle without errors");
    }
    return true;
}

void worker(const Context &ctx, int thread, unsigned cycles, unsigned fault_percent, uint32_t seed, Tally &tally) {
    std::mt19937 rng(seed + 7919u * static_cast<uint32_t>(thread));
    cl_int err = CL_SUCCESS;
    // A kernel object per thread: clSetKernelArg on a shared one would race.
    cl_kernel kernel = clCreateKernel(ctx.program, "soak_fill", &err);
    if (!kernel) {
        tally.setup_failures++;
        tally.problem("clCreateKernel: " + std::to_string(err));
    } else {
        for (unsigned n = 0; n < cycles; ++n) {
            if (rng() % 100 < fault_percent) inject(rng, tally);
            try {
                if (cycle(ctx, kernel, rng, tally, thread, static_cast<int>(n)))
                    tally.clean++;
                else
                    tally.faulted++;
            } catch (const std::exception &e) {  // the test's own dma-buf source
                tally.setup_failures++;
                tally.problem(std::string("thread ") + std::to_string(thread) + ": " + e.what());
            }
            tally.progress++;
        }
        clReleaseKernel(kernel);
    }
    tally.finished++;
}

// What holds the fds and file mappings when the counts do not match: printed
// with the failure, so that a leak names its files.
void print_open_files() {
    std::system("ls -l /proc/$PPID/fd | sed 's/^/[soak] fd /'; "
                "grep -v ' 0 *$' /proc/$PPID/maps | grep -v '\\.so' | sed 's/^/[soak] map /'");
}

}  // namespace

TEST_CASE("soak: 8 threads, two contexts, import/acquire/kernel/release/copy/destroy with injected faults",
          "[.][soak][kernel]") {
    REQUIRE_DMABUF();
    if (!vgen9().loaded || dmabuf_source() != "sim")
        SKIP("the soak injects its faults through the virtual Gen9 (CLDMABUF_TEST_DMABUF=sim, libvgen9.so preloaded)");
    const unsigned cycles = env_number("CLDMABUF_SOAK_CYCLES", 25);
    const unsigned fault_percent = env_number("CLDMABUF_SOAK_FAULT_PERCENT", 10);
    const uint32_t seed = std::getenv("CLDMABUF_SOAK_SEED") ? env_number("CLDMABUF_SOAK_SEED", 0)
                                                             : static_cast<uint32_t>(std::random_device{}());
    std::printf("[soak] %d threads x %u cycles, %u%% of cycles inject a fault, CLDMABUF_SOAK_SEED=%u\n", kThreads,
                cycles, fault_percent, seed);
    const bool blitter = layer_takes_blitter();

    Context contexts[2];
    // Warm-up: the layer's per-process state (zero-copy verdict, the Gen9
    // node, its batch pool) and the ICD's exist before the counts are taken.
    {
        Tally warm;
        std::mt19937 rng(seed);
        for (auto &ctx : contexts) {
            cl_kernel k = clCreateKernel(ctx.program, "soak_fill", nullptr);
            REQUIRE(k);
            CHECK(cycle(ctx, k, rng, warm, -1, 0));
            clReleaseKernel(k);
        }
        REQUIRE(warm.first_problem.empty());
    }
    vgen9().reset();
    const int fds_before = settled_fds();
    const int maps_before = settled_mappings();
    const struct vgen9_stats s0 = vgen9().now();
    const cl_ulong blt_before = layer_stats(contexts[0].env.platform)[CL_STATS_BLT_COPIES_CLDMABUF];

    Tally tally;
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t)
        pool.emplace_back(worker, std::cref(contexts[t % 2]), t, cycles, fault_percent, seed, std::ref(tally));
    // Watchdog: a run that makes no progress for 60 s is a hang; threads inside
    // the ICD cannot be cancelled, so the process ends with a message.
    // The same loop plays the kernel's hangcheck: a real i915 resets a ring
    // whose batch does not complete within seconds, which completes its
    // fence with -EIO; the virtual Gen9 keeps a never-signalled fence until
    // vgen9_reset().  Without it a stuck batch stays in flight for good and
    // a copy that needs its objects waits for its fence until the layer's
    // timeout.
    long seen = -1;
    auto last_progress = std::chrono::steady_clock::now();
    auto last_reset = last_progress;
    while (tally.finished < kThreads) {
        usleep(100 * 1000);
        if (std::chrono::steady_clock::now() - last_reset > std::chrono::seconds(2)) {
            vgen9().reset();
            last_reset = std::chrono::steady_clock::now();
        }
        const long now = tally.progress;
        if (now != seen) {
            seen = now;
            last_progress = std::chrono::steady_clock::now();
        } else if (std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(60)) {
            std::fprintf(stderr, "[soak] no cycle finished for 60 s (%ld of %u done): a hang; ending the process\n",
                         now, kThreads * cycles);
            std::fflush(stderr);
            std::_Exit(3);
        }
    }
    for (auto &th : pool) th.join();
    for (auto &ctx : contexts) clFinish(ctx.env.queue);
    const cl_ulong blt_copies = layer_stats(contexts[0].env.platform)[CL_STATS_BLT_COPIES_CLDMABUF] - blt_before;

    // A GPU reset completes the fences injected never to signal (their cycles
    // timed out long ago), then the device is idle.
    vgen9().reset();
    vgen9().drain();
    const int fds_after = settled_fds();
    const int maps_after = settled_mappings();
    const struct vgen9_stats s1 = vgen9().now();
    std::printf("[soak] %d clean cycles, %d with an error, %d faults injected, %llu blitter copies; "
                "fds %d -> %d, mappings %d -> %d, GEM objects %llu -> %llu\n",
                tally.clean.load(), tally.faulted.load(), tally.injected.load(),
                static_cast<unsigned long long>(blt_copies), fds_before, fds_after, maps_before, maps_after,
                static_cast<unsigned long long>(s0.live_objects), static_cast<unsigned long long>(s1.live_objects));

    INFO("first problem: " << tally.first_problem);
    CHECK(tally.setup_failures == 0);
    CHECK(tally.bad_errors == 0);
    CHECK(tally.mismatches == 0);
    CHECK(tally.clean + tally.faulted == static_cast<int>(kThreads * cycles));
    CHECK(tally.clean > 0);
    if (tally.injected >= 8) CHECK(tally.faulted > 0);  // the faults reached the layer and were reported
    if (blitter) CHECK(blt_copies > 0);
    // Nothing leaked: the sim's dma-buf and sync_file fds are back, and every
    // other fd or mapping more than before belongs to a batch buffer the
    // blitter's pool kept (a GEM object of the device: its memfd, the eventfd
    // of its last fence, the sim's mapping and the layer's).
    CHECK(s1.live_dmabuf_fds == s0.live_dmabuf_fds);
    CHECK(s1.live_sync_fds == s0.live_sync_fds);
    const int64_t pool_growth = static_cast<int64_t>(s1.live_objects) - static_cast<int64_t>(s0.live_objects);
    CHECK(pool_growth >= 0);
    CHECK(pool_growth <= static_cast<int64_t>(kMaxPoolGrowth));
    CHECK(static_cast<int64_t>(s1.live_memfds) - static_cast<int64_t>(s0.live_memfds) == pool_growth);
    CHECK(fds_after - fds_before <= 2 * pool_growth);
    // Each pool buffer is mapped twice (the device's backing and the layer's
    // CPU view of the batch); an import's mapping left behind would be a third kind.
    CHECK(static_cast<int64_t>(s1.live_mappings) - static_cast<int64_t>(s0.live_mappings) == 2 * pool_growth);
    CHECK(maps_after - maps_before == 2 * pool_growth);
    if (fds_after - fds_before > 2 * pool_growth || maps_after - maps_before > 2 * pool_growth) print_open_files();
}
