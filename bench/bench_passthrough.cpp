// bench-passthrough: per-call cost of OpenCL calls the layer does not change,
// measured by the program itself.  Run it with and without OPENCL_LAYERS
// (bench/run-benchmarks alternates both and compares medians).
//
//   bench-passthrough [--calls N] [--reps R] [--only NAME] [--callgrind]
//
// Calls:
//   set_kernel_arg       clSetKernelArg (not overridden by the layer)
//   retain_release_mem   clRetainMemObject + clReleaseMemObject (not overridden)
//   get_kernel_info      clGetKernelInfo(CL_KERNEL_NUM_ARGS) (not overridden)
//   get_mem_info_size    clGetMemObjectInfo(CL_MEM_SIZE) on a plain buffer
//                        (overridden: the layer looks, then passes through)
//   get_device_type      clGetDeviceInfo(CL_DEVICE_TYPE) (overridden, passes through)
//   marker_refused       clEnqueueMarkerWithWaitList(q, 1, NULL, NULL): the ICD refuses the
//                        wait list at once (counted pass-through, layer/queue/passthrough.hpp)
//   ndrange_refused      clEnqueueNDRangeKernel with work_dim 0: refused by the ICD (the same,
//                        nine arguments: three on the stack)
//   read_refused         clEnqueueReadBuffer into a NULL pointer on a plain buffer: refused by the ICD
//                        (overridden: the host-access check, the count, then the ICD)
//   ndrange_empty        clEnqueueNDRangeKernel of an empty kernel, one work-item: a command the ICD
//                        makes (counted pass-through), clFinish after every 256 (in the time)
//   marker               clEnqueueMarkerWithWaitList(q, 0, NULL, NULL): the same for a marker
//
// The *_refused loops measure the call's way through the layer and not a
// command: the ICD answers an error before it makes one.  ndrange_empty and
// marker are what an application sees: the layer's share of an enqueue the
// ICD carries out (a tenth of --calls each: the ICD's own cost is larger).
//
// Output: one line per call, "PT <name> <ns/call median> <min> <reps>".
// --callgrind: run each loop but the ICD's commands once between CALLGRIND_ZERO_STATS and
// CALLGRIND_DUMP_STATS_AT("<name>"), for instruction counts per call
// (valgrind --tool=callgrind --instr-atstart=no ...).
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else  // no valgrind headers: --callgrind runs the loops without markers
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(name) (void)(name)
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cl_fixture.hpp"

namespace {

using Clock = std::chrono::steady_clock;

const char *kernel_source = R"(
kernel void k(global uint *buf, uint value) { buf[get_global_id(0)] = value; }
)";
const char *empty_source = "kernel void empty(void) {}";
constexpr long kFinishEvery = 256;

struct Loop {
    const char *name;
    std::function<void(long)> run;  // n calls (pairs count as one)
    long divisor = 1;               // runs --calls / divisor calls
};

volatile cl_int sink;  // keeps results observable

}  // namespace

