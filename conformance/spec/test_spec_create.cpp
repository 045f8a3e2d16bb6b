// P*: property rules and C*: the error list of clCreateBufferWithProperties
// for external memory (api/opencl_runtime_layer.asciidoc, clCreateBuffer /
// clCreateBufferWithProperties, "ifdef::cl_khr_external_memory[]" parts).
//
// Every refusal also checks that the fd is still the application's: the
// ownership transfer is only for a *successful* import.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include "spec_common.hpp"

using namespace spec;

// ---------------------------------------------------------------- properties

// CL_MEM_PROPERTIES: "the implementation must return the values specified in
// the properties argument in the same order and without including additional
// properties."
TEST_CASE("P1: CL_MEM_PROPERTIES of an import returns the list as given, in order, nothing added",
          "[spec][properties]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = e2e::make_dmabuf(8192);
    const int fd = buf.fd;
    std::vector<cl_mem_properties> given;
    SECTION("handle only") { given = {kDmaBuf, fd_prop(fd), 0}; }
    SECTION("device list first, then the handle") {
        given = {kDeviceList, dev_prop(env.device), kDeviceListEnd, kDmaBuf, fd_prop(fd), 0};
    }
    SECTION("handle, then device list") {
        given = {kDmaBuf, fd_prop(fd), kDeviceList, dev_prop(env.device), kDeviceListEnd, 0};
    }
    Created c = create(env.context, given, buf.size);
    REQUIRE(c.err == CL_SUCCESS);
    buf.release_fd();
    size_t bytes = 0;
    REQUIRE(clGetMemObjectInfo(c.mem, CL_MEM_PROPERTIES, 0, nullptr, &bytes) == CL_SUCCESS);
    CHECK(bytes == given.size() * sizeof(cl_mem_properties));
    std::vector<cl_mem_properties> got(bytes / sizeof(cl_mem_properties));
    REQUIRE(clGetMemObjectInfo(c.mem, CL_MEM_PROPERTIES, bytes, got.data(), nullptr) == CL_SUCCESS);
    CHECK(got == given);
    clReleaseMemObject(c.mem);
}

// "If CL_MEM_DEVICE_HANDLE_LIST_KHR is not specified as part of properties, the
// memory object ... is by default associated with all devices in the context."
TEST_CASE("P2: without a device handle list the import is usable on every device of the context",
          "[spec][properties][subdevices]") {
    REQUIRE_DMABUF();
    ClEnv env;
    SubDevices sd(env.device);
    REQUIRE_SUBDEVICES(sd);
    SubDeviceContext two(env.platform, sd);
    Dmabuf buf = e2e::make_dmabuf(4096);
    cl_mem mem = import_buffer(two.ctx, buf);
    for (cl_command_queue q : two.q) check_acquire_release(env, q, mem);
    clReleaseMemObject(mem);
}

// Not a statement of the extension: the ICD's own answer, which the
// sub-device statements (P3, C8b, A5, A6, A17) would rest on if the layer
// took a context's devices from the ICD.  clGetContextInfo, CL_CONTEXT_DEVICES:
// "Return the list of devices and sub-devices in context."
// [!mayfail] is the ICD's defect, shown without the layer (the layer does not
// touch this query): PoCL 3.1 and PoCL 6 answer a context of two sub-devices
// with CL_CONTEXT_NUM_DEVICES 1 and the parent device.  Run it bare with
//   env -u OPENCL_LAYERS spec-tests "ICD: CL_CONTEXT_DEVICES*"
// (docs/conformance.md, "The sub-device cases").
TEST_CASE("ICD: CL_CONTEXT_DEVICES of a context of sub-devices lists those sub-devices",
          "[spec][icd][subdevices][!mayfail]") {
    ClEnv env;
    SubDevices sd(env.device);
    REQUIRE_SUBDEVICES(sd);
    cl_context ctx = make_context(env.platform, sd.devices);
    cl_uint n = 0;
    CHECK(clGetContextInfo(ctx, CL_CONTEXT_NUM_DEVICES, sizeof n, &n, nullptr) == CL_SUCCESS);
    CHECK(n == 2);
    size_t bytes = 0;
    CHECK(clGetContextInfo(ctx, CL_CONTEXT_DEVICES, 0, nullptr, &bytes) == CL_SUCCESS);
    std::vector<cl_device_id> listed(bytes / sizeof(cl_device_id));
    if (!listed.empty())
        CHECK(clGetContextInfo(ctx, CL_CONTEXT_DEVICES, bytes, listed.data(), nullptr) == CL_SUCCESS);
    INFO("the parent device is " << static_cast<void *>(env.device));
    CHECK(listed == sd.devices);
    clReleaseContext(ctx);
}

