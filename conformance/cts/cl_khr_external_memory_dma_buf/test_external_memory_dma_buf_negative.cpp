//
// cl_khr_external_memory / cl_khr_external_memory_dma_buf: a negative test
// for every error the specifications name for an import
// (clCreateBufferWithProperties with an external memory handle) and for
// clEnqueueAcquire/ReleaseExternalMemObjectsKHR.  Each refusal leaves the fd
// with the application (a failed import transfers nothing).
//
#include <sys/mman.h>

#include "external_memory_dma_buf_common.h"

using namespace dma_buf_test;

namespace {

// The error of an import with `props`; the object, if one was made, released.
cl_int import_error(cl_context context, const std::vector<cl_mem_properties> &props,
                    size_t size, cl_mem_flags flags = CL_MEM_READ_WRITE,
                    void *host_ptr = nullptr)
{
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBufferWithProperties(context, props.data(), flags,
                                              size, host_ptr, &err);
    if (mem)
    {
        clReleaseMemObject(mem);
        if (err == CL_SUCCESS) err = 1; // made: never the error wanted
    }
    return err;
}

cl_mem_properties fd_prop(int fd) { return static_cast<cl_mem_properties>(fd); }
cl_mem_properties dev_prop(cl_device_id d)
{
    return reinterpret_cast<cl_mem_properties>(d);
}
const cl_mem_properties kDmaBuf = CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR;
const cl_mem_properties kList = CL_MEM_DEVICE_HANDLE_LIST_KHR;
const cl_mem_properties kEnd = CL_MEM_DEVICE_HANDLE_LIST_END_KHR;

#define EXPECT_IMPORT_ERROR(want, ...)                                         \
    test_failure_error(import_error(__VA_ARGS__), want, #want)

} // namespace

// CL_INVALID_PROPERTY "if a property name in properties is not a supported
// property name, if the value specified for a supported property name is not
// valid, or if the same property name is specified more than once";
// (1.0.1) "if properties includes more than one external memory handle";
// (1.0.1) CL_MEM_DEVICE_HANDLE_LIST_KHR "without an external memory handle".
REGISTER_TEST(external_memory_dma_buf_negative_invalid_property)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    ALLOCATE_DMA_BUF(fd, 4096);
    ALLOCATE_DMA_BUF(other, 4096);
    int pipe_fds[2];
    test_assert_error(pipe2(pipe_fds, O_CLOEXEC) == 0, "pipe2");
    const int memfd = memfd_create("not-a-dma-buf", MFD_CLOEXEC);
    test_assert_error(memfd >= 0 && ftruncate(memfd, 4096) == 0, "memfd");
    int r = TEST_PASS;
    auto check = [&](cl_int got, const char *what) {
        if (got != CL_INVALID_PROPERTY)
        {
            log_error("ERROR: %s: got %s, expected CL_INVALID_PROPERTY\n", what,
                      IGetErrorString(got));
            r = TEST_FAIL;
        }
    };
    check(import_error(context, { kList, dev_prop(device), kEnd, 0 }, 4096),
          "a device handle list without a handle");
    check(import_error(context, { kDmaBuf, fd_prop(fd), kDmaBuf, fd_prop(other), 0 },
                       4096),
          "two dma-buf handles");
    check(import_error(context,
                       { kDmaBuf, fd_prop(fd), kList, dev_prop(device), kEnd,
                         kList, dev_prop(device), kEnd, 0 },
                       4096),
          "the device handle list twice");
    check(import_error(context,
                       { CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_WIN32_KHR, 1234, 0 },
                       4096),
          "a handle type the device cannot import (opaque Win32 on Linux)");
    check(import_error(context, { kDmaBuf, fd_prop(fd), 0x7fff1234, 1, 0 }, 4096),
          "an unknown property name next to a dma-buf");
    check(import_error(context, { kDmaBuf, fd_prop(-1), 0 }, 4096), "fd -1");
    check(import_error(context, { kDmaBuf, fd_prop(pipe_fds[0]), 0 }, 4096),
          "a pipe, not a dma-buf");
    check(import_error(context, { kDmaBuf, fd_prop(memfd), 0 }, 4096),
          "a memfd, not a dma-buf");
    check(import_error(context, { kDmaBuf, fd_prop(fd), kList, kEnd, 0 }, 4096),
          "an empty device handle list");
    const bool kept = fd_is_open(fd) && fd_is_open(other);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    close(memfd);
    close(fd);
    close(other);
    test_assert_error(kept, "a refused import closed the application's fd");
    return r;
}

