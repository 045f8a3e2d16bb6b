//
// cl_khr_external_semaphore_sync_fd: a binary semaphore's signal exported as
// a sync_file, a sync_file imported as a semaphore to wait on, and
// clReImportSemaphoreSyncFdKHR -- their orderings against the queue, each
// checked from both sides (the sync_file's poll, the commands' events) and
// every wait bounded (status_within: a test never hangs on a wrong answer).
// The producer's fences are sw_sync points (CONFIG_SW_SYNC, debugfs), or
// vgem fences where the kernel has no sw_sync (Debian's kernels).
//
#include "external_memory_dma_buf_common.h"

#include <CL/cl_ext.h>

#ifndef CL_SEMAPHORE_HANDLE_SYNC_FD_KHR
#define CL_SEMAPHORE_HANDLE_SYNC_FD_KHR 0x2058
#endif

using namespace dma_buf_test;

namespace {

// cl_khr_external_semaphore_sync_fd 1.0.1's re-import (older headers lack
// its type): the semaphore, no properties, the new sync_file.
typedef cl_int(CL_API_CALL *ReImportSyncFd)(cl_semaphore_khr, cl_properties *,
                                            int);

struct SemaphoreFunctions
{
    clCreateSemaphoreWithPropertiesKHR_fn create = nullptr;
    clEnqueueWaitSemaphoresKHR_fn wait = nullptr;
    clEnqueueSignalSemaphoresKHR_fn signal = nullptr;
    clGetSemaphoreHandleForTypeKHR_fn handle = nullptr;
    clReleaseSemaphoreKHR_fn release = nullptr;
    ReImportSyncFd reimport = nullptr;
};

SemaphoreFunctions semaphore_functions(cl_device_id device)
{
    const cl_platform_id p = platform_of(device);
    auto get = [p](const char *name) {
        return clGetExtensionFunctionAddressForPlatform(p, name);
    };
    SemaphoreFunctions f;
    f.create = reinterpret_cast<clCreateSemaphoreWithPropertiesKHR_fn>(
        get("clCreateSemaphoreWithPropertiesKHR"));
    f.wait = reinterpret_cast<clEnqueueWaitSemaphoresKHR_fn>(
        get("clEnqueueWaitSemaphoresKHR"));
    f.signal = reinterpret_cast<clEnqueueSignalSemaphoresKHR_fn>(
        get("clEnqueueSignalSemaphoresKHR"));
    f.handle = reinterpret_cast<clGetSemaphoreHandleForTypeKHR_fn>(
        get("clGetSemaphoreHandleForTypeKHR"));
    f.release = reinterpret_cast<clReleaseSemaphoreKHR_fn>(
        get("clReleaseSemaphoreKHR"));
    f.reimport =
        reinterpret_cast<ReImportSyncFd>(get("clReImportSemaphoreSyncFdKHR"));
    return f;
}

// Whether the device lists the sync_fd handle type for `query`
// (CL_DEVICE_SEMAPHORE_IMPORT/EXPORT_HANDLE_TYPES_KHR).
bool device_lists_sync_fd(cl_device_id device, cl_device_info query)
{
    size_t bytes = 0;
    if (clGetDeviceInfo(device, query, 0, nullptr, &bytes) != CL_SUCCESS)
        return false;
    std::vector<cl_external_semaphore_handle_type_khr> types(
        bytes / sizeof(cl_external_semaphore_handle_type_khr));
    if (!types.empty()
        && clGetDeviceInfo(device, query, bytes, types.data(), nullptr)
            != CL_SUCCESS)
        return false;
    return std::find(types.begin(), types.end(),
                     CL_SEMAPHORE_HANDLE_SYNC_FD_KHR)
        != types.end();
}

#define REQUIRE_SYNC_FD(fns, query, what)                                      \
    REQUIRE_EXTENSION("cl_khr_external_semaphore_sync_fd");                    \
    const SemaphoreFunctions fns = semaphore_functions(device);                \
    test_assert_error(fns.create && fns.wait && fns.signal && fns.handle       \
                          && fns.release,                                      \
                      "cl_khr_semaphore's functions are not handed out");      \
    if (!device_lists_sync_fd(device, query))                                  \
    {                                                                          \
        log_info("the device does not " what " sync_fd semaphores: "           \
                 "skipped\n");                                                 \
        return TEST_SKIPPED_ITSELF;                                            \
    }

// A binary semaphore, exportable as a sync_fd or importing `fd` (owned by
// the semaphore on success).
cl_semaphore_khr make_semaphore(const SemaphoreFunctions &fns,
                                cl_context context, bool exportable,
                                int import_fd, cl_int *err)
{
    std::vector<cl_semaphore_properties_khr> p = {
        CL_SEMAPHORE_TYPE_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR
    };
    if (exportable)
        p.insert(p.end(),
                 { CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR,
                   CL_SEMAPHORE_HANDLE_SYNC_FD_KHR,
                   CL_SEMAPHORE_EXPORT_HANDLE_TYPES_LIST_END_KHR });
    if (import_fd >= 0)
        p.insert(p.end(),
                 { CL_SEMAPHORE_HANDLE_SYNC_FD_KHR,
                   static_cast<cl_semaphore_properties_khr>(import_fd) });
    p.push_back(0);
    return fns.create(context, p.data(), err);
}

// Releases the semaphore when the test returns, whichever way.
struct SemaphoreHolder
{
    const SemaphoreFunctions &fns;
    cl_semaphore_khr s;
    ~SemaphoreHolder()
    {
        if (s) fns.release(s);
    }
};

constexpr int bound_ms = 10000; // what "eventually" means here

} // namespace