// CL_MEM_DEVICE_HANDLE_LIST_KHR: "Specifies the list of OpenCL devices
// (terminated with CL_MEM_DEVICE_HANDLE_LIST_END_KHR) to associate with the
// external memory handle."  A list naming every device is accepted.
// PoCL (3.1 and 6) reports the parent device in CL_CONTEXT_DEVICES of a sub-device context
// (the ICD test below shows it); the layer keeps the devices the context was created with
// (layer/core/context_devices.hpp), so this passes there too.
TEST_CASE("P3: a device handle list naming the context's devices is accepted",
          "[spec][properties][subdevices]") {
    REQUIRE_DMABUF();
    ClEnv env;
    SubDevices sd(env.device);
    REQUIRE_SUBDEVICES(sd);
    cl_context ctx = make_context(env.platform, sd.devices);
    Dmabuf buf = e2e::make_dmabuf(4096);
    cl_mem mem = import_buffer(ctx, buf, 0,
                               {kDeviceList, dev_prop(sd.devices[0]), dev_prop(sd.devices[1]), kDeviceListEnd});
    CHECK(mem != nullptr);
    clReleaseMemObject(mem);
    clReleaseContext(ctx);
}

// ------------------------------------------------------ CL_INVALID_PROPERTY

// "if properties does not include a supported external memory handle and
// CL_MEM_DEVICE_HANDLE_LIST_KHR is specified as part of properties"
TEST_CASE("C1: CL_INVALID_PROPERTY for a device handle list without an external memory handle",
          "[spec][create]") {
    ClEnv env;
    CHECK(create_error(env.context, {kDeviceList, dev_prop(env.device), kDeviceListEnd, 0}, 4096) ==
          CL_INVALID_PROPERTY);
}

// rev 1.0.1: "if properties includes more than one external memory handle"
TEST_CASE("C2: CL_INVALID_PROPERTY when more than one external memory handle is given", "[spec][create]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf a = e2e::make_dmabuf(4096);
    Dmabuf b = e2e::make_dmabuf(4096);
    SECTION("two dma-buf handles") {
        CHECK(create_error(env.context, {kDmaBuf, fd_prop(a.fd), kDmaBuf, fd_prop(b.fd), 0}, 4096) ==
              CL_INVALID_PROPERTY);
    }
    SECTION("a dma-buf handle and a handle of another type") {
        CHECK(create_error(env.context, {kDmaBuf, fd_prop(a.fd), kOpaqueFd, fd_prop(b.fd), 0}, 4096) ==
              CL_INVALID_PROPERTY);
    }
    CHECK(e2e::fd_is_open(a.fd));
    CHECK(e2e::fd_is_open(b.fd));
}

// "if the same property name is specified more than once"
TEST_CASE("C3: CL_INVALID_PROPERTY when CL_MEM_DEVICE_HANDLE_LIST_KHR is given twice", "[spec][create]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf a = e2e::make_dmabuf(4096);
    CHECK(create_error(env.context,
                       {kDmaBuf, fd_prop(a.fd), kDeviceList, dev_prop(env.device), kDeviceListEnd, kDeviceList,
                        dev_prop(env.device), kDeviceListEnd, 0},
                       4096) == CL_INVALID_PROPERTY);
    CHECK(e2e::fd_is_open(a.fd));
}