// CL_INVALID_DEVICE "if a device identified by the property
// CL_MEM_DEVICE_HANDLE_LIST_KHR is not a valid device or is not associated
// with context".
REGISTER_TEST(external_memory_dma_buf_negative_invalid_device)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    ALLOCATE_DMA_BUF(fd, 4096);
    static int not_a_device = 0;
    int r = TEST_PASS;
    cl_int got = import_error(context,
                              { kDmaBuf, fd_prop(fd), kList,
                                reinterpret_cast<cl_mem_properties>(&not_a_device),
                                kEnd, 0 },
                              4096);
    if (got != CL_INVALID_DEVICE)
    {
        log_error("ERROR: a listed value that is no device: got %s, expected "
                  "CL_INVALID_DEVICE\n",
                  IGetErrorString(got));
        r = TEST_FAIL;
    }
    // A sub-device is not a device of its parent's context.
    const cl_device_partition_property part[] = { CL_DEVICE_PARTITION_EQUALLY, 1,
                                                  0 };
    cl_device_id sub = nullptr;
    cl_uint n = 0;
    if (clCreateSubDevices(device, part, 1, &sub, &n) == CL_SUCCESS && sub)
    {
        got = import_error(context, { kDmaBuf, fd_prop(fd), kList, dev_prop(sub), kEnd, 0 },
                           4096);
        clReleaseDevice(sub);
        if (got != CL_INVALID_DEVICE)
        {
            log_error("ERROR: a sub-device outside the context: got %s, "
                      "expected CL_INVALID_DEVICE\n",
                      IGetErrorString(got));
            r = TEST_FAIL;
        }
    }
    else
        log_info("the device cannot be partitioned: the sub-device case is "
                 "not tried\n");
    const bool kept = fd_is_open(fd);
    close(fd);
    test_assert_error(kept, "a refused import closed the application's fd");
    return r;
}

// clCreateBufferWithProperties' own errors on an import: CL_INVALID_VALUE
// for host-pointer flags ("CL_MEM_USE_HOST_PTR, CL_MEM_ALLOC_HOST_PTR and
// CL_MEM_COPY_HOST_PTR ... must not be specified" with an external memory
// handle) and invalid flags; CL_INVALID_HOST_PTR for a host_ptr;
// CL_INVALID_BUFFER_SIZE for size 0 or above CL_DEVICE_MAX_MEM_ALLOC_SIZE;
// CL_INVALID_CONTEXT for no context.
REGISTER_TEST(external_memory_dma_buf_negative_create_arguments)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    ALLOCATE_DMA_BUF(fd, 4096);
    const std::vector<cl_mem_properties> props = { kDmaBuf, fd_prop(fd), 0 };
    char host[4096];
    cl_ulong max_alloc = 0;
    clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(max_alloc),
                    &max_alloc, nullptr);
    const struct
    {
        cl_mem_flags flags;
        void *ptr;
        size_t size;
        cl_context ctx;
        cl_int want;
        const char *what;
    } cases[] = {
        { CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, host, 4096, context,
          CL_INVALID_VALUE, "CL_MEM_USE_HOST_PTR" },
        { CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, nullptr, 4096, context,
          CL_INVALID_VALUE, "CL_MEM_ALLOC_HOST_PTR" },
        { CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, host, 4096, context,
          CL_INVALID_VALUE, "CL_MEM_COPY_HOST_PTR" },
        { CL_MEM_READ_WRITE | CL_MEM_READ_ONLY, nullptr, 4096, context,
          CL_INVALID_VALUE, "READ_WRITE | READ_ONLY" },
        { CL_MEM_READ_WRITE, host, 4096, context, CL_INVALID_HOST_PTR,
          "a host_ptr without host-pointer flags" },
        { CL_MEM_READ_WRITE, nullptr, 0, context, CL_INVALID_BUFFER_SIZE,
          "size 0" },
        { CL_MEM_READ_WRITE, nullptr, static_cast<size_t>(max_alloc) + 1,
          context, CL_INVALID_BUFFER_SIZE, "size above the maximum" },
        { CL_MEM_READ_WRITE, nullptr, 4096, nullptr, CL_INVALID_CONTEXT,
          "no context" },
    };
    int r = TEST_PASS;
    for (const auto &c : cases)
    {
        const cl_int got = import_error(c.ctx, props, c.size, c.flags, c.ptr);
        if (got != c.want)
        {
            log_error("ERROR: %s: got %s, expected %s\n", c.what,
                      IGetErrorString(got), IGetErrorString(c.want));
            r = TEST_FAIL;
        }
    }
    const bool kept = fd_is_open(fd);
    close(fd);
    test_assert_error(kept, "a refused import closed the application's fd");
    return r;
}

