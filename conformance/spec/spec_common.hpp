// Helpers shared by the specification tests (conformance/spec/).
//
// Each test in this directory checks one normative statement of
// cl_khr_external_memory (rev 1.0.1) or cl_khr_external_memory_dma_buf
// (rev 1.0.0), as written in OpenCL-Docs api/opencl_runtime_layer.asciidoc,
// api/opencl_platform_layer.asciidoc and xml/cl.xml.  Test names start with a
// statement id (Q*, P*, C*, A*, E*, O*, D*) that README.md maps back to the
// text.
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cl_fixture.hpp"
#include "event_info.hpp"
#include "test_dmabufs.hpp"

namespace spec {

using e2e::ClEnv;
using e2e::Dmabuf;

constexpr cl_mem_properties kDmaBuf = CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR;
constexpr cl_mem_properties kOpaqueFd = 0x2060;  // CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR (not offered)
constexpr cl_mem_properties kDeviceList = CL_MEM_DEVICE_HANDLE_LIST_KHR;
constexpr cl_mem_properties kDeviceListEnd = CL_MEM_DEVICE_HANDLE_LIST_END_KHR;

inline cl_mem_properties fd_prop(int fd) { return static_cast<cl_mem_properties>(fd); }
inline cl_mem_properties dev_prop(cl_device_id d) { return reinterpret_cast<cl_mem_properties>(d); }

// clCreateBufferWithProperties; returns the object (or nullptr) and the error.
struct Created {
    cl_mem mem = nullptr;
    cl_int err = CL_SUCCESS;
};
inline Created create(cl_context ctx, const std::vector<cl_mem_properties> &props, size_t size,
                      cl_mem_flags flags = CL_MEM_READ_WRITE, void *host_ptr = nullptr) {
    Created c;
    c.err = CL_SUCCESS;
    c.mem = clCreateBufferWithProperties(ctx, props.data(), flags, size, host_ptr, &c.err);
    return c;
}

// A create that must fail: returns the error (1 for "it succeeded").  An
// unexpected success took the fd; releasing the object closes it, so the fd
// number is put back (a dup of it) for its Dmabuf to close later — a wrong
// answer must not make the test close someone else's fd.
cl_int create_error(cl_context ctx, const std::vector<cl_mem_properties> &props, size_t size,
                    cl_mem_flags flags = CL_MEM_READ_WRITE, void *host_ptr = nullptr);

// Imports the whole dma-buf; on success the fd belongs to OpenCL (the spec's
// ownership transfer), so `buf` forgets it.
inline cl_mem import_buffer(cl_context ctx, Dmabuf &buf, size_t size = 0,
                            std::vector<cl_mem_properties> extra = {}, cl_mem_flags flags = CL_MEM_READ_WRITE) {
    std::vector<cl_mem_properties> props{kDmaBuf, fd_prop(buf.fd)};
    props.insert(props.end(), extra.begin(), extra.end());
    props.push_back(0);
    Created c = create(ctx, props, size ? size : buf.size, flags);
    INFO("clCreateBufferWithProperties error " << c.err);
    REQUIRE(c.err == CL_SUCCESS);
    REQUIRE(c.mem != nullptr);
    buf.release_fd();
    return c.mem;
}

// CPU view of a dma-buf (mmap of the fd), for checks from "the other API".
struct Mapping {
    void *ptr = nullptr;
    size_t size = 0;
    explicit Mapping(const Dmabuf &buf) : ptr(cldmabuf::test::map(buf)), size(buf.size) {}
    ~Mapping() { cldmabuf::test::unmap(ptr, size); }
    Mapping(const Mapping &) = delete;
    Mapping &operator=(const Mapping &) = delete;
    unsigned char *bytes() const { return static_cast<unsigned char *>(ptr); }
};

inline void fill_pattern(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>((i * 131u + seed) & 0xff);
}
inline bool has_pattern(const unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; ++i)
        if (p[i] != static_cast<unsigned char>((i * 131u + seed) & 0xff)) return false;
    return true;
}

// The e2e suite's event queries (tests/e2e/event_info.hpp), under the names
// the spec tests use.
inline cl_int event_status(cl_event e) { return e2e::status_of(e); }
inline cl_command_type event_type(cl_event e) { return e2e::type_of(e); }
// Polls until the event reaches CL_COMPLETE or an error, at most timeout_ms.
cl_int wait_status(cl_event e, int timeout_ms = 5000);

