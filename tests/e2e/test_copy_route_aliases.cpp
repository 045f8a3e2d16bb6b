// The copy route with two imports of one dma-buf (issue #32; the CTS-style
// external_memory_dma_buf_import_twice found it): each import holds its own
// device copy, and a release must write back only what its device changed
// since its acquire (layer/handoff/alias_merge.hpp), so that one import's
// unchanged copy never undoes the other's writes.  Every way a release goes
// is covered: the fast path (idle queue), the queued path (a wait list), a
// buffer past the fast path's 1 MiB (staging where CLDMABUF_STAGING asks
// for it: meson's e2e-sim-copy, -copy-pinned and -copy-register run this
// file), and an image with a padded row pitch.  Checked by content (the
// test's own mapping of the dma-buf) and by the layer's counter of merges
// (CL_STATS_ALIAS_MERGES_CLDMABUF).  Skipped where imports take the
// zero-copy route (there both imports are the one dma-buf's pages).  Tagged
// [kernel]: the checks need the ICD's transfers executed (not on NEO in AUB
// mode, where image imports take the copy route but nothing runs).
#include <catch2/catch_test_macros.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "cl_fixture.hpp"
#include "image_import.hpp"
#include "layer_probe.hpp"
#include "needs_dmabuf.hpp"
#include "test_dmabufs.hpp"

using namespace e2e;

namespace {

// One dma-buf, the test's CPU view of it, and `n` imports of it (each from
// its own dup of the fd, which the import owns).
struct AliasedImports {
    Dmabuf buf;
    size_t size;
    uint8_t *view = nullptr;
    std::vector<cl_mem> mems;
    std::vector<int> fds;  // each import's fd (the import closes it at its teardown)

    AliasedImports(const ClEnv &env, size_t sz, int n) : buf(make_dmabuf(sz)), size(sz) {
        void *v = mmap(nullptr, sz, PROT_READ | PROT_WRITE, MAP_SHARED, buf.fd, 0);
        REQUIRE(v != MAP_FAILED);
        view = static_cast<uint8_t *>(v);
        for (int i = 0; i < n; ++i) add_import(env);
    }
    // One more import of the dma-buf, at the end of `mems`.
    cl_mem add_import(const ClEnv &env) {
        const int fd = dup(buf.fd);
        REQUIRE(fd >= 0);
        const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(fd),
                                           0};
        cl_int err = CL_SUCCESS;
        cl_mem m = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, size, nullptr, &err);
        if (err != CL_SUCCESS) close(fd);
        REQUIRE(err == CL_SUCCESS);
        mems.push_back(m);
        fds.push_back(fd);
        return m;
    }
    ~AliasedImports() {
        for (cl_mem m : mems) clReleaseMemObject(m);
        munmap(view, size);
    }
    bool copy_route() const {
        cl_uint route = 99;
        clGetMemObjectInfo(mems[0], CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, sizeof route, &route, nullptr);
        return route == CL_DMA_BUF_ROUTE_COPY_CLDMABUF;
    }
    cl_uint count() const { return static_cast<cl_uint>(mems.size()); }
};

#define REQUIRE_COPY_ROUTE(imp)                                                 \
    do {                                                                        \
        if (!(imp).copy_route()) SKIP("imports take the zero-copy route here"); \
    } while (0)

// Skips where the imports take the zero-copy route, else fills the dma-buf
// with `value` through the test's own mapping (the producer's bytes).
void on_copy_route_filled(AliasedImports &imp, uint8_t value) {
    REQUIRE_COPY_ROUTE(imp);
    std::memset(imp.view, value, imp.size);
}

void write_range(const ClEnv &env, cl_mem mem, size_t offset, size_t len, uint8_t value) {
    std::vector<uint8_t> bytes(len, value);
    REQUIRE(clEnqueueWriteBuffer(env.queue, mem, CL_TRUE, offset, len, bytes.data(), 0, nullptr, nullptr) ==
            CL_SUCCESS);
}

bool range_is(const uint8_t *p, size_t offset, size_t len, uint8_t value) {
    for (size_t i = offset; i < offset + len; ++i)
        if (p[i] != value) return false;
    return true;
}

