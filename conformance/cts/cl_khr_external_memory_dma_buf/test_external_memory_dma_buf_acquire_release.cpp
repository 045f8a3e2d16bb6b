//
// cl_khr_external_memory: clEnqueueAcquire/ReleaseExternalMemObjectsKHR as
// commands -- their events, command types and ordering.
//
#include "external_memory_dma_buf_common.h"

using namespace dma_buf_test;

// CL_EVENT_COMMAND_TYPE: the extension adds "CL_COMMAND_ACQUIRE_EXTERNAL_MEM_
// OBJECTS_KHR" and "CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR"; event
// "returns an event object that identifies this particular command" (its
// queue and context), and it reaches CL_COMPLETE.
REGISTER_TEST(external_memory_dma_buf_acquire_release_events)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    ALLOCATE_DMA_BUF(fd, 4096);
    cl_int err = CL_SUCCESS;
    clMemWrapper mem = import_buffer(context, fd, 4096, &err);
    if (err != CL_SUCCESS) close(fd);
    test_error(err, "import");
    cl_mem m = mem;
    clEventWrapper acquired, released;
    test_error(fns.acquire(queue, 1, &m, 0, nullptr, &acquired), "acquire");
    test_error(fns.release(queue, 1, &m, 1, &acquired, &released), "release");
    test_error(clWaitForEvents(1, &released), "clWaitForEvents");
    const struct
    {
        cl_event e;
        cl_command_type type;
    } expect[] = { { acquired, CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR },
                   { released, CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR } };
    for (const auto &x : expect)
    {
        cl_command_type type = 0;
        cl_command_queue q = nullptr;
        cl_context c = nullptr;
        test_error(clGetEventInfo(x.e, CL_EVENT_COMMAND_TYPE, sizeof(type),
                                  &type, nullptr),
                   "CL_EVENT_COMMAND_TYPE");
        test_error(clGetEventInfo(x.e, CL_EVENT_COMMAND_QUEUE, sizeof(q), &q,
                                  nullptr),
                   "CL_EVENT_COMMAND_QUEUE");
        test_error(clGetEventInfo(x.e, CL_EVENT_CONTEXT, sizeof(c), &c, nullptr),
                   "CL_EVENT_CONTEXT");
        if (type != x.type || q != queue || c != context)
            test_fail("event: type 0x%x (want 0x%x), queue %s, context %s\n",
                      type, x.type, q == queue ? "right" : "WRONG",
                      c == context ? "right" : "WRONG");
        test_assert_error(event_status(x.e) == CL_COMPLETE,
                          "the event did not complete");
    }
    return TEST_PASS;
}

// event_wait_list: "the list of events that need to complete before
// clEnqueueAcquireExternalMemObjectsKHR can be executed" -- an acquire
// behind a user event stays incomplete until the event is set, and so does a
// read that depends on it; both complete after, and the read sees the bytes
// the CPU wrote while the acquire was held back.
REGISTER_TEST(external_memory_dma_buf_acquire_waits_for_wait_list)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    const size_t size = 8192;
    ALLOCATE_DMA_BUF(fd, size);
    const int keep = dup(fd);
    CpuView view(keep, size);
    test_assert_error(view.ok(), "mmap of the dma-buf failed");
    view.fill(1);
    cl_int err = CL_SUCCESS;
    clMemWrapper mem = import_buffer(context, fd, size, &err);
    if (err != CL_SUCCESS) close(fd);
    test_error(err, "import");
    clEventWrapper gate = clCreateUserEvent(context, &err);
    test_error(err, "clCreateUserEvent");
    cl_mem m = mem;
    cl_event g = gate;
    clEventWrapper acquired, read_done, released;
    test_error(fns.acquire(queue, 1, &m, 1, &g, &acquired), "acquire");
    std::vector<uint8_t> seen(size);
    test_error(clEnqueueReadBuffer(queue, mem, CL_FALSE, 0, size, seen.data(), 1,
                                   &acquired, &read_done),
               "read");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const bool held = event_status(acquired) > CL_COMPLETE
        && event_status(read_done) > CL_COMPLETE;
    view.fill(2); // while held back: the acquire must not have happened yet
    test_error(clSetUserEventStatus(gate, CL_COMPLETE), "clSetUserEventStatus");
    test_error(fns.release(queue, 1, &m, 1, &read_done, &released), "release");
    test_error(clWaitForEvents(1, &released), "clWaitForEvents");
    test_assert_error(held, "the acquire ran before its wait list completed");
    test_assert_error(seen == expected_pattern(size, 2),
                      "the read did not see the bytes written before the "
                      "acquire ran");
    close(keep);
    return TEST_PASS;
}