// Export after a signal: "If handle_type is CL_SEMAPHORE_HANDLE_SYNC_FD_KHR,
// ... the sync file descriptor returned refers to the ... signal operation
// most recently enqueued" (cl_khr_external_semaphore_sync_fd).  The sync_file
// of a signal still held back by its wait list is pending; it signals once
// the signal ran.
REGISTER_TEST(external_semaphore_sync_fd_export_after_signal)
{
    REQUIRE_SYNC_FD(fns, CL_DEVICE_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR, "export");
    cl_int err = CL_SUCCESS;
    SemaphoreHolder a{ fns, make_semaphore(fns, context, true, -1, &err) };
    test_error(err, "create an exportable semaphore");
    clEventWrapper gate = clCreateUserEvent(context, &err);
    test_error(err, "clCreateUserEvent");
    cl_event g = gate;
    clEventWrapper signalled;
    test_error(fns.signal(queue, 1, &a.s, nullptr, 1, &g, &signalled),
               "signal");
    clFlush(queue);
    int fd = -1;
    test_error(fns.handle(a.s, device, CL_SEMAPHORE_HANDLE_SYNC_FD_KHR,
                          sizeof(fd), &fd, nullptr),
               "export as sync_fd");
    test_assert_error(fd >= 0, "the exported sync_fd is not an fd");
    const bool pending = !signalled_within(fd, 20);
    test_error(clSetUserEventStatus(gate, CL_COMPLETE), "clSetUserEventStatus");
    const bool fired = signalled_within(fd, bound_ms);
    const cl_int status = status_within(signalled, bound_ms);
    close(fd);
    test_assert_error(pending,
                      "the exported sync_fd signalled before its signal "
                      "operation could run");
    test_assert_error(fired,
                      "the exported sync_fd did not signal within 10 s of its "
                      "signal operation's wait list completing");
    test_assert_error(status == CL_COMPLETE,
                      "the signal command did not complete");
    return TEST_PASS;
}

// Import, then wait: "CL_SEMAPHORE_HANDLE_SYNC_FD_KHR specifies a POSIX file
// descriptor handle to a Linux Sync File ... object" -- a wait on the
// imported semaphore, enqueued before the producer signals (the kernel's
// wait-before-signal), holds the queue: the marker behind it stays pending
// while the fence is, and completes once it signals.
REGISTER_TEST(external_semaphore_sync_fd_import_then_wait)
{
    REQUIRE_SYNC_FD(fns, CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR, "import");
    REQUIRE_PRODUCER_FENCES(timeline);
    const int fence = timeline.fence(1);
    test_assert_error(fence >= 0, "a producer fence");
    cl_int err = CL_SUCCESS;
    SemaphoreHolder b{ fns, make_semaphore(fns, context, false, fence, &err) };
    if (err != CL_SUCCESS) close(fence);
    test_error(err, "create a semaphore importing a sync_fd");
    clEventWrapper waited, behind;
    test_error(fns.wait(queue, 1, &b.s, nullptr, 0, nullptr, &waited), "wait");
    test_error(clEnqueueMarkerWithWaitList(queue, 0, nullptr, &behind),
               "marker");
    clFlush(queue);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const bool held = event_status(behind) > CL_COMPLETE
        && event_status(waited) > CL_COMPLETE;
    test_assert_error(timeline.advance(), "advancing the producer's timeline");
    const cl_int status = status_within(behind, bound_ms);
    test_assert_error(held,
                      "the wait completed while the imported fence was "
                      "pending");
    test_assert_error(status == CL_COMPLETE,
                      "the command behind the wait did not complete within "
                      "10 s of the fence signalling");
    test_assert_error(event_status(waited) == CL_COMPLETE,
                      "the wait did not complete");
    return TEST_PASS;
}

