// What the tests on the test ICD share beyond the set-up (test_fixture.hpp):
// the layer's counters, the handoff's entry points as the platform hands
// them out, a dma-buf imported as a buffer.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <catch2/catch_test_macros.hpp>

#include "CL/cl_ext_cldmabuf.h"
#include "test_dmabufs.hpp"
#include "test_fixture.hpp"

namespace testicd_test {

// The layer's counters (CL_PLATFORM_STATS_CLDMABUF).
inline std::array<cl_ulong, CL_STATS_COUNT_CLDMABUF> layer_stats(const Env &env) {
    std::array<cl_ulong, CL_STATS_COUNT_CLDMABUF> s{};
    REQUIRE(clGetPlatformInfo(env.platform, CL_PLATFORM_STATS_CLDMABUF, sizeof s, s.data(), nullptr) == CL_SUCCESS);
    return s;
}

// clEnqueueAcquire/ReleaseExternalMemObjectsKHR, looked up by name as an
// application does: `const auto [acquire, release] = Handoff(env);`.
struct Handoff {
    clEnqueueAcquireExternalMemObjectsKHR_fn acquire = nullptr;
    clEnqueueReleaseExternalMemObjectsKHR_fn release = nullptr;
    explicit Handoff(const Env &env)
        : acquire(reinterpret_cast<clEnqueueAcquireExternalMemObjectsKHR_fn>(
              env.function("clEnqueueAcquireExternalMemObjectsKHR"))),
          release(reinterpret_cast<clEnqueueReleaseExternalMemObjectsKHR_fn>(
              env.function("clEnqueueReleaseExternalMemObjectsKHR"))) {
        REQUIRE(acquire);
        REQUIRE(release);
    }
};

// A fresh dma-buf imported as a read-write buffer (the import owns its fd),
// with a dup of the fd kept to watch the dma-buf's fences.
struct Imported {
    e2e::Dmabuf buf;
    int watch = -1;
    cl_mem mem = nullptr;
    Imported(const Env &env, size_t size) : buf(e2e::make_dmabuf(size)) {
        watch = fcntl(buf.fd, F_DUPFD_CLOEXEC, 0);
        REQUIRE(watch >= 0);
        const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                           static_cast<cl_mem_properties>(buf.fd), 0};
        cl_int err = CL_OUT_OF_RESOURCES;
        mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, size, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        buf.release_fd();  // the importer owns it now
    }
    Imported(const Imported &) = delete;
    Imported &operator=(const Imported &) = delete;
    ~Imported() {
        if (mem) clReleaseMemObject(mem);
        if (watch >= 0) close(watch);
    }
};

}  // namespace testicd_test