// clEnqueueAcquire/ReleaseExternalMemObjectsKHR: CL_INVALID_VALUE "if
// num_mem_objects is zero and mem_objects is not a NULL value or if
// num_mem_objects > 0 and mem_objects is NULL"; CL_INVALID_MEM_OBJECT "if
// memory objects in mem_objects are not valid OpenCL memory objects created
// using an external memory handle"; CL_INVALID_COMMAND_QUEUE "if
// command_queue is not a valid command-queue"; CL_INVALID_EVENT_WAIT_LIST "if
// event_wait_list is NULL and num_events_in_wait_list > 0, or event_wait_list
// is not NULL and num_events_in_wait_list is 0, or if event objects in
// event_wait_list are not valid events"; CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_
// WAIT_LIST (core) for a wait-list event that failed.
REGISTER_TEST(external_memory_dma_buf_negative_acquire_release)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    ALLOCATE_DMA_BUF(fd, 4096);
    cl_int err = CL_SUCCESS;
    clMemWrapper imported = import_buffer(context, fd, 4096, &err);
    if (err != CL_SUCCESS) close(fd);
    test_error(err, "import");
    clMemWrapper plain =
        clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, nullptr, &err);
    test_error(err, "clCreateBuffer");
    clEventWrapper done = clCreateUserEvent(context, &err);
    test_error(err, "clCreateUserEvent");
    test_error(clSetUserEventStatus(done, CL_COMPLETE), "set done");
    clEventWrapper failed = clCreateUserEvent(context, &err);
    test_error(err, "clCreateUserEvent");
    test_error(clSetUserEventStatus(failed, -1), "set failed");
    cl_mem imp = imported, pl = plain;
    cl_mem mixed[2] = { imp, pl };
    cl_event ok_event = done, bad_event = failed;
    // NULL stands for "not a valid event": behind an ICD loader any other
    // non-event pointer is dereferenced for its dispatch table first.
    cl_event null_event = nullptr;
    int r = TEST_PASS;
    const struct
    {
        const char *name;
        clEnqueueAcquireExternalMemObjectsKHR_fn fn;
    } both[] = { { "acquire", fns.acquire }, { "release", fns.release } };
    for (const auto &f : both)
    {
        const struct
        {
            cl_int got, want;
            const char *what;
        } cases[] = {
            { f.fn(queue, 0, &imp, 0, nullptr, nullptr), CL_INVALID_VALUE,
              "0 objects and a list" },
            { f.fn(queue, 1, nullptr, 0, nullptr, nullptr), CL_INVALID_VALUE,
              "1 object and no list" },
            { f.fn(queue, 1, &pl, 0, nullptr, nullptr), CL_INVALID_MEM_OBJECT,
              "a buffer not imported" },
            { f.fn(queue, 2, mixed, 0, nullptr, nullptr), CL_INVALID_MEM_OBJECT,
              "one of two not imported" },
            { f.fn(nullptr, 1, &imp, 0, nullptr, nullptr),
              CL_INVALID_COMMAND_QUEUE, "no queue" },
            { f.fn(queue, 1, &imp, 1, nullptr, nullptr),
              CL_INVALID_EVENT_WAIT_LIST, "1 event and no list" },
            { f.fn(queue, 1, &imp, 0, &ok_event, nullptr),
              CL_INVALID_EVENT_WAIT_LIST, "a list and 0 events" },
            { f.fn(queue, 1, &imp, 1, &null_event, nullptr),
              CL_INVALID_EVENT_WAIT_LIST, "a NULL event in the list" },
            { f.fn(queue, 1, &imp, 1, &bad_event, nullptr),
              CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
              "a failed wait-list event" },
        };
        for (const auto &c : cases)
            if (c.got != c.want)
            {
                log_error("ERROR: %s, %s: got %s, expected %s\n", f.name, c.what,
                          IGetErrorString(c.got), IGetErrorString(c.want));
                r = TEST_FAIL;
            }
    }
    test_error(clFinish(queue), "clFinish");
    return r;
}

// Mixing contexts: an import used on a queue of another context.  Core
// enqueue rule "CL_INVALID_CONTEXT if the context associated with
// command_queue and memory objects are not the same"; where the other context
// has no device of the queue, the extension's CL_INVALID_COMMAND_QUEUE "if
// one or more of mem_objects belong to a context that does not contain a
// device associated with command_queue" also applies.  Here both contexts
// hold the same device, so only CL_INVALID_CONTEXT is right.
REGISTER_TEST(external_memory_dma_buf_negative_other_context)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    ALLOCATE_DMA_BUF(fd, 4096);
    cl_int err = CL_SUCCESS;
    clContextWrapper other =
        clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    test_error(err, "clCreateContext");
    clMemWrapper imported = import_buffer(other, fd, 4096, &err);
    if (err != CL_SUCCESS) close(fd);
    test_error(err, "import into the other context");
    cl_mem imp = imported;
    test_failure_error(fns.acquire(queue, 1, &imp, 0, nullptr, nullptr),
                       CL_INVALID_CONTEXT, "acquire, object of another context");
    test_failure_error(fns.release(queue, 1, &imp, 0, nullptr, nullptr),
                       CL_INVALID_CONTEXT, "release, object of another context");
    return TEST_PASS;
}
