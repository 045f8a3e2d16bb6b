// Every refusal the spec names, with the fd left to the application.
#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cl_fixture.hpp"
#include "test_dmabufs.hpp"
#include "layer_probe.hpp"

using namespace e2e;

namespace {

cl_int try_import(const ClEnv &env, const std::vector<cl_mem_properties> &props, cl_mem_flags flags = CL_MEM_READ_WRITE,
                  size_t size = 4096, void *host_ptr = nullptr) {
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBufferWithProperties(env.context, props.data(), flags, size, host_ptr, &err);
    if (mem) clReleaseMemObject(mem);
    if (mem && err == CL_SUCCESS) return 1;  // "succeeded": never expected below
    return err;
}

cl_mem_properties handle(int fd) { return static_cast<cl_mem_properties>(fd); }
const cl_mem_properties DMABUF = CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR;

}  // namespace

TEST_CASE("fds that are not dma-bufs are refused with CL_INVALID_PROPERTY and stay open") {
    ClEnv env;
    const int fds_before = settled_fds();

    SECTION("fd -1") { CHECK(try_import(env, {DMABUF, static_cast<cl_mem_properties>(-1), 0}) == CL_INVALID_PROPERTY); }
    SECTION("a closed fd") {
        int fd = open("/dev/null", O_RDONLY);
        close(fd);
        CHECK(try_import(env, {DMABUF, handle(fd), 0}) == CL_INVALID_PROPERTY);
    }
    SECTION("a regular file") {
        char path[] = "/tmp/cldmabuf-e2e-XXXXXX";
        int fd = mkstemp(path);
        unlink(path);
        REQUIRE(ftruncate(fd, 8192) == 0);
        CHECK(try_import(env, {DMABUF, handle(fd), 0}) == CL_INVALID_PROPERTY);
        CHECK(fd_is_open(fd));
        close(fd);
    }
    SECTION("a memfd") {
        int fd = memfd_create("not-a-dmabuf", MFD_CLOEXEC);
        REQUIRE(ftruncate(fd, 8192) == 0);
        CHECK(try_import(env, {DMABUF, handle(fd), 0}) == CL_INVALID_PROPERTY);
        CHECK(fd_is_open(fd));
        close(fd);
    }
    SECTION("a pipe") {
        int p[2];
        REQUIRE(pipe(p) == 0);
        CHECK(try_import(env, {DMABUF, handle(p[0]), 0}) == CL_INVALID_PROPERTY);
        CHECK(fd_is_open(p[0]));
        close(p[0]);
        close(p[1]);
    }
    SECTION("a socket") {
        int s = socket(AF_UNIX, SOCK_STREAM, 0);
        CHECK(try_import(env, {DMABUF, handle(s), 0}) == CL_INVALID_PROPERTY);
        CHECK(fd_is_open(s));
        close(s);
    }
    CHECK(open_fds_toward(fds_before) == fds_before);
}

TEST_CASE("malformed property lists are refused with CL_INVALID_PROPERTY") {
    ClEnv env;
    int fd = memfd_create("x", MFD_CLOEXEC);  // never reached: the list is rejected first
    SECTION("two handles") {
        CHECK(try_import(env, {DMABUF, handle(fd), DMABUF, handle(fd), 0}) == CL_INVALID_PROPERTY);
    }
    SECTION("two handle types") {
        CHECK(try_import(env, {DMABUF, handle(fd), 0x2060 /* OPAQUE_FD */, handle(fd), 0}) == CL_INVALID_PROPERTY);
    }
    SECTION("an unsupported handle type") {
        // One that neither the ICD nor the layer lists (NVIDIA lists OPAQUE_FD).
        const cl_mem_properties unlisted = unlisted_handle_type(env.device);
        INFO("handle type 0x" << std::hex << unlisted);
        CHECK(try_import(env, {unlisted, handle(fd), 0}) == CL_INVALID_PROPERTY);
    }
    SECTION("a device list without a handle") {
        CHECK(try_import(env, {CL_MEM_DEVICE_HANDLE_LIST_KHR, reinterpret_cast<cl_mem_properties>(env.device),
                               CL_MEM_DEVICE_HANDLE_LIST_END_KHR, 0}) == CL_INVALID_PROPERTY);
    }
    SECTION("an empty device list") {
        CHECK(try_import(env, {DMABUF, handle(fd), CL_MEM_DEVICE_HANDLE_LIST_KHR, CL_MEM_DEVICE_HANDLE_LIST_END_KHR,
                               0}) == CL_INVALID_PROPERTY);
    }
    CHECK(fd_is_open(fd));
    close(fd);
}

