// The copy route (imports of devices without host-unified memory, forced on
// the host with CLDMABUF_IMPORT=copy): acquire refreshes the device copy from
// the dma-buf unless the device only writes it (CL_MEM_WRITE_ONLY); release
// writes it back unless the device only reads it (CL_MEM_READ_ONLY); the
// host-access flags change neither.  Checked by content (the test's own
// mapping of the dma-buf) and by the layer's byte counters per direction
// (CL_PLATFORM_STATS_CLDMABUF).  Pinned staging (CLDMABUF_STAGING=pinned,
// meson's e2e-sim-copy-pinned) must move the same bytes.  Tagged
// [copy-route][kernel] (the device side is read and written with the ICD's
// copy and fill commands); skipped where imports take the zero-copy route.
#include <catch2/catch_test_macros.hpp>

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cl_fixture.hpp"
#include "event_info.hpp"
#include "layer_probe.hpp"
#include "test_dmabufs.hpp"
#include "test_env.hpp"

using namespace e2e;
using cldmabuf::test::env_is;

namespace {

// A dma-buf imported with `flags`, and the test's own CPU view of it (the
// producer's side).
struct CopyImport {
    Dmabuf buf;
    cl_mem mem = nullptr;
    size_t size;
    uint8_t *view = nullptr;

