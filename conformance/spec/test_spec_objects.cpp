// O*: imported objects as OpenCL memory objects (sub-buffers, migration,
// queries, lifetime), and D*: the statements of cl_khr_external_memory_dma_buf
// about the fd ("Descriptions of External Memory Handle Types").
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <chrono>
#include <thread>

#include "spec_common.hpp"

using namespace spec;

namespace {

bool wait_until(const std::function<bool()> &cond, int timeout_ms = 5000) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (!cond()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
}

struct Destroyed {
    std::atomic<int> calls{0};
    std::atomic<int> order{0};
};
void CL_CALLBACK count_destroyed(cl_mem, void *p) { static_cast<Destroyed *>(p)->calls++; }

}  // namespace

// ------------------------------------------------------------------ queries

// CL_MEM_HOST_PTR returns host_ptr only for CL_MEM_USE_HOST_PTR objects; an
// import's host_ptr "must be NULL", so the query answers NULL.  CL_MEM_SIZE
// and CL_MEM_FLAGS are what the application passed.
TEST_CASE("O1: an import reports its size and flags, and a NULL CL_MEM_HOST_PTR", "[spec][objects]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = e2e::make_dmabuf(16384);
    cl_mem mem = import_buffer(env.context, buf, 8192, {}, CL_MEM_READ_ONLY);
    size_t size = 0;
    cl_mem_flags flags = 0;
    void *host = reinterpret_cast<void *>(1);
    cl_context ctx = nullptr;
    REQUIRE(clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, nullptr) == CL_SUCCESS);
    REQUIRE(clGetMemObjectInfo(mem, CL_MEM_FLAGS, sizeof flags, &flags, nullptr) == CL_SUCCESS);
    REQUIRE(clGetMemObjectInfo(mem, CL_MEM_HOST_PTR, sizeof host, &host, nullptr) == CL_SUCCESS);
    REQUIRE(clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof ctx, &ctx, nullptr) == CL_SUCCESS);
    CHECK(size == 8192);
    CHECK(flags == CL_MEM_READ_ONLY);
    CHECK(host == nullptr);
    CHECK(ctx == env.context);
    clReleaseMemObject(mem);
}

// ------------------------------------------------------------- sub-buffers

