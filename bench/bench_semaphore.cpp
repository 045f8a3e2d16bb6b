// A wait+signal round trip through the layer's semaphores (layer/sync/)
// against its floors: the ICD's own marker + clFinish (what any host step
// costs at least) and the bare poll() of a signalled sync_file (what the
// wait itself costs in the kernel).  Medians of N rounds, in microseconds.
//   bench-semaphore [--rounds N]        (OPENCL_LAYERS set; a sw_sync source
//   for the exported variant: the virtual Gen9 or root with debugfs)
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cl_fixture.hpp"
#include "layer/sync/semaphore_compat.h"

namespace {

using clock_type = std::chrono::steady_clock;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

template <typename F>
double time_us(F &&f) {
    auto t0 = clock_type::now();
    f();
    return std::chrono::duration<double, std::micro>(clock_type::now() - t0).count();
}

}  // namespace

int main(int argc, char **argv) {
    int rounds = 2000;
    for (int i = 1; i + 1 < argc; ++i)
        if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    e2e::ClEnv env;
    auto get = [&](const char *n) { return clGetExtensionFunctionAddressForPlatform(env.platform, n); };
    auto create = reinterpret_cast<clCreateSemaphoreWithPropertiesKHR_fn>(get("clCreateSemaphoreWithPropertiesKHR"));
    auto wait = reinterpret_cast<clEnqueueWaitSemaphoresKHR_fn>(get("clEnqueueWaitSemaphoresKHR"));
    auto signal = reinterpret_cast<clEnqueueSignalSemaphoresKHR_fn>(get("clEnqueueSignalSemaphoresKHR"));
    auto handle = reinterpret_cast<clGetSemaphoreHandleForTypeKHR_fn>(get("clGetSemaphoreHandleForTypeKHR"));
    auto release = reinterpret_cast<clReleaseSemaphoreKHR_fn>(get("clReleaseSemaphoreKHR"));
    if (!create || !wait || !signal || !release) {
        std::fprintf(stderr, "bench-semaphore: no semaphore functions (is OPENCL_LAYERS set?)\n");
        return 2;
    }
    std::printf("bench-semaphore: %s, %d rounds, medians in us\n", env.platform_name.c_str(), rounds);

    std::vector<double> marker, layer, exported, bare;
    for (int i = 0; i < rounds; ++i)
        marker.push_back(time_us([&] {
            clEnqueueMarkerWithWaitList(env.queue, 0, nullptr, nullptr);
            clFinish(env.queue);
        }));
    const cl_semaphore_properties_khr plain[] = {CL_SEMAPHORE_TYPE_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR, 0};
    cl_int err = CL_SUCCESS;
    cl_semaphore_khr s = create(env.context, plain, &err);
    for (int i = 0; i < rounds && err == CL_SUCCESS; ++i)
        layer.push_back(time_us([&] {
            signal(env.queue, 1, &s, nullptr, 0, nullptr, nullptr);
            wait(env.queue, 1, &s, nullptr, 0, nullptr, nullptr);
            clFinish(env.queue);
        }));
    release(s);
    std::printf("  ICD marker + clFinish (floor of a host step)     %8.1f\n", median(marker));
    std::printf("  layer signal + wait + clFinish                   %8.1f\n", median(layer));

    const cl_semaphore_properties_khr exp_props[] = {CL_SEMAPHORE_TYPE_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR,
                                                     CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR,
                                                     CL_SEMAPHORE_HANDLE_SYNC_FD_KHR,
                                                     CL_SEMAPHORE_EXPORT_HANDLE_TYPES_LIST_END_KHR, 0};
    cl_semaphore_khr x = create(env.context, exp_props, &err);
    if (err != CL_SUCCESS) {
        std::printf("  exported sync_fd: no fence source here (no sw_sync), skipped\n");
        return 0;
    }
    int fd = -1;
    for (int i = 0; i < rounds; ++i)
        exported.push_back(time_us([&] {
            signal(env.queue, 1, &x, nullptr, 0, nullptr, nullptr);
            wait(env.queue, 1, &x, nullptr, 0, nullptr, nullptr);
            clFinish(env.queue);
        }));
    signal(env.queue, 1, &x, nullptr, 0, nullptr, nullptr);
    handle(x, env.device, CL_SEMAPHORE_HANDLE_SYNC_FD_KHR, sizeof fd, &fd, nullptr);
    clFinish(env.queue);
    for (int i = 0; i < rounds && fd >= 0; ++i)
        bare.push_back(time_us([&] {
            pollfd p{fd, POLLIN, 0};
            poll(&p, 1, 1000);
        }));
    if (fd >= 0) close(fd);
    release(x);
    std::printf("  layer signal + wait + clFinish, sw_sync fence    %8.1f\n", median(exported));
    std::printf("  bare poll() of a signalled sync_file             %8.1f\n", median(bare));
    return 0;
}
