// Importing dma-bufs and using them from kernels, maps and the coherency
// commands: the behaviour a user of cl_khr_external_memory_dma_buf relies on.
#include <catch2/catch_test_macros.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cl_fixture.hpp"
#include "dmabuf_view.hpp"
#include "layer_probe.hpp"
#include "test_dmabufs.hpp"

using namespace e2e;

namespace {

const char *inc_source = R"(
kernel void inc(global uint *buf) { size_t i = get_global_id(0); buf[i] = buf[i] + 1; }
)";


cl_mem import_buffer(const ClEnv &env, Dmabuf &buf, size_t size, cl_mem_flags flags = CL_MEM_READ_WRITE) {
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(buf.fd),
                                       0};
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBufferWithProperties(env.context, props, flags, size, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(mem);
    buf.release_fd();  // the import owns the fd now
    return mem;
}

void run_inc(const ClEnv &env, cl_kernel k, cl_mem mem, size_t count) {
    REQUIRE(clSetKernelArg(k, 0, sizeof mem, &mem) == CL_SUCCESS);
    REQUIRE(clEnqueueNDRangeKernel(env.queue, k, 1, nullptr, &count, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
}

cl_command_type command_type(cl_event ev) {
    cl_command_type t = 0;
    REQUIRE(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof t, &t, nullptr) == CL_SUCCESS);
    return t;
}

cl_int event_status(cl_event ev) {
    cl_int s = 0;
    REQUIRE(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, nullptr) == CL_SUCCESS);
    return s;
}

}  // namespace