TEST_CASE("flags, host_ptr, size and devices are checked against a real dma-buf", "[maps]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = make_dmabuf(16384);
    const int fds_before = settled_fds();
    const int maps_before = settled_mappings();
    char host[64];

    SECTION("USE_HOST_PTR") {
        CHECK(try_import(env, {DMABUF, handle(buf.fd), 0}, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, 4096, host) ==
              CL_INVALID_VALUE);
    }
    SECTION("ALLOC_HOST_PTR") {
        CHECK(try_import(env, {DMABUF, handle(buf.fd), 0}, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR) ==
              CL_INVALID_VALUE);
    }
    SECTION("COPY_HOST_PTR") {
        CHECK(try_import(env, {DMABUF, handle(buf.fd), 0}, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4096, host) ==
              CL_INVALID_VALUE);
    }
    SECTION("a host_ptr") {
        CHECK(try_import(env, {DMABUF, handle(buf.fd), 0}, CL_MEM_READ_WRITE, 4096, host) == CL_INVALID_HOST_PTR);
    }
    SECTION("size 0") { CHECK(try_import(env, {DMABUF, handle(buf.fd), 0}, CL_MEM_READ_WRITE, 0) == CL_INVALID_BUFFER_SIZE); }
    SECTION("a size larger than the dma-buf") {
        CHECK(try_import(env, {DMABUF, handle(buf.fd), 0}, CL_MEM_READ_WRITE, buf.size + 1) == CL_INVALID_BUFFER_SIZE);
    }
    SECTION("a listed device that is not in the context") {
        cl_device_id bogus = reinterpret_cast<cl_device_id>(0x1000);
        CHECK(try_import(env, {DMABUF, handle(buf.fd), CL_MEM_DEVICE_HANDLE_LIST_KHR,
                               reinterpret_cast<cl_mem_properties>(bogus), CL_MEM_DEVICE_HANDLE_LIST_END_KHR, 0}) ==
              CL_INVALID_DEVICE);
    }
    SECTION("an unknown property next to a handle reaches the ICD, which refuses it") {
        CHECK(try_import(env, {DMABUF, handle(buf.fd), 0x7fff1234, 1, 0}) == CL_INVALID_PROPERTY);
    }
    SECTION("invalid flags reach the ICD and nothing is left behind") {
        CHECK(try_import(env, {DMABUF, handle(buf.fd), 0}, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY) == CL_INVALID_VALUE);
    }
    CHECK(fd_is_open(buf.fd));  // a failed import leaves the fd with the application
    CHECK(open_fds_toward(fds_before) == fds_before);
    CHECK(settled_mappings() == maps_before);
}

TEST_CASE("acquire and release refuse what was not imported") {
    ClEnv env;
    REQUIRE(env.acquire);
    cl_int err = CL_SUCCESS;
    cl_mem plain = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 64, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    if (icd_has_own_external_memory(env.device)) {
        // A plain buffer is the ICD's object, and acquire/release of it is the
        // ICD's to answer (NVIDIA 580 returns CL_SUCCESS; the spec says
        // CL_INVALID_MEM_OBJECT): the layer passes it on, whatever it is.
        const cl_int a = env.acquire(env.queue, 1, &plain, 0, nullptr, nullptr);
        const cl_int r = env.release(env.queue, 1, &plain, 0, nullptr, nullptr);
        WARN("the ICD's own acquire/release of a plain buffer answered " << a << " / " << r);
        CHECK((a == CL_INVALID_MEM_OBJECT || a == CL_SUCCESS));
        CHECK((r == CL_INVALID_MEM_OBJECT || r == CL_SUCCESS));
        REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    } else {
        CHECK(env.acquire(env.queue, 1, &plain, 0, nullptr, nullptr) == CL_INVALID_MEM_OBJECT);
        CHECK(env.release(env.queue, 1, &plain, 0, nullptr, nullptr) == CL_INVALID_MEM_OBJECT);
    }
    CHECK(env.acquire(env.queue, 1, nullptr, 0, nullptr, nullptr) == CL_INVALID_VALUE);
    CHECK(env.acquire(env.queue, 0, &plain, 0, nullptr, nullptr) == CL_INVALID_VALUE);
    CHECK(env.acquire(env.queue, 0, nullptr, 1, nullptr, nullptr) == CL_INVALID_EVENT_WAIT_LIST);
    CHECK(env.acquire(nullptr, 0, nullptr, 0, nullptr, nullptr) == CL_INVALID_COMMAND_QUEUE);
    // No objects at all succeeds trivially, with an event of the right type.
    cl_event ev = nullptr;
    REQUIRE(env.acquire(env.queue, 0, nullptr, 0, nullptr, &ev) == CL_SUCCESS);
    REQUIRE(clWaitForEvents(1, &ev) == CL_SUCCESS);
    cl_command_type type = 0;
    REQUIRE(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr) == CL_SUCCESS);
    CHECK(type == CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR);
    clReleaseEvent(ev);
    clReleaseMemObject(plain);
}
