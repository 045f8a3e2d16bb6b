// A pool's frame imported again on the copy route: the registration of its
// mapping with the ICD (a CL_MEM_USE_HOST_PTR buffer, layer/handoff/staging.hpp)
// parks with the mapping and the next import of the same dma-buf in the
// same context takes it back, so the ICD does not pin the frame's pages
// again (NVIDIA: 3 ms a frame).  Another context makes its own; the bytes go
// both ways through the taken-back registration as through a new one; the
// parked registration goes with its dma-buf (layer/dmabuf/mapping_cache.hpp,
// invariant 5).  Skipped where the mapping is not registered (zero-copy, or
// CLDMABUF_STAGING other than register/auto on a device with host-unified
// memory): meson's e2e-sim-copy-register and NVIDIA run it.
#include <catch2/catch_test_macros.hpp>

#include <linux/ioctl.h>  // _IOWR behind the DMA_BUF_IOCTL_* numbers
#include <linux/dma-buf.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cl_fixture.hpp"
#include "destroy_mem.hpp"
#include "layer_probe.hpp"
#include "test_dmabufs.hpp"
#include "test_env.hpp"

using namespace e2e;
namespace tsup = cldmabuf::test;

namespace {

bool registers_here(const ClEnv &env) {
    cl_bool unified = CL_FALSE;
    clGetDeviceInfo(env.device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, nullptr);
    return tsup::env_is("CLDMABUF_STAGING", "register") ||
           (!tsup::env_is("CLDMABUF_STAGING", "off") && !tsup::env_is("CLDMABUF_STAGING", "pinned") && !unified);
}

void produce(const Dmabuf &buf, uint8_t value) {
    auto *p = static_cast<uint8_t *>(tsup::map(buf));
    tsup::sync(buf.fd, DMA_BUF_SYNC_WRITE | DMA_BUF_SYNC_START);
    std::fill(p, p + buf.size, value);
    tsup::sync(buf.fd, DMA_BUF_SYNC_WRITE | DMA_BUF_SYNC_END);
    tsup::unmap(p, buf.size);
}

bool holds(const Dmabuf &buf, uint8_t value) {
    auto *p = static_cast<uint8_t *>(tsup::map(buf));
    tsup::sync(buf.fd, DMA_BUF_SYNC_READ | DMA_BUF_SYNC_START);
    bool all = std::all_of(p, p + buf.size, [value](uint8_t b) { return b == value; });
    tsup::sync(buf.fd, DMA_BUF_SYNC_READ | DMA_BUF_SYNC_END);
    tsup::unmap(p, buf.size);
    return all;
}

// One frame: import (a dup of the producer's fd, owned by the import),
// acquire, the device reads what the producer wrote and writes `next`,
// release, destroy.  Returns whether the device saw `seen`.
bool frame(const ClEnv &env, const Dmabuf &buf, uint8_t seen, uint8_t next) {
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                       static_cast<cl_mem_properties>(buf.dup_fd()), 0};
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, buf.size, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    if (route_of(mem) != CL_DMA_BUF_ROUTE_COPY_CLDMABUF) {
        destroy(env, mem);
        SKIP("imports take the zero-copy route here");
    }
    REQUIRE(env.acquire(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    std::vector<uint8_t> got(buf.size);
    REQUIRE(clEnqueueReadBuffer(env.queue, mem, CL_TRUE, 0, buf.size, got.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clEnqueueFillBuffer(env.queue, mem, &next, 1, 0, buf.size, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(env.release(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    destroy(env, mem);
    return std::all_of(got.begin(), got.end(), [seen](uint8_t b) { return b == seen; });
}

struct Registrations {
    cl_ulong made, reused;
};
Registrations registrations(const ClEnv &env) {
    const LayerStats s = layer_stats(env.platform);
    return {s[CL_STATS_REGISTRATIONS_MADE_CLDMABUF], s[CL_STATS_REGISTRATIONS_REUSED_CLDMABUF]};
}

}  // namespace

TEST_CASE("[copy-route] a pool frame imported again takes back its parked registration, in its own context only; "
          "it goes with the freed dma-buf",
          "[copy-route][mapcache][kernel]") {
    REQUIRE_DMABUF();
    ClEnv env;
    if (!registers_here(env)) SKIP("the import's mapping is not registered here (CLDMABUF_STAGING=register registers it)");
    constexpr size_t N = (2u << 20) + 4096;
    struct stat st {};
    {
        Dmabuf buf = make_dmabuf(N);
        REQUIRE(fstat(buf.fd, &st) == 0);
        produce(buf, 0x11);
        const Registrations r0 = registrations(env);
        CHECK(frame(env, buf, 0x11, 0x22));
        CHECK(holds(buf, 0x22));
        const Registrations r1 = registrations(env);
        CHECK(r1.made == r0.made + 1);
        CHECK(r1.reused == r0.reused);

        // The producer writes the next frame; the same memory comes back.
        produce(buf, 0x33);
        CHECK(frame(env, buf, 0x33, 0x44));
        CHECK(holds(buf, 0x44));
        const Registrations r2 = registrations(env);
        CHECK(r2.made == r1.made);
        CHECK(r2.reused == r1.reused + 1);

        // Another context never takes this context's registration.
        {
            ClEnv other;
            produce(buf, 0x55);
            CHECK(frame(other, buf, 0x55, 0x66));
            CHECK(holds(buf, 0x66));
            const Registrations r3 = registrations(other);
            CHECK(r3.made == r2.made + 1);
            CHECK(r3.reused == r2.reused);
        }
        // And the first context's is still there for its next frame.
        produce(buf, 0x77);
        CHECK(frame(env, buf, 0x77, 0x88));
        CHECK(holds(buf, 0x88));
        const Registrations r4 = registrations(env);
        CHECK(r4.made == r2.made + 1);
        CHECK(r4.reused == r2.reused + 1);
        CHECK(mappings_of_inode(st.st_ino) >= 2);  // parked: the import's mapping and the registration's
    }  // the producer frees the buffer: only the cache holds it
    // The cache looks every 50 ms while anything is parked; the
    // registration's range is unmapped on the layer's worker after its release.
    CHECK(eventually([&] { return mappings_of_inode(st.st_ino) == 0; }));
}