// Export on one queue, import into a second semaphore, wait on another queue
// before the signal may run: the sync_fd carries the ordering between two
// queues of the context with no event between them.
REGISTER_TEST(external_semaphore_sync_fd_export_import_across_queues)
{
    REQUIRE_SYNC_FD(fns, CL_DEVICE_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR, "export");
    if (!device_lists_sync_fd(device,
                              CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR))
    {
        log_info("the device does not import sync_fd semaphores: skipped\n");
        return TEST_SKIPPED_ITSELF;
    }
    cl_int err = CL_SUCCESS;
    clCommandQueueWrapper other =
        clCreateCommandQueueWithProperties(context, device, nullptr, &err);
    test_error(err, "a second queue");
    SemaphoreHolder a{ fns, make_semaphore(fns, context, true, -1, &err) };
    test_error(err, "create an exportable semaphore");
    clEventWrapper gate = clCreateUserEvent(context, &err);
    test_error(err, "clCreateUserEvent");
    cl_event g = gate;
    test_error(fns.signal(queue, 1, &a.s, nullptr, 1, &g, nullptr), "signal");
    clFlush(queue);
    int fd = -1;
    test_error(fns.handle(a.s, device, CL_SEMAPHORE_HANDLE_SYNC_FD_KHR,
                          sizeof(fd), &fd, nullptr),
               "export as sync_fd");
    SemaphoreHolder b{ fns, make_semaphore(fns, context, false, fd, &err) };
    if (err != CL_SUCCESS) close(fd);
    test_error(err, "import the sync_fd into a second semaphore");
    clEventWrapper behind;
    test_error(fns.wait(other, 1, &b.s, nullptr, 0, nullptr, nullptr), "wait");
    test_error(clEnqueueMarkerWithWaitList(other, 0, nullptr, &behind),
               "marker");
    clFlush(other);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const bool held = event_status(behind) > CL_COMPLETE;
    test_error(clSetUserEventStatus(gate, CL_COMPLETE), "clSetUserEventStatus");
    const cl_int status = status_within(behind, bound_ms);
    clFinish(queue);
    test_assert_error(held,
                      "the other queue ran past the wait before the signal "
                      "could run");
    test_assert_error(status == CL_COMPLETE,
                      "the other queue did not go on within 10 s of the "
                      "signal's wait list completing");
    return TEST_PASS;
}

// clReImportSemaphoreSyncFdKHR: "re-imports a new sync fd into a semaphore
// object that was created by importing a sync fd" -- after its first fence
// was waited for, the semaphore waits for the new one: held while it is
// pending, released once it signals.
REGISTER_TEST(external_semaphore_sync_fd_reimport)
{
    REQUIRE_SYNC_FD(fns, CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR, "import");
    if (!fns.reimport)
    {
        log_info("clReImportSemaphoreSyncFdKHR is not handed out "
                 "(cl_khr_external_semaphore_sync_fd before 1.0.1): "
                 "skipped\n");
        return TEST_SKIPPED_ITSELF;
    }
    REQUIRE_PRODUCER_FENCES(timeline);
    const int first = timeline.fence(1);
    test_assert_error(first >= 0, "a producer fence");
    test_assert_error(timeline.advance(), "advancing the producer's timeline"); // signalled
    cl_int err = CL_SUCCESS;
    SemaphoreHolder b{ fns, make_semaphore(fns, context, false, first, &err) };
    if (err != CL_SUCCESS) close(first);
    test_error(err, "create a semaphore importing a sync_fd");
    test_error(fns.wait(queue, 1, &b.s, nullptr, 0, nullptr, nullptr),
               "wait for the first fence");
    test_error(clFinish(queue), "clFinish");
    const int second = timeline.fence(2);
    test_assert_error(second >= 0, "a producer fence");
    err = fns.reimport(b.s, nullptr, second);
    if (err != CL_SUCCESS) close(second);
    test_error(err, "clReImportSemaphoreSyncFdKHR");
    clEventWrapper behind;
    test_error(fns.wait(queue, 1, &b.s, nullptr, 0, nullptr, nullptr),
               "wait for the re-imported fence");
    test_error(clEnqueueMarkerWithWaitList(queue, 0, nullptr, &behind),
               "marker");
    clFlush(queue);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const bool held = event_status(behind) > CL_COMPLETE;
    test_assert_error(timeline.advance(), "advancing the producer's timeline");
    const cl_int status = status_within(behind, bound_ms);
    test_assert_error(held,
                      "the wait on the re-imported fence completed while it "
                      "was pending");
    test_assert_error(status == CL_COMPLETE,
                      "the command behind the wait did not complete within "
                      "10 s of the re-imported fence signalling");
    return TEST_PASS;
}