// Two sub-devices of the fixture's device (partitioned equally, one compute
// unit each), for the statements about several devices; empty if the device
// cannot be partitioned.
//
// The ICD defect behind the sub-device cases P3, C8b, A5, A6 and A17: PoCL
// (3.1 and 6) answers CL_CONTEXT_DEVICES of a context created from
// sub-devices with the parent device (the "ICD: CL_CONTEXT_DEVICES ..." test
// shows it, without the layer too; it keeps [!mayfail] for that reason
// alone).  The layer validates CL_MEM_DEVICE_HANDLE_LIST_KHR and queues
// against the devices each context was created with
// (layer/core/context_devices.hpp), so the five pass on PoCL 6 in the VM.
// The host lane leaves [subdevices] to the VM lane (meson.build: PoCL 3.1
// crashes now and then in POclReleaseEvent with them in the run).
struct SubDevices {
    std::vector<cl_device_id> devices;
    explicit SubDevices(cl_device_id parent);
    ~SubDevices();
    SubDevices(const SubDevices &) = delete;
    SubDevices &operator=(const SubDevices &) = delete;
    bool ok() const { return devices.size() >= 2; }
};

#define REQUIRE_SUBDEVICES(sd) \
    do {                       \
        if (!(sd).ok()) SKIP("the device cannot be partitioned into two sub-devices"); \
    } while (0)

cl_context make_context(cl_platform_id platform, const std::vector<cl_device_id> &devices);
cl_command_queue make_queue(cl_context ctx, cl_device_id dev, cl_command_queue_properties props = 0);

// A context over the two sub-devices with one queue on each (q[0] on
// sd.devices[0], q[1] on sd.devices[1]); the queues and the context are
// released when it goes out of scope.
struct SubDeviceContext {
    cl_context ctx = nullptr;
    cl_command_queue q[2] = {nullptr, nullptr};
    SubDeviceContext(cl_platform_id platform, const SubDevices &sd);
    ~SubDeviceContext();
    SubDeviceContext(const SubDeviceContext &) = delete;
    SubDeviceContext &operator=(const SubDeviceContext &) = delete;
};

// A user event of ctx (CL_SUBMITTED until the test sets its status).
inline cl_event user_event(cl_context ctx) {
    cl_int err = CL_SUCCESS;
    cl_event e = clCreateUserEvent(ctx, &err);
    REQUIRE(err == CL_SUCCESS);
    return e;
}

// Acquires mem on q, then reads its first n bytes back (blocking read); both
// must succeed.
inline std::vector<unsigned char> acquire_and_read(const ClEnv &env, cl_command_queue q, cl_mem mem, size_t n) {
    REQUIRE(env.acquire(q, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    std::vector<unsigned char> seen(n);
    REQUIRE(clEnqueueReadBuffer(q, mem, CL_TRUE, 0, n, seen.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    return seen;
}

// Releases mem on q and finishes q; both must succeed.
inline void release_and_finish(const ClEnv &env, cl_command_queue q, cl_mem mem) {
    REQUIRE(env.release(q, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(q) == CL_SUCCESS);
}

// Releases mem on q and waits for the release command's event to complete
// (not just for the call to return); both must succeed.
inline void release_and_wait(const ClEnv &env, cl_command_queue q, cl_mem mem) {
    cl_event rel = nullptr;
    REQUIRE(env.release(q, 1, &mem, 0, nullptr, &rel) == CL_SUCCESS);
    REQUIRE(clWaitForEvents(1, &rel) == CL_SUCCESS);
    clReleaseEvent(rel);
}

// Checks that acquiring and then releasing mem on q (no wait list, event
// NULL), and finishing q, succeed.
inline void check_acquire_release(const ClEnv &env, cl_command_queue q, cl_mem mem) {
    CHECK(env.acquire(q, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(env.release(q, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(clFinish(q) == CL_SUCCESS);
}

// A context and queue of their own on env's device, one 4 KiB import in that
// context and one user event (`gate`), for tests whose command may stay stuck
// behind a failed event: such a test abandons all of it rather than wait, so
// nothing is released unless it calls finish_and_release().
struct AbandonableImport {
    cl_context ctx = nullptr;
    cl_command_queue q = nullptr;
    Dmabuf buf;
    cl_mem mem = nullptr;
    cl_event gate = nullptr;
    explicit AbandonableImport(const ClEnv &env);
    // clFinish(q), then releases gate, mem, q and ctx.
    void finish_and_release();
};

// The acquire/release entry points as a pair, for tests that check both.
struct AcqRel {
    const char *name;
    clEnqueueAcquireExternalMemObjectsKHR_fn fn;
};
std::vector<AcqRel> both_functions(const ClEnv &env);

}  // namespace spec
