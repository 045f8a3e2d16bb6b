// bench-startup: what an application waits for before its first command,
// once per process: the first clGetPlatformIDs (the loader reads its ICDs
// and, with OPENCL_LAYERS, loads and initialises the layer), the device
// query and clCreateContext.  One sample per process, so bench/run-benchmarks
// (and bench/compare-layers) run it many times, alternating with and
// without the layer.
//
//   bench-startup        prints "PT <step> <ns>" for platforms, context and
//                        startup (the two together), then "LAYER on|off"
//
// CLDMABUF_TEST_PLATFORM picks the platform by a substring of its name, as
// the other benchmarks do.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cl_fixture.hpp"

namespace {
using Clock = std::chrono::steady_clock;
double ns_since(Clock::time_point t) { return std::chrono::duration<double, std::nano>(Clock::now() - t).count(); }
}  // namespace

int main() {
    const auto t0 = Clock::now();
    cl_uint count = 0;
    if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) {
        std::fprintf(stderr, "bench-startup: no OpenCL platform\n");
        return 1;
    }
    std::vector<cl_platform_id> platforms(count);
    clGetPlatformIDs(count, platforms.data(), nullptr);
    const double platforms_ns = ns_since(t0);

    const auto t1 = Clock::now();
    const char *want = std::getenv("CLDMABUF_TEST_PLATFORM");
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    for (cl_platform_id p : platforms) {
        if (want && *want && e2e::platform_string(p, CL_PLATFORM_NAME).find(want) == std::string::npos) continue;
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) == CL_SUCCESS) {
            platform = p;
            break;
        }
    }
    if (!platform) {
        std::fprintf(stderr, "bench-startup: no platform matches CLDMABUF_TEST_PLATFORM\n");
        return 1;
    }
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform), 0};
    cl_int err = CL_SUCCESS;
    cl_context context = clCreateContext(props, 1, &device, nullptr, nullptr, &err);
    const double context_ns = ns_since(t1);
    if (!context) {
        std::fprintf(stderr, "bench-startup: clCreateContext failed: %d\n", err);
        return 1;
    }
    clReleaseContext(context);

    std::printf("PT platforms %.0f\nPT context %.0f\nPT startup %.0f\n", platforms_ns, context_ns,
                platforms_ns + context_ns);
    // After the timing: whether the layer is in the chain (a wrong
    // OPENCL_LAYERS would otherwise measure the ICD alone).
    std::printf("LAYER %s\n", e2e::layer_enabled() ? "on" : "off");
    return 0;
}
