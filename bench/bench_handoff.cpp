// bench-handoff: acquire + release + clFinish through the layer against the
// ICD's own floor for the same shape (issue #18): two markers with events +
// clFinish, plus the bare syscalls of a handoff on the same dma-buf (poll on
// the fd, DMA_BUF_IOCTL_SYNC START and END).  The two alternate round by
// round in one process, so a ratio never mixes two load situations.
//
// Run with the layer enabled (OPENCL_LAYERS=.../libcldmabuf.so); the dma-buf
// source is CLDMABUF_TEST_DMABUF=heap|udmabuf|vgem|sim as in the e2e tests
// ("sim" needs LD_PRELOAD=.../libvgen9.so).
//
//   bench-handoff [--rounds N] [--size BYTES] [--csv FILE] [--alias]
//
// --alias: a second import of the same dma-buf stays alive (not acquired),
// so on the copy route the measured import's release writes back only what
// changed (layer/handoff/alias_merge.hpp): its snapshot and compare priced
// against the same floor.
//
// Prints medians, how many handoffs took the layer's fast path (its
// counters, CL_PLATFORM_STATS_CLDMABUF), and
// `RATIO handoff/floor = x (target <= 1.2) met|MISS`.  An import on the copy
// route (a discrete device: NVIDIA) moves its bytes on acquire and release,
// so its floor also has the ICD's own non-blocking Write and Read of the same
// bytes (from and to the dma-buf's mapping, into a plain buffer).  --csv writes one line
// per round (round,floor_us,handoff_us) for bench/plot.
#include <linux/dma-buf.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "cl_fixture.hpp"
#include "test_dmabufs.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void check(cl_int err, const char *what) {
    if (err != CL_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(err));
}

std::array<cl_ulong, CL_STATS_COUNT_CLDMABUF> layer_stats(cl_platform_id platform) {
    std::array<cl_ulong, CL_STATS_COUNT_CLDMABUF> s{};
    check(clGetPlatformInfo(platform, CL_PLATFORM_STATS_CLDMABUF, sizeof s, s.data(), nullptr),
          "clGetPlatformInfo(CL_PLATFORM_STATS_CLDMABUF)");
    return s;
}

// What any handoff must cost at least: the ICD's two commands with events,
// their completion, and the kernel's fence poll and CPU-access bracket; on
// the copy route (`dev` non-null) also the ICD's Write and Read of the bytes.
struct Floor {
    int fd;
    cl_mem dev = nullptr;  // copy route: a plain buffer of the import's size
    void *host = nullptr;  // ... and the dma-buf's mapping
    size_t size = 0;
};

double floor_once(const e2e::ClEnv &env, const Floor &f) {
    const auto t0 = Clock::now();
    cl_event a = nullptr, b = nullptr;
    check(clEnqueueMarkerWithWaitList(env.queue, 0, nullptr, &a), "clEnqueueMarkerWithWaitList");
    pollfd p{f.fd, POLLOUT, 0};
    if (poll(&p, 1, 0) != 1) throw std::runtime_error("the dma-buf has pending fences");
    dma_buf_sync start{DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW};
    if (ioctl(f.fd, DMA_BUF_IOCTL_SYNC, &start) != 0) throw std::runtime_error("DMA_BUF_IOCTL_SYNC START failed");
    if (f.dev)
        check(clEnqueueWriteBuffer(env.queue, f.dev, CL_FALSE, 0, f.size, f.host, 0, nullptr, nullptr), "write");
    check(clEnqueueMarkerWithWaitList(env.queue, 0, nullptr, &b), "clEnqueueMarkerWithWaitList");
    if (f.dev) check(clEnqueueReadBuffer(env.queue, f.dev, CL_TRUE, 0, f.size, f.host, 0, nullptr, nullptr), "read");
    dma_buf_sync end{DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW};
    if (ioctl(f.fd, DMA_BUF_IOCTL_SYNC, &end) != 0) throw std::runtime_error("DMA_BUF_IOCTL_SYNC END failed");
    check(clFinish(env.queue), "clFinish");
    clReleaseEvent(a);
    clReleaseEvent(b);
    return us_since(t0);
}

double handoff_once(const e2e::ClEnv &env, cl_mem mem) {
    const auto t0 = Clock::now();
    check(env.acquire(env.queue, 1, &mem, 0, nullptr, nullptr), "clEnqueueAcquireExternalMemObjectsKHR");
    check(env.release(env.queue, 1, &mem, 0, nullptr, nullptr), "clEnqueueReleaseExternalMemObjectsKHR");
    check(clFinish(env.queue), "clFinish");
    return us_since(t0);
}

}  // namespace

