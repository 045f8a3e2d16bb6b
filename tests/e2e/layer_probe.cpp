#include "layer_probe.hpp"

#include <cstdlib>

#include <catch2/catch_test_macros.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

#include "settled_counts.hpp"
#include "test_dmabufs.hpp"

namespace e2e {

LayerStats layer_stats(cl_platform_id platform) {
    LayerStats s{};
    CHECK(clGetPlatformInfo(platform, CL_PLATFORM_STATS_CLDMABUF, sizeof s, s.data(), nullptr) == CL_SUCCESS);
    return s;
}

bool layer_import(cl_mem mem) {
    cl_uint route = 99;
    return clGetMemObjectInfo(mem, CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, sizeof route, &route, nullptr) ==
           CL_SUCCESS;
}

bool layer_has_fence_source(const ClEnv &env) {
    size_t bytes = 0;
    return clGetDeviceInfo(env.device, CL_DEVICE_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR, 0, nullptr, &bytes) ==
               CL_SUCCESS &&
           bytes > 0;
}

int fence_timeout_ms() {
    const char *v = std::getenv("CLDMABUF_FENCE_TIMEOUT_MS");
    return v ? std::atoi(v) : 1000;
}

cl_ulong bound_hits(const ClEnv &env) {
    const LayerStats s = layer_stats(env.platform);
    return s[CL_STATS_FENCE_TIMEOUTS_CLDMABUF] + s[CL_STATS_RELEASE_FENCES_EXPIRED_CLDMABUF];
}

namespace {

bool probe_blitter(const ClEnv &env) {
    if (!have_dmabuf()) return false;
    Dmabuf a = make_dmabuf(4096), b = make_dmabuf(4096);
    auto import = [&](Dmabuf &buf) {
        const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                           static_cast<cl_mem_properties>(buf.fd), 0};
        cl_int err = CL_SUCCESS;
        cl_mem m = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, 4096, nullptr, &err);
        if (m) buf.release_fd();
        return m;
    };
    cl_mem ma = import(a), mb = import(b);
    bool took = false;
    if (ma && mb) {
        const cl_ulong before = layer_stats(env.platform)[CL_STATS_BLT_COPIES_CLDMABUF];
        if (clEnqueueCopyBuffer(env.queue, ma, mb, 0, 0, 4096, 0, nullptr, nullptr) == CL_SUCCESS &&
            clFinish(env.queue) == CL_SUCCESS)
            took = layer_stats(env.platform)[CL_STATS_BLT_COPIES_CLDMABUF] > before;
    }
    if (ma) clReleaseMemObject(ma);
    if (mb) clReleaseMemObject(mb);
    return took;
}

// The route the layer gives a 4 KiB buffer import on this device.
bool probe_in_place(const ClEnv &env) {
    if (!have_dmabuf()) return false;
    Dmabuf a = make_dmabuf(4096);
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(a.fd), 0};
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, 4096, nullptr, &err);
    if (!m) return false;
    a.release_fd();
    const bool in_place = route_of(m) != CL_DMA_BUF_ROUTE_COPY_CLDMABUF;
    clReleaseMemObject(m);
    return in_place;
}

}  // namespace

bool layer_imports_in_place() {
    static std::once_flag once;
    static bool in_place = false;
    std::call_once(once, [] {
        try {
            ClEnv env;
            in_place = probe_in_place(env);
        } catch (const std::exception &) {
            in_place = false;
        }
        std::printf("[probe] the layer imports dma-bufs %s on this device\n",
                    in_place ? "in place (zero-copy)" : "through the copy route");
    });
    return in_place;
}

bool layer_takes_blitter() {
    static std::once_flag once;
    static bool takes = false;
    std::call_once(once, [] {
        try {
            ClEnv env;
            takes = probe_blitter(env);
        } catch (const std::exception &) {
            takes = false;
        }
        std::printf("[probe] the layer %s the Gen9 blitter for copies between imports on this device\n",
                    takes ? "takes" : "does not take");
    });
    return takes;
}

cl_uint route_of(cl_mem mem) {
    cl_uint route = 99;
    REQUIRE(clGetMemObjectInfo(mem, CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, sizeof route, &route, nullptr) ==
            CL_SUCCESS);
    return route;
}

bool closes_soon(int fd) {
    for (int i = 0; i < 200 && fd_is_open(fd); ++i) usleep(10 * 1000);
    return !fd_is_open(fd);
}

bool eventually(const std::function<bool()> &done, int ms) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (!done()) {
        if (std::chrono::steady_clock::now() > end) return false;
        usleep(5000);
    }
    return true;
}

namespace {

// The test platform for the settled counts (tests/support/settled_counts.hpp):
// without one they settle without waiting for the layer's workers.
cl_platform_id first_platform() {
    cl_platform_id platform = nullptr;
    return clGetPlatformIDs(1, &platform, nullptr) == CL_SUCCESS ? platform : nullptr;
}

}  // namespace

int settled_mappings() { return cldmabuf::test::settled_mappings(first_platform()); }

int settled_fds() { return cldmabuf::test::settled_fds(first_platform()); }

int mappings_of_inode(unsigned long long ino) {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    int n = 0;
    while (std::getline(maps, line)) {
        std::istringstream f(line);
        std::string range, perms, offset, dev;
        unsigned long long i = 0;
        f >> range >> perms >> offset >> dev >> i;
        n += i == ino;
    }
    return n;
}

int cache_fds_per_import() {
    const char *v = std::getenv("CLDMABUF_MAP_CACHE_MB");
    return v && std::string(v) == "0" ? 0 : 1;
}

int unparked_fds() { return count_open_fds() - cldmabuf::test::parked_mappings(first_platform()); }
int unparked_mappings() { return count_mappings() - cldmabuf::test::parked_mappings(first_platform()); }

int open_fds_toward(int expected) {
    const cl_platform_id p = first_platform();
    auto count = [p] { return count_open_fds() - cldmabuf::test::parked_mappings(p); };
    int now = count();
    eventually([&] { return (now = count()) == expected; });
    return now;
}

}  // namespace e2e
