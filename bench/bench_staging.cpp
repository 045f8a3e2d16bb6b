// bench-staging: the copy route's bandwidth (imports of a device without
// host-unified memory, e.g. NVIDIA) next to the ICD's own transfers, in the
// same run:
//   acquire (dma-buf -> device copy) vs clEnqueueWriteBuffer,
//   release (device copy -> dma-buf) vs clEnqueueReadBuffer,
// each from pageable memory (a malloc'd vector) and from pinned memory (a
// mapped CL_MEM_ALLOC_HOST_PTR buffer, the usual way to get page-locked
// memory from an OpenCL ICD).  The layer's route is CLDMABUF_STAGING's
// (auto: pinned staging on a device without host-unified memory).
//
// Run with the layer (OPENCL_LAYERS) and a dma-buf source as the e2e tests
// (CLDMABUF_TEST_DMABUF; "sim" with LD_PRELOAD=libvgen9.so).  On a
// host-unified device (PoCL) force the route with CLDMABUF_IMPORT=copy; the
// numbers then say nothing about a discrete GPU.
//
//   bench-staging [--mib N (64)] [--reps N (7)]
//
// Prints GB/s medians and RATIO lines (layer / ICD).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "cl_fixture.hpp"
#include "test_dmabufs.hpp"

namespace {

using Clock = std::chrono::steady_clock;

void check(cl_int err, const char *what) {
    if (err != CL_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(err));
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Median GB/s of `reps` runs of `op` moving `bytes`, after one warm-up run.
template <typename Op>
double gbps(size_t bytes, int reps, Op op) {
    op();
    std::vector<double> s;
    for (int i = 0; i < reps; ++i) {
        const auto t0 = Clock::now();
        op();
        s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    return bytes / median(s) / 1e9;
}

std::vector<cl_ulong> layer_stats(cl_platform_id p) {
    std::vector<cl_ulong> s(CL_STATS_COUNT_CLDMABUF, 0);
    clGetPlatformInfo(p, CL_PLATFORM_STATS_CLDMABUF, s.size() * sizeof(cl_ulong), s.data(), nullptr);
    return s;
}

}  // namespace

int main(int argc, char **argv) {
    size_t mib = 64;
    int reps = 7;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--mib")) mib = std::strtoul(argv[i + 1], nullptr, 10);
        else if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
    }
    const size_t n = mib << 20;
    try {
        e2e::ClEnv env;
        std::printf("bench-staging: %zu MiB, %d reps, platform \"%s\", device \"%s\", CLDMABUF_STAGING=%s\n", mib,
                    reps, env.platform_name.c_str(), e2e::device_string(env.device, CL_DEVICE_NAME).c_str(),
                    std::getenv("CLDMABUF_STAGING") ? std::getenv("CLDMABUF_STAGING") : "(auto)");
        if (!e2e::have_dmabuf()) throw std::runtime_error("no dma-buf source (CLDMABUF_TEST_DMABUF)");

        // The import.
        e2e::Dmabuf buf = e2e::make_dmabuf(n);
        const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                           static_cast<cl_mem_properties>(buf.fd), 0};
        cl_int err = CL_SUCCESS;
        cl_mem imp = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, n, nullptr, &err);
        check(err, "clCreateBufferWithProperties(dma-buf)");
        buf.release_fd();
        cl_uint route = 99;
        check(clGetMemObjectInfo(imp, CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, sizeof route, &route, nullptr),
              "CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF (is the layer enabled?)");
        if (route != CL_DMA_BUF_ROUTE_COPY_CLDMABUF)
            throw std::runtime_error("the import is zero-copy here: set CLDMABUF_IMPORT=copy to measure the "
                                     "copy route");

        // The ICD's own: a device buffer, pageable and pinned host memory.
        cl_mem dev = clCreateBuffer(env.context, CL_MEM_READ_WRITE, n, nullptr, &err);
        check(err, "clCreateBuffer(device)");
        std::vector<unsigned char> pageable(n, 1);
        cl_mem pin = clCreateBuffer(env.context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, n, nullptr, &err);
        check(err, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)");
        void *pinned = clEnqueueMapBuffer(env.queue, pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, n, 0, nullptr,
                                          nullptr, &err);
        check(err, "clEnqueueMapBuffer(pinned)");
        std::memset(pinned, 1, n);