// "if a property name in properties is not a supported property name": a
// handle type the platform does not list is not a supported property name.
TEST_CASE("C4: CL_INVALID_PROPERTY for an external memory handle type that is not supported",
          "[spec][create]") {
    ClEnv env;
    int fd = memfd_create("spec-c4", MFD_CLOEXEC);
    REQUIRE(fd >= 0);
    REQUIRE(ftruncate(fd, 4096) == 0);
    // Types neither the ICD nor the layer lists (NVIDIA lists OPAQUE_FD).
    const auto listed = e2e::import_handle_types(env.device);
    int checked = 0;
    for (cl_mem_properties type : {cl_mem_properties(kOpaqueFd), cl_mem_properties(0x2061) /* OPAQUE_WIN32 */,
                                   cl_mem_properties(0x2062) /* OPAQUE_WIN32_KMT */}) {
        if (std::find(listed.begin(), listed.end(), type) != listed.end()) continue;
        INFO("handle type 0x" << std::hex << type);
        CHECK(create_error(env.context, {type, fd_prop(fd), 0}, 4096) == CL_INVALID_PROPERTY);
        ++checked;
    }
    CHECK(checked >= 2);
    CHECK(e2e::fd_is_open(fd));
    close(fd);
}

// "if a property name in properties is not a supported property name" (next
// to a valid dma-buf handle).
TEST_CASE("C5: CL_INVALID_PROPERTY for an unknown property name next to a dma-buf handle", "[spec][create]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf a = e2e::make_dmabuf(4096);
    CHECK(create_error(env.context, {kDmaBuf, fd_prop(a.fd), 0x7ff0dead, 1, 0}, 4096) == CL_INVALID_PROPERTY);
    CHECK(e2e::fd_is_open(a.fd));
}

// "if the value specified for a supported property name is not valid": a
// CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR value must be "a file descriptor for a
// Linux dma_buf".
TEST_CASE("C6: CL_INVALID_PROPERTY when the DMA_BUF value is not a dma-buf fd", "[spec][create]") {
    ClEnv env;
    SECTION("-1") { CHECK(create_error(env.context, {kDmaBuf, fd_prop(-1), 0}, 4096) == CL_INVALID_PROPERTY); }
    SECTION("a closed fd") {
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        close(fd);
        CHECK(create_error(env.context, {kDmaBuf, fd_prop(fd), 0}, 4096) == CL_INVALID_PROPERTY);
    }
    SECTION("a memfd (mappable, but not a dma-buf)") {
        int fd = memfd_create("spec-c6", MFD_CLOEXEC);
        REQUIRE(ftruncate(fd, 8192) == 0);
        CHECK(create_error(env.context, {kDmaBuf, fd_prop(fd), 0}, 4096) == CL_INVALID_PROPERTY);
        CHECK(e2e::fd_is_open(fd));
        close(fd);
    }
    SECTION("a pipe") {
        int p[2];
        REQUIRE(pipe(p) == 0);
        CHECK(create_error(env.context, {kDmaBuf, fd_prop(p[0]), 0}, 4096) == CL_INVALID_PROPERTY);
        CHECK(e2e::fd_is_open(p[0]));
        close(p[0]);
        close(p[1]);
    }
}

// "if the value specified for a supported property name is not valid": an
// empty CL_MEM_DEVICE_HANDLE_LIST_KHR names no device to associate with.
TEST_CASE("C7: CL_INVALID_PROPERTY for an empty device handle list", "[spec][create]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf a = e2e::make_dmabuf(4096);
    CHECK(create_error(env.context, {kDmaBuf, fd_prop(a.fd), kDeviceList, kDeviceListEnd, 0}, 4096) ==
          CL_INVALID_PROPERTY);
    CHECK(e2e::fd_is_open(a.fd));
}

// -------------------------------------------------------- CL_INVALID_DEVICE