// Release orders after the commands before it in the queue ("to guarantee
// that the state of memory objects is up-to-date"): a non-blocking write,
// then a release; once the release's event completes, the CPU sees the write.
REGISTER_TEST(external_memory_dma_buf_release_after_writes)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    const size_t size = 256 * 1024;
    ALLOCATE_DMA_BUF(fd, size);
    const int keep = dup(fd);
    CpuView view(keep, size);
    test_assert_error(view.ok(), "mmap of the dma-buf failed");
    cl_int err = CL_SUCCESS;
    clMemWrapper mem = import_buffer(context, fd, size, &err);
    if (err != CL_SUCCESS) close(fd);
    test_error(err, "import");
    cl_mem m = mem;
    test_error(fns.acquire(queue, 1, &m, 0, nullptr, nullptr), "acquire");
    const auto data = expected_pattern(size, 9);
    for (size_t off = 0; off < size; off += 16384)
        test_error(clEnqueueWriteBuffer(queue, mem, CL_FALSE, off, 16384,
                                        data.data() + off, 0, nullptr, nullptr),
                   "write");
    clEventWrapper released;
    test_error(fns.release(queue, 1, &m, 0, nullptr, &released), "release");
    test_error(clWaitForEvents(1, &released), "clWaitForEvents");
    test_assert_error(view.first_mismatch(9) == SIZE_MAX,
                      "the writes before the release are not in the dma-buf");
    close(keep);
    return TEST_PASS;
}

// num_mem_objects / mem_objects: several imports in one command, each
// acquired and released.
REGISTER_TEST(external_memory_dma_buf_acquire_release_several)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    const size_t size = 4096;
    int fds[3] = { -1, -1, -1 }, keep[3] = { -1, -1, -1 };
    clMemWrapper mems[3];
    cl_mem list[3];
    for (int i = 0; i < 3; ++i)
    {
        fds[i] = allocate_dma_buf(size);
        if (fds[i] == TEST_SKIPPED_ITSELF) return TEST_SKIPPED_ITSELF;
        test_assert_error(fds[i] >= 0, "allocate_dma_buf failed");
        keep[i] = dup(fds[i]);
        CpuView(keep[i], size).fill(20 + i);
        cl_int err = CL_SUCCESS;
        mems[i] = import_buffer(context, fds[i], size, &err);
        if (err != CL_SUCCESS) close(fds[i]);
        test_error(err, "import");
        list[i] = mems[i];
    }
    test_error(fns.acquire(queue, 3, list, 0, nullptr, nullptr), "acquire");
    bool all_right = true;
    for (int i = 0; i < 3; ++i)
    {
        std::vector<uint8_t> seen(size);
        test_error(clEnqueueReadBuffer(queue, list[i], CL_TRUE, 0, size,
                                       seen.data(), 0, nullptr, nullptr),
                   "read");
        all_right = all_right && seen == expected_pattern(size, 20 + i);
    }
    test_error(fns.release(queue, 3, list, 0, nullptr, nullptr), "release");
    test_error(clFinish(queue), "clFinish");
    for (int k : keep) close(k);
    test_assert_error(all_right, "an import of the three read wrong bytes");
    return TEST_PASS;
}