int main(int argc, char **argv) {
    long calls = 1000000;
    int reps = 7;
    std::string only;
    bool callgrind = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--calls" && i + 1 < argc) calls = std::atol(argv[++i]);
        else if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
        else if (a == "--only" && i + 1 < argc) only = argv[++i];
        else if (a == "--callgrind") callgrind = true;
        else {
            std::fprintf(stderr, "usage: bench-passthrough [--calls N] [--reps R] [--only NAME] [--callgrind]\n");
            return 2;
        }
    }
    try {
        e2e::ClEnv env;
        cl_kernel kernel = env.build_kernel(kernel_source, "k");
        cl_kernel empty = env.build_kernel(empty_source, "empty");
        cl_int err = CL_SUCCESS;
        cl_mem buf = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 4096, nullptr, &err);
        if (!buf) throw std::runtime_error("clCreateBuffer failed");
        std::fprintf(stderr, "bench-passthrough: layer %s, platform \"%s\", %ld calls x %d reps\n",
                     e2e::layer_enabled() ? "ENABLED" : "disabled", env.platform_name.c_str(), calls, reps);

        std::vector<Loop> loops = {
            {"set_kernel_arg",
             [&](long n) {
                 for (long i = 0; i < n; ++i) {
                     cl_uint v = static_cast<cl_uint>(i);
                     sink = clSetKernelArg(kernel, 1, sizeof v, &v);
                 }
             }},
            {"retain_release_mem",
             [&](long n) {
                 for (long i = 0; i < n; ++i) {
                     clRetainMemObject(buf);
                     sink = clReleaseMemObject(buf);
                 }
             }},
            {"get_kernel_info",
             [&](long n) {
                 for (long i = 0; i < n; ++i) {
                     cl_uint args = 0;
                     sink = clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof args, &args, nullptr);
                 }
             }},
            {"get_mem_info_size",
             [&](long n) {
                 for (long i = 0; i < n; ++i) {
                     size_t s = 0;
                     sink = clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof s, &s, nullptr);
                 }
             }},
            {"get_device_type",
             [&](long n) {
                 for (long i = 0; i < n; ++i) {
                     cl_device_type t = 0;
                     sink = clGetDeviceInfo(env.device, CL_DEVICE_TYPE, sizeof t, &t, nullptr);
                 }
             }},
            {"marker_refused",
             [&](long n) {
                 for (long i = 0; i < n; ++i) sink = clEnqueueMarkerWithWaitList(env.queue, 1, nullptr, nullptr);
             }},
            {"ndrange_refused",
             [&](long n) {
                 const size_t global = 1;
                 for (long i = 0; i < n; ++i)
                     sink = clEnqueueNDRangeKernel(env.queue, kernel, 0, nullptr, &global, nullptr, 0, nullptr,
                                                   nullptr);
             }},
            {"read_refused",
             [&](long n) {
                 for (long i = 0; i < n; ++i)
                     sink = clEnqueueReadBuffer(env.queue, buf, CL_FALSE, 0, 1, nullptr, 0, nullptr, nullptr);
             }},
            {"ndrange_empty",
             [&](long n) {
                 const size_t global = 1;
                 for (long i = 0; i < n; ++i) {
                     sink = clEnqueueNDRangeKernel(env.queue, empty, 1, nullptr, &global, nullptr, 0, nullptr,
                                                   nullptr);
                     if (i % kFinishEvery == kFinishEvery - 1) clFinish(env.queue);
                 }
                 clFinish(env.queue);
             },
             10},
            {"marker",
             [&](long n) {
                 for (long i = 0; i < n; ++i) {
                     sink = clEnqueueMarkerWithWaitList(env.queue, 0, nullptr, nullptr);
                     if (i % kFinishEvery == kFinishEvery - 1) clFinish(env.queue);
                 }
                 clFinish(env.queue);
             },
             10},
        };

        // The *_refused loops must not enqueue anything.
        for (const char *name : {"marker_refused", "ndrange_refused", "read_refused"})
            for (const Loop &loop : loops)
                if (!std::strcmp(loop.name, name)) {
                    loop.run(1);
                    if (sink == CL_SUCCESS) throw std::runtime_error(std::string(name) + ": the ICD did not refuse");
                }
        // ... and the others must make their command.
        for (const char *name : {"ndrange_empty", "marker"})
            for (const Loop &loop : loops)
                if (!std::strcmp(loop.name, name)) {
                    loop.run(1);
                    if (sink != CL_SUCCESS) throw std::runtime_error(std::string(name) + ": the ICD refused: " +
                                                                     std::to_string(sink));
                }

        for (const Loop &loop : loops) {
            if (!only.empty() && only != loop.name) continue;
            const long n = std::max(1L, calls / loop.divisor);
            loop.run(std::min(n, 10000L));  // warm-up
            if (callgrind) {
                // The ICD's worker threads would count into the totals.
                if (loop.divisor != 1) continue;
                CALLGRIND_START_INSTRUMENTATION;
                CALLGRIND_ZERO_STATS;
                loop.run(n);
                CALLGRIND_DUMP_STATS_AT(loop.name);
                CALLGRIND_STOP_INSTRUMENTATION;
                std::printf("CG %s %ld\n", loop.name, n);
                continue;
            }
            std::vector<double> ns;
            for (int r = 0; r < reps; ++r) {
                auto t0 = Clock::now();
                loop.run(n);
                ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / n);
            }
            std::sort(ns.begin(), ns.end());
            std::printf("PT %s %.2f %.2f %d\n", loop.name, ns[ns.size() / 2], ns.front(), reps);
            std::fflush(stdout);
        }
        clReleaseMemObject(buf);
        clReleaseKernel(empty);
        clReleaseKernel(kernel);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench-passthrough: %s\n", e.what());
        return 1;
    }
    return 0;
}