    CopyImport(const ClEnv &env, size_t sz, cl_mem_flags flags) : buf(make_dmabuf(sz)), size(sz) {
        void *v = mmap(nullptr, sz, PROT_READ | PROT_WRITE, MAP_SHARED, buf.fd, 0);
        REQUIRE(v != MAP_FAILED);
        view = static_cast<uint8_t *>(v);
        const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                           static_cast<cl_mem_properties>(buf.fd), 0};
        cl_int err = CL_SUCCESS;
        mem = clCreateBufferWithProperties(env.context, props, flags, sz, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        buf.release_fd();
    }
    ~CopyImport() {
        if (mem) clReleaseMemObject(mem);
        munmap(view, size);
    }
    bool copy_route() const {
        cl_uint route = 99;
        clGetMemObjectInfo(mem, CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, sizeof route, &route, nullptr);
        return route == CL_DMA_BUF_ROUTE_COPY_CLDMABUF;
    }
    void produce(uint8_t value) { std::memset(view, value, size); }
    bool holds(uint8_t value) const {
        for (size_t i = 0; i < size; ++i)
            if (view[i] != value) return false;
        return true;
    }
};

#define REQUIRE_COPY_ROUTE(imp)                                                          \
    do {                                                                                 \
        if (!(imp).copy_route()) SKIP("imports take the zero-copy route here");          \
    } while (0)

// What one acquire (or release) moved, by direction, from the layer's counters.
struct Moved {
    cl_ulong in = 0, out = 0, staged = 0, staged_transfers = 0, direct_transfers = 0;
};
Moved moved_since(const LayerStats &a, const LayerStats &b) {
    return {b[CL_STATS_COPY_IN_BYTES_CLDMABUF] - a[CL_STATS_COPY_IN_BYTES_CLDMABUF],
            b[CL_STATS_COPY_OUT_BYTES_CLDMABUF] - a[CL_STATS_COPY_OUT_BYTES_CLDMABUF],
            b[CL_STATS_STAGED_BYTES_CLDMABUF] - a[CL_STATS_STAGED_BYTES_CLDMABUF],
            b[CL_STATS_STAGED_TRANSFERS_CLDMABUF] - a[CL_STATS_STAGED_TRANSFERS_CLDMABUF],
            b[CL_STATS_DIRECT_TRANSFERS_CLDMABUF] - a[CL_STATS_DIRECT_TRANSFERS_CLDMABUF]};
}

// The device's own read of the import: copied into a plain buffer on the
// device (legal whatever the import's host-access flags), read back.
std::vector<uint8_t> device_view(const ClEnv &env, cl_mem mem, size_t size) {
    cl_int err = CL_SUCCESS;
    cl_mem plain = clCreateBuffer(env.context, CL_MEM_READ_WRITE, size, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(clEnqueueCopyBuffer(env.queue, mem, plain, 0, 0, size, 0, nullptr, nullptr) == CL_SUCCESS);
    std::vector<uint8_t> out(size);
    REQUIRE(clEnqueueReadBuffer(env.queue, plain, CL_TRUE, 0, size, out.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    clReleaseMemObject(plain);
    return out;
}

// The device writes every byte of the import.
void device_fill(const ClEnv &env, cl_mem mem, size_t size, uint8_t value) {
    REQUIRE(clEnqueueFillBuffer(env.queue, mem, &value, 1, 0, size, 0, nullptr, nullptr) == CL_SUCCESS);
}

bool all_are(const std::vector<uint8_t> &v, uint8_t value) {
    for (uint8_t b : v)
        if (b != value) return false;
    return true;
}

}  // namespace

TEST_CASE("[copy-route] READ_WRITE: acquire copies the whole buffer in, release writes it back",
          "[copy-route][kernel]") {
    REQUIRE_DMABUF();
    ClEnv env;
    constexpr size_t N = 64 << 10;
    CopyImport imp(env, N, CL_MEM_READ_WRITE);
    REQUIRE_COPY_ROUTE(imp);
    imp.produce(0x11);
    const LayerStats s0 = layer_stats(env.platform);
    REQUIRE(env.acquire(env.queue, 1, &imp.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(all_are(device_view(env, imp.mem, N), 0x11));
    device_fill(env, imp.mem, N, 0x22);
    REQUIRE(env.release(env.queue, 1, &imp.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    const Moved m = moved_since(s0, layer_stats(env.platform));
    CHECK(m.in == N);
    CHECK(m.out == N);
    CHECK(imp.holds(0x22));
}

TEST_CASE("[copy-route] READ_ONLY: the device's copy is never written back", "[copy-route][kernel]") {
    REQUIRE_DMABUF();
    ClEnv env;
    constexpr size_t N = 64 << 10;
    CopyImport imp(env, N, CL_MEM_READ_ONLY);
    REQUIRE_COPY_ROUTE(imp);
    imp.produce(0x33);
    const LayerStats s0 = layer_stats(env.platform);
    REQUIRE(env.acquire(env.queue, 1, &imp.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(all_are(device_view(env, imp.mem, N), 0x33));
    // The application changes its copy (a host write, legal on a device-read-only
    // buffer); the dma-buf must not receive it on release.
    std::vector<uint8_t> other(N, 0x44);
    REQUIRE(clEnqueueWriteBuffer(env.queue, imp.mem, CL_TRUE, 0, N, other.data(), 0, nullptr, nullptr) ==
            CL_SUCCESS);
    REQUIRE(env.release(env.queue, 1, &imp.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    const Moved m = moved_since(s0, layer_stats(env.platform));
    CHECK(m.in == N);
    CHECK(m.out == 0);
    CHECK(imp.holds(0x33));
}

// A device-read-only import's release writes nothing back: the dma-buf's
// pages were read by its acquire's upload alone, so the release closes the
// CPU bracket at once when that upload is done, whatever the device still
// runs (a camera frame's kernel), and goes through the queue only while the
// upload itself is held.  Counted by the layer's paths, never by a clock.
TEST_CASE("[copy-route] READ_ONLY: release waits for its upload, not for the kernels behind it",
          "[copy-route][handoff][kernel]") {
    REQUIRE_DMABUF();
    ClEnv env;
    constexpr size_t N = 64 << 10;
    CopyImport imp(env, N, CL_MEM_READ_ONLY);
    REQUIRE_COPY_ROUTE(imp);
    imp.produce(0x5a);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    auto paths = [&](const LayerStats &since) {
        const LayerStats now = layer_stats(env.platform);
        return std::pair{now[CL_STATS_FAST_HANDOFFS_CLDMABUF] - since[CL_STATS_FAST_HANDOFFS_CLDMABUF],
                         now[CL_STATS_QUEUED_HANDOFFS_CLDMABUF] - since[CL_STATS_QUEUED_HANDOFFS_CLDMABUF]};
    };
    SECTION("the upload done, the device busy: the release completes its syscalls at once") {
        const LayerStats s0 = layer_stats(env.platform);
        cl_event acq = nullptr, rel = nullptr;
        REQUIRE(env.acquire(env.queue, 1, &imp.mem, 0, nullptr, &acq) == CL_SUCCESS);
        cl_event user = env.make_user_event();
        cl_event busy = nullptr;  // the device's work on the import, not finished yet
        REQUIRE(clEnqueueMarkerWithWaitList(env.queue, 1, &user, &busy) == CL_SUCCESS);
        REQUIRE(clWaitForEvents(1, &acq) == CL_SUCCESS);  // the upload (the acquire's Write) is done
        REQUIRE(env.release(env.queue, 1, &imp.mem, 0, nullptr, &rel) == CL_SUCCESS);
        CHECK(paths(s0) == std::pair{cl_ulong{2}, cl_ulong{0}});
        CHECK(status_of(rel) > CL_COMPLETE);  // its event still follows the busy command
        REQUIRE(clSetUserEventStatus(user, CL_COMPLETE) == CL_SUCCESS);
        REQUIRE(clWaitForEvents(1, &rel) == CL_SUCCESS);
        CHECK(status_of(busy) == CL_COMPLETE);
        REQUIRE(clFinish(env.queue) == CL_SUCCESS);
        CHECK(all_are(device_view(env, imp.mem, N), 0x5a));
        CHECK(imp.holds(0x5a));
        for (cl_event e : {acq, rel, busy, user}) clReleaseEvent(e);
    }
    SECTION("the upload held behind the device's work: the release goes through the queue") {
        cl_event user = env.make_user_event();
        cl_event busy = nullptr;
        REQUIRE(clEnqueueMarkerWithWaitList(env.queue, 1, &user, &busy) == CL_SUCCESS);
        const LayerStats s0 = layer_stats(env.platform);
        cl_event rel = nullptr;
        REQUIRE(env.acquire(env.queue, 1, &imp.mem, 0, nullptr, nullptr) == CL_SUCCESS);  // its Write waits
        REQUIRE(env.release(env.queue, 1, &imp.mem, 0, nullptr, &rel) == CL_SUCCESS);
        CHECK(paths(s0) == std::pair{cl_ulong{1}, cl_ulong{1}});
        CHECK(status_of(rel) > CL_COMPLETE);
        REQUIRE(clSetUserEventStatus(user, CL_COMPLETE) == CL_SUCCESS);
        REQUIRE(clWaitForEvents(1, &rel) == CL_SUCCESS);
        REQUIRE(clFinish(env.queue) == CL_SUCCESS);
        CHECK(all_are(device_view(env, imp.mem, N), 0x5a));
        for (cl_event e : {rel, busy, user}) clReleaseEvent(e);
    }
}

TEST_CASE("[copy-route] WRITE_ONLY: acquire copies nothing in, release writes the device's bytes back",
          "[copy-route][kernel]") {
    REQUIRE_DMABUF();
    ClEnv env;
    constexpr size_t N = 64 << 10;
    CopyImport imp(env, N, CL_MEM_WRITE_ONLY);
    REQUIRE_COPY_ROUTE(imp);
    imp.produce(0x55);  // a frame the device will overwrite: not worth moving
    const LayerStats s0 = layer_stats(env.platform);
    REQUIRE(env.acquire(env.queue, 1, &imp.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    const Moved after_acquire = moved_since(s0, layer_stats(env.platform));
    CHECK(after_acquire.in == 0);
    device_fill(env, imp.mem, N, 0x66);
    REQUIRE(env.release(env.queue, 1, &imp.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    const Moved m = moved_since(s0, layer_stats(env.platform));
    CHECK(m.in == 0);
    CHECK(m.out == N);
    CHECK(imp.holds(0x66));
}

TEST_CASE("[copy-route] host-access flags neither skip the copy-in nor block the write-back", "[copy-route][kernel]") {
    REQUIRE_DMABUF();
    for (cl_mem_flags host : {CL_MEM_HOST_NO_ACCESS, CL_MEM_HOST_READ_ONLY, CL_MEM_HOST_WRITE_ONLY}) {
        INFO("host-access flag 0x" << std::hex << host);
        ClEnv env;
        constexpr size_t N = 64 << 10;
        CopyImport imp(env, N, CL_MEM_READ_WRITE | host);
        REQUIRE_COPY_ROUTE(imp);
        cl_mem_flags seen = 0;
        REQUIRE(clGetMemObjectInfo(imp.mem, CL_MEM_FLAGS, sizeof seen, &seen, nullptr) == CL_SUCCESS);
        CHECK(seen == (CL_MEM_READ_WRITE | host));  // the application's own flags
        imp.produce(0x77);  // after the import: only acquire can bring it to the device
        const LayerStats s0 = layer_stats(env.platform);
        REQUIRE(env.acquire(env.queue, 1, &imp.mem, 0, nullptr, nullptr) == CL_SUCCESS);
        CHECK(all_are(device_view(env, imp.mem, N), 0x77));
        device_fill(env, imp.mem, N, 0x88);
        REQUIRE(env.release(env.queue, 1, &imp.mem, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(clFinish(env.queue) == CL_SUCCESS);
        const Moved m = moved_since(s0, layer_stats(env.platform));
        CHECK(m.in == N);
        CHECK(m.out == N);
        CHECK(imp.holds(0x88));
    }
}

TEST_CASE("[copy-route] transfers take the staging route CLDMABUF_STAGING names, bytes intact across chunks",
          "[copy-route][kernel]") {
    REQUIRE_DMABUF();
    ClEnv env;
    // Not a multiple of the 16 MiB staging chunk, more than two chunks: the
    // pipeline's slot reuse and its short tail.
    constexpr size_t N = (40u << 20) + 4097;
    CopyImport imp(env, N, CL_MEM_READ_WRITE);
    REQUIRE_COPY_ROUTE(imp);
    std::mt19937_64 rng(42);
    for (size_t i = 0; i < N; ++i) imp.view[i] = uint8_t(rng() >> 56);
    const std::vector<uint8_t> produced(imp.view, imp.view + N);
    const LayerStats s0 = layer_stats(env.platform);
    REQUIRE(env.acquire(env.queue, 1, &imp.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    std::vector<uint8_t> seen(N);
    REQUIRE(clEnqueueReadBuffer(env.queue, imp.mem, CL_TRUE, 0, N, seen.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(seen == produced);
    // The device changes a word in every chunk and the tail; release must bring all back.
    std::vector<uint8_t> expect = produced;
    for (size_t off : {size_t(0), size_t(8u << 20) - 2, size_t(16u << 20) + 5, N - 4}) {
        const uint32_t w = 0xa5a5a5a5u ^ uint32_t(off);
        REQUIRE(clEnqueueWriteBuffer(env.queue, imp.mem, CL_FALSE, off, 4, &w, 0, nullptr, nullptr) == CL_SUCCESS);
        std::memcpy(expect.data() + off, &w, 4);
        REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    }
    REQUIRE(env.release(env.queue, 1, &imp.mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(std::memcmp(imp.view, expect.data(), N) == 0);
    const Moved m = moved_since(s0, layer_stats(env.platform));
    CHECK(m.in == N);
    CHECK(m.out == N);
    cl_bool unified = CL_FALSE;
    clGetDeviceInfo(env.device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, nullptr);
    // register, or auto on a device without host-unified memory: a
    // USE_HOST_PTR buffer over a mapping of the dma-buf, the transfers then
    // go direct from it; pinned: the slots.  Both ICDs here accept it.
    const bool registered = env_is("CLDMABUF_STAGING", "register") ||
                            (!env_is("CLDMABUF_STAGING", "off") && !env_is("CLDMABUF_STAGING", "pinned") && !unified);
    const bool pinned = env_is("CLDMABUF_STAGING", "pinned");
    std::printf("[copy-route] staging route here: %s\n",
                pinned ? "pinned" : registered ? "direct from the registered mapping" : "direct");
    if (pinned) {
        CHECK(m.staged == 2 * N);
        CHECK(m.staged_transfers == 2);
        CHECK(m.direct_transfers == 0);
    } else {
        CHECK(m.staged == 0);
        CHECK(m.direct_transfers == 2);
    }
}

// The layer creates a copy-route import's device buffer without the
// host-access flags (its own transfers must be legal); the application is
// still held to them, on every route (zero-copy: the ICD judges; copy: the
// layer, layer/handoff/host_access.cpp).
TEST_CASE("[copy-route] the application's host-access flags hold for its own reads, writes and maps",
          "[copy-route]") {
    REQUIRE_DMABUF();
    ClEnv env;
    constexpr size_t N = 4096;
    std::vector<uint8_t> data(N, 1);
    size_t zero[3] = {0, 0, 0}, region[3] = {16, 2, 1};
    struct Case {
        cl_mem_flags host;
        bool read, write;
    };
    for (const Case c : {Case{CL_MEM_HOST_NO_ACCESS, false, false}, Case{CL_MEM_HOST_READ_ONLY, true, false},
                         Case{CL_MEM_HOST_WRITE_ONLY, false, true}}) {
        INFO("host-access flag 0x" << std::hex << c.host);
        CopyImport imp(env, N, CL_MEM_READ_WRITE | c.host);
        const cl_int r = c.read ? CL_SUCCESS : CL_INVALID_OPERATION;
        const cl_int w = c.write ? CL_SUCCESS : CL_INVALID_OPERATION;
        CHECK(clEnqueueReadBuffer(env.queue, imp.mem, CL_TRUE, 0, N, data.data(), 0, nullptr, nullptr) == r);
        CHECK(clEnqueueWriteBuffer(env.queue, imp.mem, CL_TRUE, 0, N, data.data(), 0, nullptr, nullptr) == w);
        CHECK(clEnqueueReadBufferRect(env.queue, imp.mem, CL_TRUE, zero, zero, region, 0, 0, 0, 0, data.data(), 0,
                                      nullptr, nullptr) == r);
        CHECK(clEnqueueWriteBufferRect(env.queue, imp.mem, CL_TRUE, zero, zero, region, 0, 0, 0, 0, data.data(), 0,
                                       nullptr, nullptr) == w);
        for (cl_map_flags mf : {cl_map_flags(CL_MAP_READ), cl_map_flags(CL_MAP_WRITE)}) {
            cl_int err = CL_SUCCESS;
            void *p = clEnqueueMapBuffer(env.queue, imp.mem, CL_TRUE, mf, 0, N, 0, nullptr, nullptr, &err);
            CHECK(err == (mf == CL_MAP_READ ? r : w));
            if (p) REQUIRE(clEnqueueUnmapMemObject(env.queue, imp.mem, p, 0, nullptr, nullptr) == CL_SUCCESS);
        }
        REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    }
}