// "if a device identified by the property CL_MEM_DEVICE_HANDLE_LIST_KHR is not
// a valid device or is not associated with context"
TEST_CASE("C8: CL_INVALID_DEVICE for a listed sub-device in a context of its parent device",
          "[spec][create][subdevices]") {
    REQUIRE_DMABUF();
    ClEnv env;
    SubDevices sd(env.device);
    REQUIRE_SUBDEVICES(sd);
    Dmabuf a = e2e::make_dmabuf(4096);
    CHECK(create_error(env.context, {kDmaBuf, fd_prop(a.fd), kDeviceList, dev_prop(sd.devices[0]), kDeviceListEnd, 0},
                       4096) == CL_INVALID_DEVICE);
    CHECK(e2e::fd_is_open(a.fd));
}

// Same statement, the other way round: the parent device (or a second
// sub-device) listed for a context of one sub-device.
// PoCL (3.1 and 6) reports the parent device in CL_CONTEXT_DEVICES of a sub-device context
// (the ICD test below shows it); the layer keeps the devices the context was created with
// (layer/core/context_devices.hpp), so this passes there too.
TEST_CASE("C8b: CL_INVALID_DEVICE for a listed device outside a context of one sub-device",
          "[spec][create][subdevices]") {
    REQUIRE_DMABUF();
    ClEnv env;
    SubDevices sd(env.device);
    REQUIRE_SUBDEVICES(sd);
    Dmabuf a = e2e::make_dmabuf(4096);
    {
        cl_context ctx = make_context(env.platform, {sd.devices[0]});
        CHECK(create_error(ctx, {kDmaBuf, fd_prop(a.fd), kDeviceList, dev_prop(env.device), kDeviceListEnd, 0}, 4096) ==
              CL_INVALID_DEVICE);
        CHECK(create_error(ctx,
                           {kDmaBuf, fd_prop(a.fd), kDeviceList, dev_prop(sd.devices[0]), dev_prop(sd.devices[1]),
                            kDeviceListEnd, 0},
                           4096) == CL_INVALID_DEVICE);
        clReleaseContext(ctx);
    }
    CHECK(e2e::fd_is_open(a.fd));
}

TEST_CASE("C9: CL_INVALID_DEVICE for a listed value that is not a valid device", "[spec][create]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf a = e2e::make_dmabuf(4096);
    static int not_a_device = 0;
    CHECK(create_error(env.context,
                       {kDmaBuf, fd_prop(a.fd), kDeviceList, reinterpret_cast<cl_mem_properties>(&not_a_device),
                        kDeviceListEnd, 0},
                       4096) == CL_INVALID_DEVICE);
    CHECK(e2e::fd_is_open(a.fd));
}

// "if a device identified by property CL_MEM_DEVICE_HANDLE_LIST_KHR cannot
// import the requested external memory object type" / "if ... not specified
// ... and one or more devices in context cannot import": every device here
// reports DMA_BUF, so the converse must hold — no CL_INVALID_DEVICE.
TEST_CASE("C10: devices that report DMA_BUF are never refused with CL_INVALID_DEVICE", "[spec][create]") {
    REQUIRE_DMABUF();
    ClEnv env;
    cl_external_memory_handle_type_khr types[8] = {};
    size_t bytes = 0;
    REQUIRE(clGetDeviceInfo(env.device, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, sizeof types, types,
                            &bytes) == CL_SUCCESS);
    bool dmabuf = false;
    for (size_t i = 0; i < bytes / sizeof types[0]; ++i) dmabuf |= types[i] == CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR;
    REQUIRE(dmabuf);
    Dmabuf a = e2e::make_dmabuf(4096);
    Dmabuf b = e2e::make_dmabuf(4096);
    cl_mem m1 = import_buffer(env.context, a);
    cl_mem m2 = import_buffer(env.context, b, 0, {kDeviceList, dev_prop(env.device), kDeviceListEnd});
    clReleaseMemObject(m1);
    clReleaseMemObject(m2);
}

// --------------------------------------------------------- CL_INVALID_VALUE

