//
// cl_khr_external_memory: the errors that do not depend on the handle type,
// checked with whatever handle type the device imports (the dma-buf where it
// has one; NVIDIA's own opaque fd where only that is there), so that they
// run on native implementations too and the layer's answers can be compared
// with theirs.  None of these needs a valid handle.
//
#include "external_memory_dma_buf_common.h"

using namespace dma_buf_test;

namespace {

// The device's first import handle type, preferring the dma-buf; 0 if none.
cl_external_memory_handle_type_khr some_handle_type(cl_device_id device)
{
    size_t bytes = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR,
                        0, nullptr, &bytes)
            != CL_SUCCESS
        || bytes < sizeof(cl_external_memory_handle_type_khr))
        return 0;
    std::vector<cl_external_memory_handle_type_khr> types(
        bytes / sizeof(cl_external_memory_handle_type_khr));
    clGetDeviceInfo(device, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR,
                    bytes, types.data(), nullptr);
    for (auto t : types)
        if (t == CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR) return t;
    return types[0];
}

#define REQUIRE_EXTERNAL_MEMORY(fns, type)                                     \
    REQUIRE_EXTENSION("cl_khr_external_memory");                               \
    const ExternalMemoryFunctions fns = external_memory_functions(device);     \
    test_assert_error(fns.acquire != nullptr && fns.release != nullptr,        \
                      "clEnqueue{Acquire,Release}ExternalMemObjectsKHR are "   \
                      "not handed out");                                       \
    const cl_mem_properties type = some_handle_type(device);                   \
    test_assert_error(type != 0, "the device lists no import handle type")

cl_int create_error(cl_context context, std::vector<cl_mem_properties> props)
{
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBufferWithProperties(context, props.data(),
                                              CL_MEM_READ_WRITE, 4096, nullptr,
                                              &err);
    if (mem)
    {
        clReleaseMemObject(mem);
        if (err == CL_SUCCESS) err = 1;
    }
    return err;
}

} // namespace

// CL_INVALID_PROPERTY for the property list, whatever the handle type: "if
// properties does not include a supported external memory handle and
// CL_MEM_DEVICE_HANDLE_LIST_KHR is specified as part of properties";
// "if properties includes more than one external memory handle" (1.0.1); "if
// the value specified for a supported property name is not valid" (-1 is no
// fd, an empty device list); "if a property name in properties is not a
// supported property name".
REGISTER_TEST(external_memory_negative_properties)
{
    REQUIRE_EXTERNAL_MEMORY(fns, type);
    const cl_mem_properties dev = reinterpret_cast<cl_mem_properties>(device);
    const cl_mem_properties bad_fd = static_cast<cl_mem_properties>(-1);
    const struct
    {
        std::vector<cl_mem_properties> props;
        const char *what;
    } cases[] = {
        { { CL_MEM_DEVICE_HANDLE_LIST_KHR, dev, CL_MEM_DEVICE_HANDLE_LIST_END_KHR, 0 },
          "a device handle list without a handle" },
        { { type, bad_fd, type, bad_fd, 0 }, "two handles" },
        { { type, bad_fd, 0 }, "handle value -1" },
        { { type, bad_fd, CL_MEM_DEVICE_HANDLE_LIST_KHR,
            CL_MEM_DEVICE_HANDLE_LIST_END_KHR, 0 },
          "an empty device handle list (and handle -1)" },
        { { 0x7fff1234, 1, 0 }, "an unknown property name" },
    };
    int r = TEST_PASS;
    for (const auto &c : cases)
    {
        const cl_int got = create_error(context, c.props);
        log_info("  %s: %s\n", c.what, IGetErrorString(got));
        if (got != CL_INVALID_PROPERTY)
        {
            log_error("ERROR: %s: got %s, expected CL_INVALID_PROPERTY\n",
                      c.what, IGetErrorString(got));
            r = TEST_FAIL;
        }
    }
    return r;
}