// Whether the dma-buf holds exactly `ranges` (offset, length, value) over `background`.
struct Range {
    size_t offset, len;
    uint8_t value;
};
bool holds_only(const AliasedImports &imp, const std::vector<Range> &ranges, uint8_t background) {
    for (size_t i = 0; i < imp.size; ++i) {
        uint8_t want = background;
        for (const Range &r : ranges)
            if (i >= r.offset && i < r.offset + r.len) want = r.value;
        if (imp.view[i] != want) return false;
    }
    return true;
}

cl_ulong merges(const ClEnv &env) { return layer_stats(env.platform)[CL_STATS_ALIAS_MERGES_CLDMABUF]; }

// A case's set-up: `n` imports of one `size`-byte dma-buf the producer filled
// with `fill` (skipped off the copy route), and the merges counted before.
struct AliasCase : NeedsDmabuf {
    ClEnv env;
    AliasedImports imp;
    cl_ulong m0;
    AliasCase(size_t size, int n, uint8_t fill) : imp(env, size, n) {
        on_copy_route_filled(imp, fill);
        m0 = merges(env);
    }
};

// Acquire all, `writes` through some, release all (with `wait` as the
// release's wait list when given: the queued path), then check the dma-buf.
struct Write {
    int import;
    size_t offset, len;
    uint8_t value;
};
void cycle(const ClEnv &env, AliasedImports &imp, const std::vector<Write> &writes, cl_event wait = nullptr) {
    REQUIRE(env.acquire(env.queue, imp.count(), imp.mems.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    for (const Write &w : writes) write_range(env, imp.mems[w.import], w.offset, w.len, w.value);
    REQUIRE(env.release(env.queue, imp.count(), imp.mems.data(), wait ? 1 : 0, wait ? &wait : nullptr, nullptr) ==
            CL_SUCCESS);
    if (wait) REQUIRE(clSetUserEventStatus(wait, CL_COMPLETE) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
}

}  // namespace

// cl_khr_external_memory, clEnqueueReleaseExternalMemObjectsKHR: after it
// "the state of memory objects is up-to-date ... outside of OpenCL".  Two
// imports of one dma-buf are one memory outside OpenCL.
TEST_CASE("[copy-route] two imports of one dma-buf: the write through the first survives the second's release",
          "[copy-route][alias][kernel]") {
    constexpr size_t N = 8192;
    AliasCase c(N, 2, 0x11);
    auto &[env, imp, m0] = c;
    SECTION("released in import order") { cycle(env, imp, {{0, 0, N, 0x22}}); }
    SECTION("released in the other order") {
        std::swap(imp.mems[0], imp.mems[1]);
        cycle(env, imp, {{1, 0, N, 0x22}});
    }
    CHECK(range_is(imp.view, 0, N, 0x22));
    CHECK(merges(env) - m0 == 2);  // both releases merged
    // And the second import sees it on its next acquire.
    REQUIRE(env.acquire(env.queue, imp.count(), imp.mems.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    std::vector<uint8_t> seen(N);
    REQUIRE(clEnqueueReadBuffer(env.queue, imp.mems[1], CL_TRUE, 0, N, seen.data(), 0, nullptr, nullptr) ==
            CL_SUCCESS);
    REQUIRE(env.release(env.queue, imp.count(), imp.mems.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(range_is(seen.data(), 0, N, 0x22));
}

TEST_CASE("[copy-route] two imports of one dma-buf writing different bytes: both writes and the untouched bytes stay",
          "[copy-route][alias][kernel]") {
    constexpr size_t N = 64 << 10;
    AliasCase c(N, 3, 0x5a);
    auto &[env, imp, m0] = c;
    // Byte-exact: the writes meet at odd offsets inside one 64-byte block.
    const std::vector<Write> writes = {{0, 0, 1001, 0x01}, {1, 1001, 3, 0x02}, {2, 1004, 5000, 0x03}};
    SECTION("fast path (idle queue)") { cycle(env, imp, writes); }
    SECTION("queued path (a wait list)") {
        cl_int err = CL_SUCCESS;
        cl_event gate = clCreateUserEvent(env.context, &err);
        REQUIRE(err == CL_SUCCESS);
        cycle(env, imp, writes, gate);
        clReleaseEvent(gate);
    }
    CHECK(holds_only(imp, {{0, 1001, 0x01}, {1001, 3, 0x02}, {1004, 5000, 0x03}}, 0x5a));
}

TEST_CASE("[copy-route] two imports of one dma-buf past the fast path's 1 MiB: the write survives",
          "[copy-route][alias][kernel]") {
    constexpr size_t N = 3 << 20;
    AliasCase c(N, 2, 0x10);
    auto &[env, imp, m0] = c;
    cycle(env, imp, {{0, N / 2, N / 4, 0x44}, {1, 0, 4096, 0x55}});
    CHECK(holds_only(imp, {{0, 4096, 0x55}, {N / 2, N / 4, 0x44}}, 0x10));
    CHECK(merges(env) - m0 == 2);
}

// A CPU write between two cycles (the producer's, outside OpenCL) is what the
// next acquire uploads; a release that changed nothing writes nothing back.
TEST_CASE("[copy-route] two imports of one dma-buf, a release that changed nothing leaves the producer's bytes",
          "[copy-route][alias][kernel]") {
    constexpr size_t N = 16384;
    AliasCase c(N, 2, 0x01);
    auto &[env, imp, m0] = c;
    cycle(env, imp, {});
    CHECK(range_is(imp.view, 0, N, 0x01));
    std::memset(imp.view, 0x02, N);  // the producer, between the cycles
    cycle(env, imp, {{1, 0, 100, 0x03}});
    CHECK(range_is(imp.view, 0, 100, 0x03));
    CHECK(range_is(imp.view, 100, N - 100, 0x02));
}

// One import alone on its dma-buf is written back whole, as before: no merge.
TEST_CASE("[copy-route] an import alone on its dma-buf is written back whole", "[copy-route][alias][kernel]") {
    constexpr size_t N = 8192;
    AliasCase c(N, 1, 0x07);
    auto &[env, imp, m0] = c;
    cycle(env, imp, {{0, 0, N, 0x08}});
    CHECK(range_is(imp.view, 0, N, 0x08));
    CHECK(merges(env) == m0);
}

TEST_CASE("[copy-route] two image imports of one dma-buf: a region written through one, padding and the rest kept",
          "[copy-route][alias][image][kernel]") {
    REQUIRE_DMABUF();
    ClEnv env;
    if (!device_has_images(env)) SKIP("the device has no image support");
    constexpr size_t W = 64, H = 32, elem = 4, pitch = 512;  // 256 bytes of pixels, 256 of padding per row
    constexpr size_t N = pitch * H;
    Dmabuf buf = make_dmabuf(N);
    void *v = mmap(nullptr, N, PROT_READ | PROT_WRITE, MAP_SHARED, buf.fd, 0);
    REQUIRE(v != MAP_FAILED);
    auto *view = static_cast<uint8_t *>(v);
    std::memset(view, 0x66, N);
    const cl_image_format format{CL_RGBA, CL_UNSIGNED_INT8};
    cl_mem images[2] = {};
    for (cl_mem &im : images) {
        const int fd = dup(buf.fd);
        REQUIRE(fd >= 0);
        cl_int err = CL_SUCCESS;
        im = import_image2d(env, {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(fd)},
                            {W, H, pitch, 0}, {}, format, CL_MEM_READ_WRITE, &err);
        if (err != CL_SUCCESS) close(fd);
        REQUIRE(err == CL_SUCCESS);
    }
    cl_uint route = 99;
    clGetMemObjectInfo(images[0], CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, sizeof route, &route, nullptr);
    if (route != CL_DMA_BUF_ROUTE_COPY_CLDMABUF) {
        for (cl_mem im : images) clReleaseMemObject(im);
        munmap(view, N);
        SKIP("image imports take the zero-copy route here");
    }
    const cl_ulong m0 = merges(env);
    REQUIRE(env.acquire(env.queue, 2, images, 0, nullptr, nullptr) == CL_SUCCESS);
    const size_t origin[3] = {8, 4, 0}, region[3] = {16, 8, 1};
    std::vector<uint8_t> px(region[0] * region[1] * elem, 0x77);
    REQUIRE(clEnqueueWriteImage(env.queue, images[0], CL_TRUE, origin, region, 0, 0, px.data(), 0, nullptr,
                                nullptr) == CL_SUCCESS);
    REQUIRE(env.release(env.queue, 2, images, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    size_t wrong = 0;
    for (size_t y = 0; y < H; ++y)
        for (size_t x = 0; x < pitch; ++x) {
            const bool in = y >= 4 && y < 12 && x >= 8 * elem && x < 24 * elem;
            wrong += view[y * pitch + x] != (in ? 0x77 : 0x66);
        }
    CHECK(wrong == 0);
    CHECK(merges(env) - m0 == 2);
    for (cl_mem im : images) clReleaseMemObject(im);
    munmap(view, N);
}

// The alias ends with the other import's teardown: the import left alone on
// its dma-buf is written back whole again (its count went down).
TEST_CASE("[copy-route] once the second import is released, the first is written back whole again",
          "[copy-route][alias][kernel]") {
    constexpr size_t N = 8192;
    AliasCase c(N, 2, 0x31);
    auto &[env, imp, m0] = c;
    cycle(env, imp, {{0, 0, N, 0x32}});
    REQUIRE(clReleaseMemObject(imp.mems[1]) == CL_SUCCESS);
    imp.mems.pop_back();
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    // Its teardown, which ends the alias, may come a while after the release
    // (NVIDIA destroys objects later); it closes the import's fd.
    REQUIRE(closes_soon(imp.fds[1]));
    const cl_ulong m1 = merges(env);
    cycle(env, imp, {{0, 0, N, 0x33}});
    CHECK(range_is(imp.view, 0, N, 0x33));
    CHECK(merges(env) == m1);
}

// An import made while the first one is acquired: the first's acquire ran
// while it was alone on its dma-buf, so it kept nothing to merge against
// then; the new import must not lose its write to the first's release (nor
// the first's to the new one's), in either order of the releases and on the
// queued path.  The layer snapshots the acquired import when the alias
// appears (layer/handoff/alias_merge.hpp, "late aliases").
TEST_CASE("[copy-route] an import made while another of its dma-buf is acquired: both writes survive",
          "[copy-route][alias][kernel]") {
    constexpr size_t N = 16384;
    AliasCase c(N, 1, 0x11);
    auto &[env, imp, m0] = c;
    cl_mem first = imp.mems[0];
    REQUIRE(env.acquire(env.queue, 1, &first, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);  // its upload ran, alone on the dma-buf
    cl_mem late = imp.add_import(env);
    REQUIRE(env.acquire(env.queue, 1, &late, 0, nullptr, nullptr) == CL_SUCCESS);
    write_range(env, first, 0, 1024, 0xa1);
    write_range(env, late, 4096, 1024, 0xb2);
    auto release = [&](cl_mem m, cl_event wait) {
        REQUIRE(env.release(env.queue, 1, &m, wait ? 1 : 0, wait ? &wait : nullptr, nullptr) == CL_SUCCESS);
    };
    SECTION("the late import released first") {
        release(late, nullptr);
        REQUIRE(clFinish(env.queue) == CL_SUCCESS);
        release(first, nullptr);
    }
    SECTION("the first import released first") {
        release(first, nullptr);
        REQUIRE(clFinish(env.queue) == CL_SUCCESS);
        release(late, nullptr);
    }
    SECTION("both releases queued behind a wait list, the late one first") {
        cl_event gate = env.make_user_event();
        release(late, gate);
        release(first, nullptr);
        REQUIRE(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS);
        clReleaseEvent(gate);
    }
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(holds_only(imp, {{0, 1024, 0xa1}, {4096, 1024, 0xb2}}, 0x11));
    CHECK(merges(env) - m0 == 2);
}

// The releases enqueued before the acquires ran (all of it behind one user
// event): what a release does is decided when it is enqueued, what the
// acquire uploads when it runs.  Both imports' writes must survive.
TEST_CASE("[copy-route] two imports of one dma-buf, released before their acquires ran: both writes survive",
          "[copy-route][alias][kernel]") {
    constexpr size_t N = 16384;
    AliasCase c(N, 2, 0x21);
    auto &[env, imp, m0] = c;
    cl_event gate = env.make_user_event();
    REQUIRE(env.acquire(env.queue, imp.count(), imp.mems.data(), 1, &gate, nullptr) == CL_SUCCESS);
    const std::vector<uint8_t> a(2048, 0xc1), b(2048, 0xd2);
    REQUIRE(clEnqueueWriteBuffer(env.queue, imp.mems[0], CL_FALSE, 0, a.size(), a.data(), 0, nullptr, nullptr) ==
            CL_SUCCESS);
    REQUIRE(clEnqueueWriteBuffer(env.queue, imp.mems[1], CL_FALSE, 8192, b.size(), b.data(), 0, nullptr,
                                 nullptr) == CL_SUCCESS);
    SECTION("one release call each, the second import's first") {
        REQUIRE(env.release(env.queue, 1, &imp.mems[1], 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(env.release(env.queue, 1, &imp.mems[0], 0, nullptr, nullptr) == CL_SUCCESS);
    }
    SECTION("one release call for both") {
        REQUIRE(env.release(env.queue, imp.count(), imp.mems.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    }
    REQUIRE(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS);
    clReleaseEvent(gate);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(holds_only(imp, {{0, 2048, 0xc1}, {8192, 2048, 0xd2}}, 0x21));
    CHECK(merges(env) - m0 == 2);
}

// Pipelined: two cycles through one import enqueued behind a user event
// before either ran, the other import alive and idle.  Each release command
// has its own write-back (layer/handoff/copy_cycle.hpp); with one per
// import, the first release's finish switched the second's merge off and
// every byte of the second write was lost.
TEST_CASE("[copy-route] two cycles through one import enqueued before either ran: the second write stays",
          "[copy-route][alias][kernel]") {
    constexpr size_t N = 16384;
    AliasCase c(N, 2, 0x11);
    auto &[env, imp, m0] = c;
    cl_int err = CL_SUCCESS;
    cl_event gate = clCreateUserEvent(env.context, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem x = imp.mems[0];
    std::vector<uint8_t> v1(N, 0x21), v2(N, 0x22);
    bool out_of_order = false;
    SECTION("in-order queue") {}
    SECTION("out-of-order queue, each command waiting for the one before") { out_of_order = true; }
    cl_command_queue q = env.queue;
    if (out_of_order) {
        const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
        q = clCreateCommandQueueWithProperties(env.context, env.device, props, &err);
        if (err != CL_SUCCESS) SKIP("no out-of-order queue on this device");
    }
    // Every command waits for the one before (an out-of-order queue runs nothing in order by itself).
    cl_event last = gate;
    clRetainEvent(last);
    auto chained = [&](auto &&enqueue) {
        cl_event e = nullptr;
        REQUIRE(enqueue(1, &last, &e) == CL_SUCCESS);
        clReleaseEvent(last);
        last = e;
    };
    for (const auto *v : {&v1, &v2}) {
        chained([&](cl_uint n, const cl_event *w, cl_event *e) { return env.acquire(q, 1, &x, n, w, e); });
        chained([&](cl_uint n, const cl_event *w, cl_event *e) {
            return clEnqueueWriteBuffer(q, x, CL_FALSE, 0, N, v->data(), n, w, e);
        });
        chained([&](cl_uint n, const cl_event *w, cl_event *e) { return env.release(q, 1, &x, n, w, e); });
    }
    REQUIRE(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS);
    REQUIRE(clFinish(q) == CL_SUCCESS);
    CHECK(clWaitForEvents(1, &last) == CL_SUCCESS);
    clReleaseEvent(last);
    clReleaseEvent(gate);
    if (q != env.queue) clReleaseCommandQueue(q);
    CHECK(range_is(imp.view, 0, N, 0x22));
    CHECK(merges(env) - m0 == 2);
}