TEST_CASE("a kernel reads and writes an imported dma-buf in place, with acquire and release", "[kernel]") {
    REQUIRE_DMABUF();
    ClEnv env;
    const size_t count = 4096;
    Dmabuf buf = make_dmabuf(count * 4);
    DmabufView view(buf);
    view.fill_words(100, count);
    cl_mem mem = import_buffer(env, buf, count * 4);
    // Written after the import: only an in-place (zero-copy) or an acquire-time
    // copy can show this to the kernel.
    view.fill_words(1000, count);
    cl_kernel k = env.build_kernel(inc_source, "inc");

    cl_event acq = nullptr, rel = nullptr;
    REQUIRE(env.acquire(env.queue, 1, &mem, 0, nullptr, &acq) == CL_SUCCESS);
    run_inc(env, k, mem, count);
    REQUIRE(env.release(env.queue, 1, &mem, 0, nullptr, &rel) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(command_type(acq) == CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR);
    CHECK(command_type(rel) == CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR);
    CHECK(event_status(acq) == CL_COMPLETE);
    CHECK(event_status(rel) == CL_COMPLETE);
    cl_command_queue q = nullptr;
    REQUIRE(clGetEventInfo(rel, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, nullptr) == CL_SUCCESS);
    CHECK(q == env.queue);
    // The kernel's writes are in the dma-buf itself: no read-back call.
    CHECK(view.has_words(1001, count));
    clReleaseEvent(acq);
    clReleaseEvent(rel);
    clReleaseKernel(k);
    clReleaseMemObject(mem);
}

TEST_CASE("an import used without acquire/release still gives the right answer (as the CTS test does)", "[kernel]") {
    REQUIRE_DMABUF();
    ClEnv env;
    const size_t count = 1024;
    Dmabuf buf = make_dmabuf(count * 4);
    cl_mem mem = import_buffer(env, buf, count * 4);
    std::vector<uint32_t> data(count);
    for (size_t i = 0; i < count; ++i) data[i] = static_cast<uint32_t>(i * 3);
    REQUIRE(clEnqueueWriteBuffer(env.queue, mem, CL_TRUE, 0, count * 4, data.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    cl_kernel k = env.build_kernel(inc_source, "inc");
    run_inc(env, k, mem, count);
    std::vector<uint32_t> back(count);
    REQUIRE(clEnqueueReadBuffer(env.queue, mem, CL_TRUE, 0, count * 4, back.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    size_t bad = 0;
    for (size_t i = 0; i < count; ++i) bad += back[i] != i * 3 + 1;
    CHECK(bad == 0);
    clReleaseKernel(k);
    clReleaseMemObject(mem);
}

TEST_CASE("mapping an import hands out its contents; writes through the map reach the dma-buf") {
    REQUIRE_DMABUF();
    ClEnv env;
    const size_t count = 2048;
    Dmabuf buf = make_dmabuf(count * 4);
    DmabufView view(buf);
    view.fill_words(7, count);
    cl_mem mem = import_buffer(env, buf, count * 4);
    cl_int err = CL_SUCCESS;
    for (cl_bool blocking : {CL_TRUE, CL_FALSE}) {
        REQUIRE(env.acquire(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
        cl_event mapped = nullptr;
        auto *p = static_cast<uint32_t *>(clEnqueueMapBuffer(env.queue, mem, blocking, CL_MAP_READ | CL_MAP_WRITE, 0,
                                                             count * 4, 0, nullptr, &mapped, &err));
        REQUIRE(err == CL_SUCCESS);
        REQUIRE(p);
        REQUIRE(clWaitForEvents(1, &mapped) == CL_SUCCESS);
        CHECK(command_type(mapped) == CL_COMMAND_MAP_BUFFER);
        clReleaseEvent(mapped);
        CHECK(p[0] == (blocking ? 7u : 50u));
        CHECK(p[count - 1] == (blocking ? 7u : 50u) + count - 1);
        for (size_t i = 0; i < count; ++i) p[i] = 50 + static_cast<uint32_t>(i);
        REQUIRE(clEnqueueUnmapMemObject(env.queue, mem, p, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(env.release(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(clFinish(env.queue) == CL_SUCCESS);
        CHECK(view.has_words(50, count));
    }
    clReleaseMemObject(mem);
}

TEST_CASE("acquire honours its wait list") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = make_dmabuf(4096);
    cl_mem mem = import_buffer(env, buf, 4096);
    cl_event user = env.make_user_event();
    cl_event acq = nullptr;
    REQUIRE(env.acquire(env.queue, 1, &mem, 1, &user, &acq) == CL_SUCCESS);
    usleep(100 * 1000);
    CHECK(event_status(acq) != CL_COMPLETE);  // held back by the user event
    REQUIRE(clSetUserEventStatus(user, CL_COMPLETE) == CL_SUCCESS);
    REQUIRE(clWaitForEvents(1, &acq) == CL_SUCCESS);
    CHECK(event_status(acq) == CL_COMPLETE);
    REQUIRE(env.release(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    clReleaseEvent(acq);
    clReleaseEvent(user);
    clReleaseMemObject(mem);
}

TEST_CASE("queries show the object as the application created it") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = make_dmabuf(8192);
    const int fd = buf.fd;
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(fd),
                                       CL_MEM_DEVICE_HANDLE_LIST_KHR, reinterpret_cast<cl_mem_properties>(env.device),
                                       CL_MEM_DEVICE_HANDLE_LIST_END_KHR, 0};
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_ONLY, 8000, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    buf.release_fd();
    std::vector<cl_mem_properties> got(16);
    size_t bytes = 0;
    REQUIRE(clGetMemObjectInfo(mem, CL_MEM_PROPERTIES, got.size() * sizeof(cl_mem_properties), got.data(), &bytes) ==
            CL_SUCCESS);
    got.resize(bytes / sizeof(cl_mem_properties));
    CHECK(got == std::vector<cl_mem_properties>(props, props + 6));
    cl_mem_flags flags = 0;
    REQUIRE(clGetMemObjectInfo(mem, CL_MEM_FLAGS, sizeof flags, &flags, nullptr) == CL_SUCCESS);
    CHECK(flags == CL_MEM_READ_ONLY);
    void *host = reinterpret_cast<void *>(1);
    REQUIRE(clGetMemObjectInfo(mem, CL_MEM_HOST_PTR, sizeof host, &host, nullptr) == CL_SUCCESS);
    CHECK(host == nullptr);
    size_t size = 0;
    REQUIRE(clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, nullptr) == CL_SUCCESS);
    CHECK(size == 8000);
    clReleaseMemObject(mem);
}

namespace {
std::atomic<int> destructor_calls{0};
void CL_CALLBACK count_destructor(cl_mem, void *) { ++destructor_calls; }
// Destructor callbacks may run on an ICD thread a little after the release.
bool wait_for_destructors(int n) { return eventually([n] { return destructor_calls >= n; }) && destructor_calls == n; }
}  // namespace

TEST_CASE("releasing the last reference closes the fd and unmaps; destructor callbacks still run", "[maps]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = make_dmabuf(1 << 20);
    const int fd = buf.fd;
    // Warm the ICD up so its own lazily created fds/mappings don't count,
    // and wait until that import is really gone (ICDs may destroy lazily).
    destructor_calls = 0;
    {
        Dmabuf warm = make_dmabuf(4096);
        cl_mem m = import_buffer(env, warm, 4096);
        REQUIRE(clSetMemObjectDestructorCallback(m, count_destructor, nullptr) == CL_SUCCESS);
        REQUIRE(env.acquire(env.queue, 1, &m, 0, nullptr, nullptr) == CL_SUCCESS);  // starts the layer's worker
        REQUIRE(env.release(env.queue, 1, &m, 0, nullptr, nullptr) == CL_SUCCESS);
        clReleaseMemObject(m);
        REQUIRE(clFinish(env.queue) == CL_SUCCESS);
        REQUIRE(wait_for_destructors(1));
    }
    const int fds_before = settled_fds();
    const int maps_before = unparked_mappings();
    cl_mem mem = import_buffer(env, buf, 1 << 20);
    CHECK(count_mappings() > maps_before);  // the layer's mapping of the dma-buf
    destructor_calls = 0;
    REQUIRE(clSetMemObjectDestructorCallback(mem, count_destructor, nullptr) == CL_SUCCESS);
    cl_int err = CL_SUCCESS;
    cl_buffer_region region{4096, 8192};
    cl_mem sub = clCreateSubBuffer(mem, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(clReleaseMemObject(mem) == CL_SUCCESS);
    CHECK(fd_is_open(fd));  // the sub-buffer still holds the parent
    // The sub-buffer does not show the layer's mapping either.
    void *host = reinterpret_cast<void *>(1);
    REQUIRE(clGetMemObjectInfo(sub, CL_MEM_HOST_PTR, sizeof host, &host, nullptr) == CL_SUCCESS);
    CHECK(host == nullptr);
    cl_mem_flags sub_flags = 0;
    REQUIRE(clGetMemObjectInfo(sub, CL_MEM_FLAGS, sizeof sub_flags, &sub_flags, nullptr) == CL_SUCCESS);
    CHECK((sub_flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR)) == 0);
    // A sub-buffer of an import can be acquired and released like its parent.
    REQUIRE(env.acquire(env.queue, 1, &sub, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(env.release(env.queue, 1, &sub, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    REQUIRE(clReleaseMemObject(sub) == CL_SUCCESS);
    CHECK(wait_for_destructors(1));
    // The application's callback runs before the layer's (callbacks run in
    // reverse order of registration), and NVIDIA and NEO run them on their
    // own threads, later than PoCL: poll (bounded) for the layer's part.
    CHECK(eventually([&] { return !fd_is_open(fd); }));
    // The dma-buf fd went with the object.  "<=": an exporter may drop its own
    // fds too when the last reference goes (the virtual Gen9's memfd does).
    // A mapping the cache parked (one fd, one mapping, by design) is not the
    // import's: left out (layer/dmabuf/mapping_cache.hpp).
    CHECK(eventually([&] { return unparked_fds() <= fds_before - 1; }));
    CHECK(eventually([&] { return unparked_mappings() <= maps_before; }));
}