// CL_INVALID_DEVICE "if a device identified by the property
// CL_MEM_DEVICE_HANDLE_LIST_KHR is not a valid device"; NULL is not one.
REGISTER_TEST(external_memory_negative_device_list)
{
    REQUIRE_EXTERNAL_MEMORY(fns, type);
    const cl_int got = create_error(
        context,
        { type, static_cast<cl_mem_properties>(-1), CL_MEM_DEVICE_HANDLE_LIST_KHR,
          0 /* NULL device */, 0 /* no END: the 0 above ends it */ });
    log_info("  a NULL device in the list: %s\n", IGetErrorString(got));
    // A list holding only NULL reads as an empty list (END is 0) or as an
    // invalid device; both are refusals the spec names.
    test_assert_error(got == CL_INVALID_DEVICE || got == CL_INVALID_PROPERTY,
                      "an import naming no valid device was not refused with "
                      "CL_INVALID_DEVICE or CL_INVALID_PROPERTY");
    return TEST_PASS;
}

// clEnqueueAcquire/ReleaseExternalMemObjectsKHR without an import:
// CL_INVALID_VALUE (num_mem_objects and mem_objects disagree),
// CL_INVALID_MEM_OBJECT ("not valid OpenCL memory objects created using an
// external memory handle"), CL_INVALID_COMMAND_QUEUE (no queue),
// CL_INVALID_EVENT_WAIT_LIST (count and list disagree).
REGISTER_TEST(external_memory_negative_acquire_release_without_import)
{
    REQUIRE_EXTERNAL_MEMORY(fns, type);
    cl_int err = CL_SUCCESS;
    clMemWrapper plain =
        clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, nullptr, &err);
    test_error(err, "clCreateBuffer");
    clEventWrapper done = clCreateUserEvent(context, &err);
    test_error(err, "clCreateUserEvent");
    test_error(clSetUserEventStatus(done, CL_COMPLETE), "set done");
    cl_mem pl = plain;
    cl_event ok_event = done;
    const struct
    {
        const char *name;
        clEnqueueAcquireExternalMemObjectsKHR_fn fn;
    } both[] = { { "acquire", fns.acquire }, { "release", fns.release } };
    int r = TEST_PASS;
    for (const auto &f : both)
    {
        const struct
        {
            cl_int got, want;
            const char *what;
        } cases[] = {
            { f.fn(queue, 0, &pl, 0, nullptr, nullptr), CL_INVALID_VALUE,
              "0 objects and a list" },
            { f.fn(queue, 1, nullptr, 0, nullptr, nullptr), CL_INVALID_VALUE,
              "1 object and no list" },
            { f.fn(queue, 1, &pl, 0, nullptr, nullptr), CL_INVALID_MEM_OBJECT,
              "a buffer not imported" },
            { f.fn(nullptr, 1, &pl, 0, nullptr, nullptr),
              CL_INVALID_COMMAND_QUEUE, "no queue" },
            { f.fn(queue, 0, nullptr, 1, nullptr, nullptr),
              CL_INVALID_EVENT_WAIT_LIST, "1 event and no list" },
            { f.fn(queue, 0, nullptr, 0, &ok_event, nullptr),
              CL_INVALID_EVENT_WAIT_LIST, "a list and 0 events" },
        };
        for (const auto &c : cases)
        {
            log_info("  %s, %s: %s\n", f.name, c.what, IGetErrorString(c.got));
            if (c.got != c.want)
            {
                log_error("ERROR: %s, %s: got %s, expected %s\n", f.name,
                          c.what, IGetErrorString(c.got),
                          IGetErrorString(c.want));
                r = TEST_FAIL;
            }
        }
    }
    // "num_mem_objects is zero and mem_objects is NULL": nothing to acquire;
    // the command still completes after its wait list and gives its event.
    clEventWrapper empty;
    for (const auto &f : both)
    {
        const cl_int got = f.fn(queue, 0, nullptr, 1, &ok_event, &empty);
        log_info("  %s of no objects: %s\n", f.name, IGetErrorString(got));
        if (got != CL_SUCCESS)
        {
            log_error("ERROR: %s of no objects: got %s, expected CL_SUCCESS\n",
                      f.name, IGetErrorString(got));
            r = TEST_FAIL;
        }
        else
        {
            test_error(clWaitForEvents(1, &empty), "clWaitForEvents");
            empty.reset();
        }
    }
    return r;
}