        const auto s0 = layer_stats(env.platform);
        const double acq = gbps(n, reps, [&] {
            check(env.acquire(env.queue, 1, &imp, 0, nullptr, nullptr), "acquire");
            check(clFinish(env.queue), "clFinish");
            check(env.release(env.queue, 1, &imp, 0, nullptr, nullptr), "release");  // untimed half below
            check(clFinish(env.queue), "clFinish");
        });
        const auto s1 = layer_stats(env.platform);
        // acquire alone and release alone: time each half separately.
        std::vector<double> ta, tr;
        for (int i = 0; i < reps; ++i) {
            auto t0 = Clock::now();
            check(env.acquire(env.queue, 1, &imp, 0, nullptr, nullptr), "acquire");
            check(clFinish(env.queue), "clFinish");
            auto t1 = Clock::now();
            check(env.release(env.queue, 1, &imp, 0, nullptr, nullptr), "release");
            check(clFinish(env.queue), "clFinish");
            auto t2 = Clock::now();
            ta.push_back(std::chrono::duration<double>(t1 - t0).count());
            tr.push_back(std::chrono::duration<double>(t2 - t1).count());
        }
        const double in = n / median(ta) / 1e9, out = n / median(tr) / 1e9;
        const double both = 2.0 * n / (median(ta) + median(tr)) / 1e9;
        (void)acq;

        const double w_page = gbps(n, reps, [&] {
            check(clEnqueueWriteBuffer(env.queue, dev, CL_TRUE, 0, n, pageable.data(), 0, nullptr, nullptr), "write");
        });
        const double r_page = gbps(n, reps, [&] {
            check(clEnqueueReadBuffer(env.queue, dev, CL_TRUE, 0, n, pageable.data(), 0, nullptr, nullptr), "read");
        });
        const double w_pin = gbps(n, reps, [&] {
            check(clEnqueueWriteBuffer(env.queue, dev, CL_TRUE, 0, n, pinned, 0, nullptr, nullptr), "write");
        });
        const double r_pin = gbps(n, reps, [&] {
            check(clEnqueueReadBuffer(env.queue, dev, CL_TRUE, 0, n, pinned, 0, nullptr, nullptr), "read");
        });

        const cl_ulong staged = s1[CL_STATS_STAGED_TRANSFERS_CLDMABUF] - s0[CL_STATS_STAGED_TRANSFERS_CLDMABUF];
        const cl_ulong direct = s1[CL_STATS_DIRECT_TRANSFERS_CLDMABUF] - s0[CL_STATS_DIRECT_TRANSFERS_CLDMABUF];
        std::printf("layer route: %s (%llu staged, %llu direct transfers)\n",
                    staged && !direct ? "pinned staging" : direct && !staged ? "direct" : "mixed",
                    static_cast<unsigned long long>(staged), static_cast<unsigned long long>(direct));
        std::printf("%-44s %8s\n", "", "GB/s");
        std::printf("%-44s %8.2f\n", "layer acquire (dma-buf -> device)", in);
        std::printf("%-44s %8.2f\n", "layer release (device -> dma-buf)", out);
        std::printf("%-44s %8.2f\n", "layer acquire+release", both);
        std::printf("%-44s %8.2f\n", "ICD WriteBuffer from pageable", w_page);
        std::printf("%-44s %8.2f\n", "ICD ReadBuffer to pageable", r_page);
        std::printf("%-44s %8.2f\n", "ICD WriteBuffer from pinned", w_pin);
        std::printf("%-44s %8.2f\n", "ICD ReadBuffer to pinned", r_pin);
        const double page_both = 2.0 / (1 / w_page + 1 / r_page), pin_both = 2.0 / (1 / w_pin + 1 / r_pin);
        // docs/icds.md: the copy route is to reach 0.9x of the ICD's own transfers.
        auto ratio = [](const char *name, double r) {
            std::printf("RATIO %s = %.2f (target >= 0.9) %s\n", name, r, r >= 0.9 ? "met" : "MISS");
        };
        ratio("acquire/WriteBuffer(pageable)", in / w_page);
        ratio("acquire/WriteBuffer(pinned)", in / w_pin);
        ratio("release/ReadBuffer(pageable)", out / r_page);
        ratio("release/ReadBuffer(pinned)", out / r_pin);
        ratio("acquire+release/Write+Read(pageable)", both / page_both);
        ratio("acquire+release/Write+Read(pinned)", both / pin_both);
        if (const char *data = std::getenv("CLDMABUF_BENCH_DATA")) {  // for bench/plot
            if (FILE *f = std::fopen((std::string(data) + "/staging.dat").c_str(), "w")) {
                std::fprintf(f, "# GB/s, %zu MiB\n\"layer acquire\" %.3f\n\"ICD write, pageable\" %.3f\n"
                                "\"ICD write, pinned\" %.3f\n\"layer release\" %.3f\n\"ICD read, pageable\" %.3f\n"
                                "\"ICD read, pinned\" %.3f\n",
                             n >> 20, in, w_page, w_pin, out, r_page, r_pin);
                std::fclose(f);
            }
        }

        clEnqueueUnmapMemObject(env.queue, pin, pinned, 0, nullptr, nullptr);
        clFinish(env.queue);
        clReleaseMemObject(pin);
        clReleaseMemObject(dev);
        clReleaseMemObject(imp);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench-staging: %s\n", e.what());
        return 1;
    }
    return 0;
}