int main(int argc, char **argv) {
    int rounds = 300;
    size_t size = 4096;
    const char *csv = nullptr;
    bool alias = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--rounds" && i + 1 < argc) {
            rounds = std::max(1, std::atoi(argv[++i]));
        } else if (a == "--size" && i + 1 < argc) {
            size = std::strtoull(argv[++i], nullptr, 0);
        } else if (a == "--csv" && i + 1 < argc) {
            csv = argv[++i];
        } else if (a == "--alias") {
            alias = true;
        } else {
            std::fprintf(stderr, "usage: bench-handoff [--rounds N] [--size BYTES] [--csv FILE] [--alias]\n");
            return 2;
        }
    }
    if (!e2e::layer_enabled() || !e2e::have_dmabuf()) {
        std::fprintf(stderr, "bench-handoff: needs OPENCL_LAYERS and a dma-buf source (CLDMABUF_TEST_DMABUF)\n");
        return 2;
    }
    try {
        e2e::ClEnv env;
        if (!env.acquire || !env.release) throw std::runtime_error("acquire/release entry points missing");
        e2e::Dmabuf buf = e2e::make_dmabuf(size);
        const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                           static_cast<cl_mem_properties>(buf.dup_fd()), 0};
        cl_int err = CL_SUCCESS;
        cl_mem mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, size, nullptr, &err);
        check(err, "clCreateBufferWithProperties(dma-buf)");
        cl_mem second = nullptr;
        if (alias) {
            const cl_mem_properties again[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                               static_cast<cl_mem_properties>(buf.dup_fd()), 0};
            second = clCreateBufferWithProperties(env.context, again, CL_MEM_READ_WRITE, size, nullptr, &err);
            check(err, "clCreateBufferWithProperties(the same dma-buf again)");
        }
        cl_uint route = CL_DMA_BUF_ROUTE_HOST_PTR_CLDMABUF;
        check(clGetMemObjectInfo(mem, CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, sizeof route, &route, nullptr),
              "clGetMemObjectInfo(CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF)");
        Floor fl_shape{buf.fd};
        if (route == CL_DMA_BUF_ROUTE_COPY_CLDMABUF) {
            fl_shape.size = size;
            fl_shape.dev = clCreateBuffer(env.context, CL_MEM_READ_WRITE, size, nullptr, &err);
            check(err, "clCreateBuffer");
            fl_shape.host = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, buf.fd, 0);
            if (fl_shape.host == MAP_FAILED) throw std::runtime_error("mmap of the dma-buf failed");
        }
        for (int i = 0; i < 5; ++i) {  // warm-up: the queue's worker, first events, caches
            floor_once(env, fl_shape);
            handoff_once(env, mem);
        }
        const auto before = layer_stats(env.platform);
        std::vector<double> fl, ho;
        for (int r = 0; r < rounds; ++r) {
            fl.push_back(floor_once(env, fl_shape));
            ho.push_back(handoff_once(env, mem));
        }
        const auto after = layer_stats(env.platform);
        check(clReleaseMemObject(mem), "clReleaseMemObject");
        if (second) check(clReleaseMemObject(second), "clReleaseMemObject");
        if (fl_shape.dev) {
            clReleaseMemObject(fl_shape.dev);
            munmap(fl_shape.host, size);
        }
        const cl_ulong fast = after[CL_STATS_FAST_HANDOFFS_CLDMABUF] - before[CL_STATS_FAST_HANDOFFS_CLDMABUF];
        const cl_ulong queued = after[CL_STATS_QUEUED_HANDOFFS_CLDMABUF] - before[CL_STATS_QUEUED_HANDOFFS_CLDMABUF];
        const cl_ulong quiet = after[CL_STATS_QUIET_HANDOFFS_CLDMABUF] - before[CL_STATS_QUIET_HANDOFFS_CLDMABUF];
        const cl_ulong merges = after[CL_STATS_ALIAS_MERGES_CLDMABUF] - before[CL_STATS_ALIAS_MERGES_CLDMABUF];
        if (csv) {
            FILE *f = std::fopen(csv, "w");
            if (!f) throw std::runtime_error(std::string("cannot write ") + csv);
            std::fprintf(f, "round,floor_us,handoff_us\n");
            for (int r = 0; r < rounds; ++r) std::fprintf(f, "%d,%.3f,%.3f\n", r, fl[r], ho[r]);
            std::fclose(f);
        }
        const double f = median(fl), h = median(ho), ratio = h / f;
        std::printf("bench-handoff: platform \"%s\", device \"%s\", dma-buf source %s, %zu bytes, %d rounds\n",
                    env.platform_name.c_str(), e2e::device_string(env.device, CL_DEVICE_NAME).c_str(),
                    e2e::dmabuf_source().c_str(), size, rounds);
        std::printf("VALUE handoff_floor_us = %.2f (2 markers with events + clFinish + poll + SYNC START/END%s)\n", f,
                    fl_shape.dev ? " + the ICD's Write and Read of the bytes: copy route" : "");
        std::printf("VALUE handoff_us = %.2f (acquire + release + clFinish)\n", h);
        std::printf("VALUE handoff_fast_path = %llu of %llu commands\n", static_cast<unsigned long long>(fast),
                    static_cast<unsigned long long>(fast + queued));
        // Of those, on the quiet queue (layer/queue/quiet.hpp: no marker watched).
        std::printf("VALUE handoff_quiet = %llu of %llu commands\n", static_cast<unsigned long long>(quiet),
                    static_cast<unsigned long long>(fast + queued));
        if (alias)  // releases that merged (a second import of the dma-buf alive)
            std::printf("VALUE handoff_alias_merges = %llu of %d releases\n", static_cast<unsigned long long>(merges),
                        rounds);
        std::printf("RATIO handoff/floor = %.2f (target <= 1.2) %s\n", ratio, ratio <= 1.2 ? "met" : "MISS");
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench-handoff: %s\n", e.what());
        return 1;
    }
    return 0;
}