// clCreateSubBuffer works on any buffer, an import included; the sub-buffer
// aliases the import's storage (the dma-buf), and CL_MEM_PROPERTIES of a
// sub-buffer has size 0 ("If memobj was created using ... clCreateSubBuffer
// ... must return param_value_size_ret equal to 0").
TEST_CASE("O2: a sub-buffer of an import aliases the dma-buf at its origin", "[spec][objects][subbuffer]") {
    REQUIRE_DMABUF();
    ClEnv env;
    cl_uint align_bits = 0;
    REQUIRE(clGetDeviceInfo(env.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, nullptr) ==
            CL_SUCCESS);
    const size_t origin = std::max<size_t>(align_bits / 8, 4096);
    Dmabuf buf = e2e::make_dmabuf(origin + 8192);
    const size_t total = buf.size;
    Mapping view(buf);
    fill_pattern(view.bytes(), total, 5);
    cl_mem parent = import_buffer(env.context, buf);
    cl_buffer_region region{origin, 4096};
    cl_int err = CL_SUCCESS;
    cl_mem sub = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem assoc = nullptr;
    size_t offset = 0, props_bytes = 99;
    REQUIRE(clGetMemObjectInfo(sub, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof assoc, &assoc, nullptr) == CL_SUCCESS);
    REQUIRE(clGetMemObjectInfo(sub, CL_MEM_OFFSET, sizeof offset, &offset, nullptr) == CL_SUCCESS);
    REQUIRE(clGetMemObjectInfo(sub, CL_MEM_PROPERTIES, 0, nullptr, &props_bytes) == CL_SUCCESS);
    CHECK(assoc == parent);
    CHECK(offset == origin);
    CHECK(props_bytes == 0);

    REQUIRE(env.acquire(env.queue, 1, &parent, 0, nullptr, nullptr) == CL_SUCCESS);
    std::vector<unsigned char> seen(4096), want(total);
    REQUIRE(clEnqueueReadBuffer(env.queue, sub, CL_TRUE, 0, 4096, seen.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    fill_pattern(want.data(), total, 5);
    CHECK(std::memcmp(seen.data(), want.data() + origin, 4096) == 0);
    std::vector<unsigned char> ones(4096, 0xA5);
    REQUIRE(clEnqueueWriteBuffer(env.queue, sub, CL_TRUE, 0, 4096, ones.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    release_and_wait(env, env.queue, parent);
    CHECK(std::memcmp(view.bytes() + origin, ones.data(), 4096) == 0);
    CHECK(std::memcmp(view.bytes(), want.data(), origin) == 0);  // outside the sub-buffer: untouched
    CHECK(std::memcmp(view.bytes() + origin + 4096, want.data() + origin + 4096, total - origin - 4096) == 0);
    clReleaseMemObject(sub);
    clReleaseMemObject(parent);
}

// A sub-buffer keeps its parent alive (core: "memobj ... is deleted once the
// reference count becomes zero and commands queued ... that use memobj have
// finished"; a sub-buffer holds a reference on its parent): the import's fd
// stays with OpenCL until the sub-buffer goes too.
TEST_CASE("O3: a sub-buffer keeps the import (and its fd) alive after the parent's last release",
          "[spec][objects][subbuffer]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = e2e::make_dmabuf(8192);
    const int fd = buf.fd;
    cl_mem parent = import_buffer(env.context, buf);
    cl_buffer_region region{0, 4096};
    cl_int err = CL_SUCCESS;
    cl_mem sub = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    REQUIRE(err == CL_SUCCESS);
    Destroyed d;
    REQUIRE(clSetMemObjectDestructorCallback(parent, count_destroyed, &d) == CL_SUCCESS);
    REQUIRE(clReleaseMemObject(parent) == CL_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(d.calls == 0);
    CHECK(e2e::fd_is_open(fd));
    REQUIRE(clReleaseMemObject(sub) == CL_SUCCESS);
    CHECK(wait_until([&] { return d.calls == 1; }));
    CHECK(wait_until([&] { return !e2e::fd_is_open(fd); }));
}

// -------------------------------------------------------------- migration

// clEnqueueMigrateMemObjects applies to any memory object; the spec's
// acquire/release sample relies on "Migration of extMem1 and extMem2 handles
// through regular CL memory migration".  Migration keeps the contents
// (without CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED).
TEST_CASE("O4: clEnqueueMigrateMemObjects on an acquired import succeeds and keeps its contents",
          "[spec][objects][migrate]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = e2e::make_dmabuf(8192);
    const size_t n = buf.size;
    Mapping view(buf);
    fill_pattern(view.bytes(), n, 17);
    cl_mem mem = import_buffer(env.context, buf);
    REQUIRE(env.acquire(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    cl_event ev = nullptr;
    REQUIRE(clEnqueueMigrateMemObjects(env.queue, 1, &mem, CL_MIGRATE_MEM_OBJECT_HOST, 0, nullptr, &ev) ==
            CL_SUCCESS);
    CHECK(event_type(ev) == CL_COMMAND_MIGRATE_MEM_OBJECTS);
    clReleaseEvent(ev);
    REQUIRE(clEnqueueMigrateMemObjects(env.queue, 1, &mem, 0, 0, nullptr, nullptr) == CL_SUCCESS);
    std::vector<unsigned char> seen(n);
    REQUIRE(clEnqueueReadBuffer(env.queue, mem, CL_TRUE, 0, n, seen.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(has_pattern(seen.data(), n, 17));
    release_and_finish(env, env.queue, mem);
    CHECK(has_pattern(view.bytes(), n, 17));
    clReleaseMemObject(mem);
}

// Between two listed devices, as in the sample: acquire on cq1, migrate to
// device 2, read there, release on cq2.
TEST_CASE("O5: migrating an import between two listed devices keeps its contents",
          "[spec][objects][migrate][subdevices]") {
    REQUIRE_DMABUF();
    ClEnv env;
    SubDevices sd(env.device);
    REQUIRE_SUBDEVICES(sd);
    SubDeviceContext two(env.platform, sd);
    cl_command_queue q0 = two.q[0], q1 = two.q[1];
    Dmabuf buf = e2e::make_dmabuf(4096);
    const size_t n = buf.size;
    Mapping view(buf);
    fill_pattern(view.bytes(), n, 23);
    cl_mem mem = import_buffer(two.ctx, buf);
    cl_event acq = nullptr, mig = nullptr;
    REQUIRE(env.acquire(q0, 1, &mem, 0, nullptr, &acq) == CL_SUCCESS);
    REQUIRE(clEnqueueMigrateMemObjects(q1, 1, &mem, 0, 1, &acq, &mig) == CL_SUCCESS);
    std::vector<unsigned char> seen(n);
    REQUIRE(clEnqueueReadBuffer(q1, mem, CL_TRUE, 0, n, seen.data(), 1, &mig, nullptr) == CL_SUCCESS);
    CHECK(has_pattern(seen.data(), n, 23));
    release_and_finish(env, q1, mem);
    REQUIRE(clFinish(q0) == CL_SUCCESS);
    clReleaseEvent(acq);
    clReleaseEvent(mig);
    clReleaseMemObject(mem);
}

// --------------------------------------------------------------- lifetime

// Core clReleaseMemObject: "After the memobj reference count becomes zero and
// commands queued ... have finished, the memory object is deleted" and the
// destructor callbacks are called (in reverse order of registration).  For
// an fd import the implementation owns the fd (see D1), so it goes too.
TEST_CASE("O6: the last release destroys the import: destructor callbacks run (last registered first), the fd goes",
          "[spec][objects][lifetime]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = e2e::make_dmabuf(8192);
    const int fd = buf.fd;
    cl_mem mem = import_buffer(env.context, buf);
    struct Order {
        std::atomic<int> next{0};
        int first = -1, second = -1;
    } order;
    auto cb_a = [](cl_mem, void *p) {
        auto *o = static_cast<Order *>(p);
        o->first = o->next++;
    };
    auto cb_b = [](cl_mem, void *p) {
        auto *o = static_cast<Order *>(p);
        o->second = o->next++;
    };
    REQUIRE(clSetMemObjectDestructorCallback(mem, cb_a, &order) == CL_SUCCESS);
    REQUIRE(clSetMemObjectDestructorCallback(mem, cb_b, &order) == CL_SUCCESS);
    REQUIRE(clRetainMemObject(mem) == CL_SUCCESS);
    REQUIRE(clReleaseMemObject(mem) == CL_SUCCESS);  // one reference left
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(order.next == 0);
    CHECK(e2e::fd_is_open(fd));
    REQUIRE(clReleaseMemObject(mem) == CL_SUCCESS);
    CHECK(wait_until([&] { return order.next == 2; }));
    CHECK(order.second == 0);  // registered last, called first
    CHECK(order.first == 1);
    CHECK(wait_until([&] { return !e2e::fd_is_open(fd); }));
}

// An import's last release while an acquire is still queued behind a gate:
// "commands queued to a command-queue that use memobj have finished" first.
TEST_CASE("O7: an import released while its acquire is pending is destroyed only after the command",
          "[spec][objects][lifetime]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = e2e::make_dmabuf(4096);
    const int fd = buf.fd;
    cl_mem mem = import_buffer(env.context, buf);
    Destroyed d;
    REQUIRE(clSetMemObjectDestructorCallback(mem, count_destroyed, &d) == CL_SUCCESS);
    cl_event gate = user_event(env.context);
    cl_event acq = nullptr, rel = nullptr;
    REQUIRE(env.acquire(env.queue, 1, &mem, 1, &gate, &acq) == CL_SUCCESS);
    REQUIRE(env.release(env.queue, 1, &mem, 1, &acq, &rel) == CL_SUCCESS);
    REQUIRE(clReleaseMemObject(mem) == CL_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    CHECK(d.calls == 0);
    CHECK(e2e::fd_is_open(fd));
    REQUIRE(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS);
    CHECK(wait_status(rel) == CL_COMPLETE);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(wait_until([&] { return d.calls == 1; }));
    CHECK(wait_until([&] { return !e2e::fd_is_open(fd); }));
    clReleaseEvent(acq);
    clReleaseEvent(rel);
    clReleaseEvent(gate);
}

// "Applications can import the same payload into multiple OpenCL contexts and
// multiple times into a given OpenCL context. In all cases, each import
// operation must create a distinct memory object."
TEST_CASE("O8: importing one payload twice in a context and into another context gives distinct objects on the same memory",
          "[spec][objects]") {
    REQUIRE_DMABUF();
    ClEnv env;
    cl_context other = make_context(env.platform, {env.device});
    cl_command_queue oq = make_queue(other, env.device);
    Dmabuf buf = e2e::make_dmabuf(4096);
    Dmabuf dup1, dup2;
    dup1.fd = buf.dup_fd();
    dup1.size = buf.size;
    dup2.fd = buf.dup_fd();
    dup2.size = buf.size;
    cl_mem a = import_buffer(env.context, buf);
    cl_mem b = import_buffer(env.context, dup1);
    cl_mem c = import_buffer(other, dup2);
    CHECK(a != b);
    CHECK(a != c);
    CHECK(b != c);
    // Write through a; b and c (same payload) see it after their own acquire.
    std::vector<unsigned char> data(4096);
    fill_pattern(data.data(), 4096, 31);
    REQUIRE(env.acquire(env.queue, 1, &a, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clEnqueueWriteBuffer(env.queue, a, CL_TRUE, 0, 4096, data.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    release_and_finish(env, env.queue, a);
    std::vector<unsigned char> seen = acquire_and_read(env, env.queue, b, 4096);
    release_and_finish(env, env.queue, b);
    CHECK(has_pattern(seen.data(), 4096, 31));
    seen = acquire_and_read(env, oq, c, 4096);
    release_and_finish(env, oq, c);
    CHECK(has_pattern(seen.data(), 4096, 31));
    for (cl_mem m : {a, b, c}) clReleaseMemObject(m);
    clReleaseCommandQueue(oq);
    clReleaseContext(other);
}

// ---------------------------------------------------------- dma_buf / fds

// "importing memory from a file descriptor transfers ownership of the file
// descriptor from the application to the OpenCL implementation. The
// application must not perform any operations on the file descriptor after a
// successful import."  The implementation keeps the fd while the object lives
// and disposes of it with the object; no fd is left over once it is gone.
TEST_CASE("D1: a successful import takes ownership of the fd; the implementation closes it with the object",
          "[spec][dmabuf][lifetime]") {
    REQUIRE_DMABUF();
    ClEnv env;
    {  // warm-up: whatever an import opens once (and keeps) is open before counting
        Dmabuf warm = e2e::make_dmabuf(4096);
        const int warm_fd = warm.fd;
        clReleaseMemObject(import_buffer(env.context, warm));
        REQUIRE(wait_until([&] { return !e2e::fd_is_open(warm_fd); }));
    }
    Dmabuf buf = e2e::make_dmabuf(4096);
    const int fd = buf.fd;
    const int fds_with_buf = e2e::count_open_fds();
    cl_mem mem = import_buffer(env.context, buf);  // buf forgets the fd: OpenCL owns it now
    CHECK(e2e::fd_is_open(fd));
    REQUIRE(clReleaseMemObject(mem) == CL_SUCCESS);
    CHECK(wait_until([&] { return !e2e::fd_is_open(fd); }));
    // Nothing the import opened is left behind.  (<=: on the virtual Gen9 the
    // emulated GEM object's own backing memfd goes with its last dma-buf too.)
    // Waited for: an ICD's own threads (Mesa's shader disk cache) may hold a
    // file of theirs open for a moment.
    CHECK(wait_until([&] { return e2e::count_open_fds() <= fds_with_buf - 1; }));
}

// The same statement's other half: a *failed* import transfers nothing — the
// fd stays the application's (C* tests check it after every refusal); here
// the fd is even usable for a retry.
TEST_CASE("D2: after a failed import the fd is still the application's and can be imported again",
          "[spec][dmabuf]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = e2e::make_dmabuf(4096);
    CHECK(create_error(env.context, {kDmaBuf, fd_prop(buf.fd), 0}, 4096, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR) ==
          CL_INVALID_VALUE);
    REQUIRE(e2e::fd_is_open(buf.fd));
    cl_mem mem = import_buffer(env.context, buf);
    clReleaseMemObject(mem);
}

// "It owns a reference to the underlying memory resource represented by its
// memory object." / "The imported memory object holds a reference to its
// payload."  With every application-side reference gone, the object's memory
// is still there.
TEST_CASE("D3: the import holds a reference to the payload after the application dropped all of its own",
          "[spec][dmabuf]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = e2e::make_dmabuf(8192);
    const size_t n = buf.size;
    {
        Mapping view(buf);
        fill_pattern(view.bytes(), n, 41);
    }
    Dmabuf mine;
    mine.fd = buf.dup_fd();  // what the application imports
    mine.size = n;
    cl_mem mem = import_buffer(env.context, mine);
    buf.reset();  // the application's last own reference to the dma-buf
    const std::vector<unsigned char> seen = acquire_and_read(env, env.queue, mem, n);
    CHECK(has_pattern(seen.data(), n, 41));
    release_and_finish(env, env.queue, mem);
    clReleaseMemObject(mem);
}

// cl_khr_external_memory_dma_buf: "Once a memory object created from a dma_buf
// has been acquired ..., all access, including host access should be done
// through OpenCL, until a call to clEnqueueReleaseExternalMemObjectsKHR has
// completed."  Host access through OpenCL (map/unmap) works while acquired and
// its writes are in the dma-buf once the release completed.
TEST_CASE("D4: host access through OpenCL (map/unmap) while acquired reaches the dma-buf after release",
          "[spec][dmabuf][data]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = e2e::make_dmabuf(4096);
    const size_t n = buf.size;
    Mapping view(buf);
    fill_pattern(view.bytes(), n, 51);
    cl_mem mem = import_buffer(env.context, buf);
    REQUIRE(env.acquire(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    cl_int err = CL_SUCCESS;
    auto *p = static_cast<unsigned char *>(
        clEnqueueMapBuffer(env.queue, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, n, 0, nullptr, nullptr, &err));
    REQUIRE(err == CL_SUCCESS);
    CHECK(has_pattern(p, n, 51));
    fill_pattern(p, n, 52);
    REQUIRE(clEnqueueUnmapMemObject(env.queue, mem, p, 0, nullptr, nullptr) == CL_SUCCESS);
    release_and_wait(env, env.queue, mem);
    CHECK(has_pattern(view.bytes(), n, 52));
    clReleaseMemObject(mem);
}

// CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR "is a file descriptor for a Linux
// dma_buf": importing part of it (size below the dma-buf's) is a buffer of
// that size over the dma-buf's first bytes.
TEST_CASE("D5: an import smaller than the dma-buf covers its first size bytes", "[spec][dmabuf][data]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = e2e::make_dmabuf(16384);
    Mapping view(buf);
    fill_pattern(view.bytes(), buf.size, 61);
    cl_mem mem = import_buffer(env.context, buf, 4096);
    const std::vector<unsigned char> seen = acquire_and_read(env, env.queue, mem, 4096);
    CHECK(has_pattern(seen.data(), 4096, 61));
    release_and_finish(env, env.queue, mem);
    clReleaseMemObject(mem);
}