// "if properties includes a supported external memory handle and flags
// includes CL_MEM_USE_HOST_PTR, CL_MEM_ALLOC_HOST_PTR, or CL_MEM_COPY_HOST_PTR"
TEST_CASE("C11: CL_INVALID_VALUE for USE/ALLOC/COPY_HOST_PTR with a dma-buf handle", "[spec][create]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf a = e2e::make_dmabuf(4096);
    alignas(4096) static unsigned char host[4096];
    const std::vector<cl_mem_properties> props{kDmaBuf, fd_prop(a.fd), 0};
    SECTION("CL_MEM_USE_HOST_PTR") {
        CHECK(create_error(env.context, props, 4096, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, host) ==
              CL_INVALID_VALUE);
    }
    SECTION("CL_MEM_ALLOC_HOST_PTR") {
        CHECK(create_error(env.context, props, 4096, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR) == CL_INVALID_VALUE);
    }
    SECTION("CL_MEM_COPY_HOST_PTR") {
        CHECK(create_error(env.context, props, 4096, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, host) ==
              CL_INVALID_VALUE);
    }
    CHECK(e2e::fd_is_open(a.fd));
}

// "if values specified in flags are not valid as defined in the Memory Flags table"
TEST_CASE("C12: CL_INVALID_VALUE for invalid flags with a dma-buf handle", "[spec][create]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf a = e2e::make_dmabuf(4096);
    CHECK(create_error(env.context, {kDmaBuf, fd_prop(a.fd), 0}, 4096, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY) ==
          CL_INVALID_VALUE);
    CHECK(e2e::fd_is_open(a.fd));
}

// ------------------------------------------------------ CL_INVALID_HOST_PTR

// "if properties includes a supported external memory handle and host_ptr is not NULL"
TEST_CASE("C13: CL_INVALID_HOST_PTR for a non-NULL host_ptr with a dma-buf handle", "[spec][create]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf a = e2e::make_dmabuf(4096);
    static unsigned char host[4096];
    CHECK(create_error(env.context, {kDmaBuf, fd_prop(a.fd), 0}, 4096, CL_MEM_READ_WRITE, host) ==
          CL_INVALID_HOST_PTR);
    CHECK(e2e::fd_is_open(a.fd));
}

// --------------------------------------------------- CL_INVALID_BUFFER_SIZE

// "if size is zero"
TEST_CASE("C14: CL_INVALID_BUFFER_SIZE for size 0 with a dma-buf handle", "[spec][create]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf a = e2e::make_dmabuf(4096);
    CHECK(create_error(env.context, {kDmaBuf, fd_prop(a.fd), 0}, 0) == CL_INVALID_BUFFER_SIZE);
    CHECK(e2e::fd_is_open(a.fd));
}

// "if size is greater than CL_DEVICE_MAX_MEM_ALLOC_SIZE for all devices in context"
TEST_CASE("C15: CL_INVALID_BUFFER_SIZE for a size above CL_DEVICE_MAX_MEM_ALLOC_SIZE", "[spec][create]") {
    REQUIRE_DMABUF();
    ClEnv env;
    cl_ulong max_alloc = 0;
    REQUIRE(clGetDeviceInfo(env.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, nullptr) ==
            CL_SUCCESS);
    Dmabuf a = e2e::make_dmabuf(4096);
    CHECK(create_error(env.context, {kDmaBuf, fd_prop(a.fd), 0}, static_cast<size_t>(max_alloc) + 4096) ==
          CL_INVALID_BUFFER_SIZE);
    CHECK(e2e::fd_is_open(a.fd));
}

// ------------------------------------------------------- CL_INVALID_CONTEXT

// "if context is not a valid context" (with a dma-buf handle in properties)
TEST_CASE("C16: CL_INVALID_CONTEXT for a NULL context with a dma-buf handle", "[spec][create]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf a = e2e::make_dmabuf(4096);
    CHECK(create_error(nullptr, {kDmaBuf, fd_prop(a.fd), 0}, 4096) == CL_INVALID_CONTEXT);
    CHECK(e2e::fd_is_open(a.fd));
}
