// A*: clEnqueueAcquireExternalMemObjectsKHR / clEnqueueReleaseExternalMemObjectsKHR
// (api/opencl_runtime_layer.asciidoc, "Acquiring and Releasing External Memory
// Objects"): the error lists (identical for both commands), the command types,
// the event semantics and what acquire/release guarantee about the contents.
#include <chrono>
#include <thread>

#include "spec_common.hpp"

using namespace spec;

namespace {

cl_mem plain_buffer(cl_context ctx, size_t size = 4096) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    return m;
}

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

// ----------------------------------------------------------- CL_INVALID_VALUE

// "CL_INVALID_VALUE if num_mem_objects is zero and mem_objects is not a NULL
// value, or if num_mem_objects is greater than 0 and mem_objects is NULL."
TEST_CASE("A1: CL_INVALID_VALUE when num_mem_objects and mem_objects disagree", "[spec][acquire]") {
    ClEnv env;
    cl_mem plain = plain_buffer(env.context);
    for (const AcqRel &f : both_functions(env)) {
        INFO(f.name);
        CHECK(f.fn(env.queue, 0, &plain, 0, nullptr, nullptr) == CL_INVALID_VALUE);
        CHECK(f.fn(env.queue, 1, nullptr, 0, nullptr, nullptr) == CL_INVALID_VALUE);
        CHECK(f.fn(env.queue, 3, nullptr, 0, nullptr, nullptr) == CL_INVALID_VALUE);
    }
    clReleaseMemObject(plain);
}

// ------------------------------------------------------ CL_INVALID_MEM_OBJECT

// "CL_INVALID_MEM_OBJECT if any of the memory objects in mem_objects is not a
// valid OpenCL memory object created using an external memory handle."
TEST_CASE("A2: CL_INVALID_MEM_OBJECT for objects not created from an external memory handle",
          "[spec][acquire]") {
    ClEnv env;
    cl_mem plain = plain_buffer(env.context);
    const cl_mem_properties none[] = {0};
    cl_int err = CL_SUCCESS;
    cl_mem with_props = clCreateBufferWithProperties(env.context, none, CL_MEM_READ_WRITE, 64, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem null_mem = nullptr;
    for (const AcqRel &f : both_functions(env)) {
        INFO(f.name);
        if (e2e::icd_has_own_external_memory(env.device)) {
            // Plain buffers are the ICD's objects and the ICD answers for
            // them (NVIDIA 580: CL_SUCCESS); the layer never takes that away.
            WARN(f.name << " of a plain buffer is the ICD's own: it answered "
                        << f.fn(env.queue, 1, &plain, 0, nullptr, nullptr));
        } else {
            CHECK(f.fn(env.queue, 1, &plain, 0, nullptr, nullptr) == CL_INVALID_MEM_OBJECT);
            CHECK(f.fn(env.queue, 1, &with_props, 0, nullptr, nullptr) == CL_INVALID_MEM_OBJECT);
        }
        CHECK(f.fn(env.queue, 1, &null_mem, 0, nullptr, nullptr) == CL_INVALID_MEM_OBJECT);
    }
    clReleaseMemObject(plain);
    clReleaseMemObject(with_props);
}

TEST_CASE("A3: CL_INVALID_MEM_OBJECT when any one of several objects is not an import", "[spec][acquire]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = e2e::make_dmabuf(4096);
    cl_mem imported = import_buffer(env.context, buf);
    cl_mem plain = plain_buffer(env.context);
    cl_mem mixed[] = {imported, plain};
    for (const AcqRel &f : both_functions(env)) {
        INFO(f.name);
        CHECK(f.fn(env.queue, 2, mixed, 0, nullptr, nullptr) == CL_INVALID_MEM_OBJECT);
    }
    clReleaseMemObject(plain);
    clReleaseMemObject(imported);
}

// --------------------------------------------------- CL_INVALID_COMMAND_QUEUE

// "if command_queue is not a valid command-queue"
TEST_CASE("A4: CL_INVALID_COMMAND_QUEUE for a NULL command-queue", "[spec][acquire]") {
    ClEnv env;
    for (const AcqRel &f : both_functions(env)) {
        INFO(f.name);
        CHECK(f.fn(nullptr, 0, nullptr, 0, nullptr, nullptr) == CL_INVALID_COMMAND_QUEUE);
    }
    if (e2e::have_dmabuf()) {
        Dmabuf buf = e2e::make_dmabuf(4096);
        cl_mem imported = import_buffer(env.context, buf);
        for (const AcqRel &f : both_functions(env)) {
            INFO(f.name);
            CHECK(f.fn(nullptr, 1, &imported, 0, nullptr, nullptr) == CL_INVALID_COMMAND_QUEUE);
        }
        clReleaseMemObject(imported);
    }
}

// "if device associated with command_queue is not one of the devices specified
// by CL_MEM_DEVICE_HANDLE_LIST_KHR at the time of creating one or more of
// mem_objects"; and the restriction "The acquire [release] must be performed on
// a command-queue associated with a device that was one of the devices
// specified via CL_MEM_DEVICE_HANDLE_LIST_KHR".
// PoCL (3.1 and 6) reports the parent device in CL_CONTEXT_DEVICES of a sub-device context
// (the ICD test below shows it); the layer keeps the devices the context was created with
// (layer/core/context_devices.hpp), so this passes there too.
TEST_CASE("A5: CL_INVALID_COMMAND_QUEUE for a queue whose device is not in the device handle list",
          "[spec][acquire][subdevices]") {
    REQUIRE_DMABUF();
    ClEnv env;
    SubDevices sd(env.device);
    REQUIRE_SUBDEVICES(sd);
    SubDeviceContext two(env.platform, sd);
    cl_command_queue listed = two.q[0], unlisted = two.q[1];
    Dmabuf buf = e2e::make_dmabuf(4096);
    cl_mem mem = import_buffer(two.ctx, buf, 0, {kDeviceList, dev_prop(sd.devices[0]), kDeviceListEnd});
    for (const AcqRel &f : both_functions(env)) {
        INFO(f.name);
        CHECK(f.fn(unlisted, 1, &mem, 0, nullptr, nullptr) == CL_INVALID_COMMAND_QUEUE);
    }
    // The listed device's queue is fine.
    check_acquire_release(env, listed, mem);
    clReleaseMemObject(mem);
}

// "if one or more of mem_objects belong to a context that does not contain a
// device associated with command_queue"
// PoCL (3.1 and 6) reports the parent device in CL_CONTEXT_DEVICES of a sub-device context
// (the ICD test below shows it); the layer keeps the devices the context was created with
// (layer/core/context_devices.hpp), so this passes there too.
TEST_CASE("A6: CL_INVALID_COMMAND_QUEUE for objects of a context without the queue's device",
          "[spec][acquire][subdevices]") {
    REQUIRE_DMABUF();
    ClEnv env;
    SubDevices sd(env.device);
    REQUIRE_SUBDEVICES(sd);
    cl_context ctx0 = make_context(env.platform, {sd.devices[0]});
    cl_context ctx1 = make_context(env.platform, {sd.devices[1]});
    cl_command_queue q1 = make_queue(ctx1, sd.devices[1]);
    Dmabuf buf = e2e::make_dmabuf(4096);
    cl_mem mem = import_buffer(ctx0, buf);  // ctx0 does not contain sd.devices[1]
    for (const AcqRel &f : both_functions(env)) {
        INFO(f.name);
        CHECK(f.fn(q1, 1, &mem, 0, nullptr, nullptr) == CL_INVALID_COMMAND_QUEUE);
    }
    clReleaseMemObject(mem);
    clReleaseCommandQueue(q1);
    clReleaseContext(ctx0);
    clReleaseContext(ctx1);
}

// An object of another context that *does* contain the queue's device: no
// entry of the extension's list describes it, so the core rule for enqueued
// commands applies ("CL_INVALID_CONTEXT if the context associated with
// command_queue and [the memory objects] are not the same", e.g.
// clEnqueueMigrateMemObjects).
TEST_CASE("A7: CL_INVALID_CONTEXT for objects of another context on the same device", "[spec][acquire]") {
    REQUIRE_DMABUF();
    ClEnv env;
    cl_context other = make_context(env.platform, {env.device});
    Dmabuf buf = e2e::make_dmabuf(4096);
    cl_mem mem = import_buffer(other, buf);
    for (const AcqRel &f : both_functions(env)) {
        INFO(f.name);
        CHECK(f.fn(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_INVALID_CONTEXT);
    }
    clReleaseMemObject(mem);
    clReleaseContext(other);
}

// ------------------------------------------------- CL_INVALID_EVENT_WAIT_LIST

namespace {

// "CL_INVALID_EVENT_WAIT_LIST if event_wait_list is NULL and
// num_events_in_wait_list is not 0, or if event_wait_list is not NULL and
// num_events_in_wait_list is 0, or if event objects in event_wait_list are
// not valid events."
void check_wait_list_errors(const ClEnv &env, clEnqueueAcquireExternalMemObjectsKHR_fn fn) {
    cl_event user = user_event(env.context);
    cl_event invalid = nullptr;
    CHECK(fn(env.queue, 0, nullptr, 1, nullptr, nullptr) == CL_INVALID_EVENT_WAIT_LIST);
    CHECK(fn(env.queue, 0, nullptr, 0, &user, nullptr) == CL_INVALID_EVENT_WAIT_LIST);
    CHECK(fn(env.queue, 0, nullptr, 1, &invalid, nullptr) == CL_INVALID_EVENT_WAIT_LIST);
    if (e2e::have_dmabuf()) {
        Dmabuf buf = e2e::make_dmabuf(4096);
        cl_mem mem = import_buffer(env.context, buf);
        INFO("with an import");
        CHECK(fn(env.queue, 1, &mem, 1, nullptr, nullptr) == CL_INVALID_EVENT_WAIT_LIST);
        CHECK(fn(env.queue, 1, &mem, 0, &user, nullptr) == CL_INVALID_EVENT_WAIT_LIST);
        CHECK(fn(env.queue, 1, &mem, 1, &invalid, nullptr) == CL_INVALID_EVENT_WAIT_LIST);
        clReleaseMemObject(mem);
    }
    clSetUserEventStatus(user, CL_COMPLETE);
    clFinish(env.queue);
    clReleaseEvent(user);
}

}  // namespace

TEST_CASE("A8: acquire: CL_INVALID_EVENT_WAIT_LIST for each of its three conditions", "[spec][acquire]") {
    ClEnv env;
    REQUIRE(env.acquire);
    check_wait_list_errors(env, env.acquire);
}

TEST_CASE("A8r: release: CL_INVALID_EVENT_WAIT_LIST for each of its three conditions", "[spec][acquire]") {
    ClEnv env;
    REQUIRE(env.release);
    check_wait_list_errors(env, env.release);
}

// "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if the execution status of any
// of the events in event_wait_list is a negative integer value."  The event
// has failed before the call.  (If the command is enqueued anyway it must at
// least never complete successfully; a command stuck behind the failed event
// is abandoned with its own context rather than waited for.)
TEST_CASE("A9: CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST for an already failed event in the wait list",
          "[spec][acquire]") {
    REQUIRE_DMABUF();
    ClEnv env;
    for (const AcqRel &f : both_functions(env)) {
        INFO(f.name);
        AbandonableImport o(env);
        cl_event failed = o.gate;
        REQUIRE(clSetUserEventStatus(failed, -1) == CL_SUCCESS);
        cl_event ev = nullptr;
        const cl_int err = f.fn(o.q, 1, &o.mem, 1, &failed, &ev);
        CHECK(err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        if (err == CL_SUCCESS) {
            REQUIRE(ev != nullptr);
            const cl_int s = wait_status(ev, 300);
            CHECK(s != CL_COMPLETE);
            if (s >= 0) continue;  // stuck behind the failed event: abandon q/ctx, never wait on them
            clReleaseEvent(ev);
        }
        o.finish_and_release();
    }
}

// Core execution model: "In order for the execution status of an enqueued
// command to change from CL_SUBMITTED to CL_RUNNING, all events that this
// command is waiting on must have completed successfully".  A dependency that
// fails after the acquire/release was enqueued: the command never reports
// CL_COMPLETE (it is terminated, or never runs).
// Hidden by default: PoCL 3.1 aborts the process (pocl_update_event_failed:
// "PTHREAD ERROR ... Invalid argument") when a marker that waits on a user
// event fails while a later command of the in-order queue waits on another
// user event — reproduced without the layer (docs/conformance.md).  The VM
// lane runs it by tag on PoCL 6 and rusticl.
TEST_CASE("A9b: a wait-list event failing after enqueue: the command never completes successfully",
          "[spec][acquire][events][.][pocl31-abort]") {
    REQUIRE_DMABUF();
    ClEnv env;
    for (const AcqRel &f : both_functions(env)) {
        INFO(f.name);
        AbandonableImport o(env);
        cl_event ev = nullptr;
        REQUIRE(f.fn(o.q, 1, &o.mem, 1, &o.gate, &ev) == CL_SUCCESS);
        sleep_ms(20);
        REQUIRE(clSetUserEventStatus(o.gate, -7) == CL_SUCCESS);
        const cl_int s = wait_status(ev, 500);
        CHECK(s != CL_COMPLETE);
        CHECK(s != CL_RUNNING);
        if (s >= 0) continue;  // never ran: abandon q/ctx
        clReleaseEvent(ev);
        o.finish_and_release();
    }
}

// ---------------------------------------------------------- success semantics

// "If num_mem_objects is 0 and mem_objects is NULL, the command will trivially
// succeed after its event dependencies are satisfied and will update its
// completion event."
TEST_CASE("A10: no objects: succeeds after the wait list is satisfied and completes its event",
          "[spec][acquire][events]") {
    ClEnv env;
    for (const AcqRel &f : both_functions(env)) {
        INFO(f.name);
        cl_event gate = user_event(env.context);
        cl_event ev = nullptr;
        REQUIRE(f.fn(env.queue, 0, nullptr, 1, &gate, &ev) == CL_SUCCESS);
        REQUIRE(ev != nullptr);
        sleep_ms(50);
        CHECK(event_status(ev) > CL_COMPLETE);  // the dependency is not satisfied yet
        REQUIRE(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS);
        CHECK(wait_status(ev) == CL_COMPLETE);
        clReleaseEvent(ev);
        clReleaseEvent(gate);
        // And with no wait list at all.
        REQUIRE(f.fn(env.queue, 0, nullptr, 0, nullptr, &ev) == CL_SUCCESS);
        CHECK(clWaitForEvents(1, &ev) == CL_SUCCESS);
        CHECK(event_status(ev) == CL_COMPLETE);
        clReleaseEvent(ev);
    }
}

// "New return values from clGetEventInfo when param_name is
// CL_EVENT_COMMAND_TYPE: CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR,
// CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR"
TEST_CASE("A11: acquire and release events report their command types", "[spec][acquire][events]") {
    ClEnv env;
    cl_event ev = nullptr;
    REQUIRE(env.acquire(env.queue, 0, nullptr, 0, nullptr, &ev) == CL_SUCCESS);
    CHECK(event_type(ev) == CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR);
    clWaitForEvents(1, &ev);
    CHECK(event_type(ev) == CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR);  // still, once complete
    clReleaseEvent(ev);
    REQUIRE(env.release(env.queue, 0, nullptr, 0, nullptr, &ev) == CL_SUCCESS);
    CHECK(event_type(ev) == CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR);
    clWaitForEvents(1, &ev);
    clReleaseEvent(ev);
    if (e2e::have_dmabuf()) {
        Dmabuf buf = e2e::make_dmabuf(4096);
        cl_mem mem = import_buffer(env.context, buf);
        cl_event acq = nullptr, rel = nullptr;
        REQUIRE(env.acquire(env.queue, 1, &mem, 0, nullptr, &acq) == CL_SUCCESS);
        REQUIRE(env.release(env.queue, 1, &mem, 1, &acq, &rel) == CL_SUCCESS);
        CHECK(event_type(acq) == CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR);
        CHECK(event_type(rel) == CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR);
        REQUIRE(clWaitForEvents(1, &rel) == CL_SUCCESS);
        CHECK(event_status(acq) == CL_COMPLETE);
        CHECK(event_status(rel) == CL_COMPLETE);
        clReleaseEvent(acq);
        clReleaseEvent(rel);
        clReleaseMemObject(mem);
    }
}

// "event_wait_list points to the list of events that need to complete before
// [the command] can be executed ... The events specified in event_wait_list act
// as synchronization points."  "event returns an event object that identifies
// this particular command".
TEST_CASE("A12: an import's acquire and release wait for their wait list, then complete",
          "[spec][acquire][events]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = e2e::make_dmabuf(4096);
    cl_mem mem = import_buffer(env.context, buf);
    for (const AcqRel &f : both_functions(env)) {
        INFO(f.name);
        cl_event gate = user_event(env.context);
        cl_event ev = nullptr;
        REQUIRE(f.fn(env.queue, 1, &mem, 1, &gate, &ev) == CL_SUCCESS);
        sleep_ms(50);
        CHECK(event_status(ev) > CL_COMPLETE);
        cl_command_queue q = nullptr;
        cl_context c = nullptr;
        REQUIRE(clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, nullptr) == CL_SUCCESS);
        REQUIRE(clGetEventInfo(ev, CL_EVENT_CONTEXT, sizeof c, &c, nullptr) == CL_SUCCESS);
        CHECK(q == env.queue);
        CHECK(c == env.context);
        REQUIRE(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS);
        CHECK(wait_status(ev) == CL_COMPLETE);
        clReleaseEvent(ev);
        clReleaseEvent(gate);
    }
    clReleaseMemObject(mem);
}

// "event can be NULL in which case it will not be possible for the application
// to query the status of this command" — the command still runs.
TEST_CASE("A13: event may be NULL", "[spec][acquire][events]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = e2e::make_dmabuf(4096);
    cl_mem mem = import_buffer(env.context, buf);
    check_acquire_release(env, env.queue, mem);  // acquire and release both with event == NULL
    clReleaseMemObject(mem);
}

// Core event profiling: on a queue with CL_QUEUE_PROFILING_ENABLE every
// command's event has QUEUED <= SUBMIT <= START <= END once complete.
TEST_CASE("A14: on a profiling queue acquire/release events carry profiling info", "[spec][acquire][events]") {
    REQUIRE_DMABUF();
    ClEnv env;
    cl_command_queue q = env.make_queue(CL_QUEUE_PROFILING_ENABLE);
    Dmabuf buf = e2e::make_dmabuf(4096);
    cl_mem mem = import_buffer(env.context, buf);
    cl_event acq = nullptr, rel = nullptr;
    REQUIRE(env.acquire(q, 1, &mem, 0, nullptr, &acq) == CL_SUCCESS);
    REQUIRE(env.release(q, 1, &mem, 0, nullptr, &rel) == CL_SUCCESS);
    REQUIRE(clWaitForEvents(1, &rel) == CL_SUCCESS);
    REQUIRE(clWaitForEvents(1, &acq) == CL_SUCCESS);
    for (cl_event ev : {acq, rel}) {
        cl_ulong t[4] = {};
        const cl_profiling_info what[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                           CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
        for (int i = 0; i < 4; ++i)
            CHECK(clGetEventProfilingInfo(ev, what[i], sizeof t[i], &t[i], nullptr) == CL_SUCCESS);
        CHECK(t[0] <= t[1]);
        CHECK(t[1] <= t[2]);
        CHECK(t[2] <= t[3]);
        CHECK(t[3] != 0);
    }
    clReleaseEvent(acq);
    clReleaseEvent(rel);
    clReleaseMemObject(mem);
    clReleaseCommandQueue(q);
}

// "Applications must acquire the memory objects ... This is to guarantee that
// the state of the memory objects is up-to-date and they are accessible to
// OpenCL."  / "Applications must release ... This is to guarantee that the
// state of memory objects is up-to-date and that they are accessible outside
// of OpenCL."
TEST_CASE("A15: after acquire OpenCL sees the dma-buf's contents; after release the dma-buf sees OpenCL's writes",
          "[spec][acquire][data][kernel]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = e2e::make_dmabuf(16384);
    const size_t n = buf.size;
    Mapping view(buf);
    fill_pattern(view.bytes(), n, 7);  // written "by the other API"
    cl_mem mem = import_buffer(env.context, buf);
    const std::vector<unsigned char> seen = acquire_and_read(env, env.queue, mem, n);
    CHECK(has_pattern(seen.data(), n, 7));
    std::vector<unsigned char> next(n);
    fill_pattern(next.data(), n, 99);
    REQUIRE(clEnqueueWriteBuffer(env.queue, mem, CL_FALSE, 0, n, next.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    release_and_wait(env, env.queue, mem);
    CHECK(has_pattern(view.bytes(), n, 99));
    clReleaseMemObject(mem);
}

// Same through a kernel, the way the spec's sample uses imports.
TEST_CASE("A16: a kernel on an acquired import reads and writes the dma-buf", "[spec][acquire][data][kernel]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf buf = e2e::make_dmabuf(4096);
    Mapping view(buf);
    auto *words = reinterpret_cast<cl_uint *>(view.ptr);
    const size_t count = buf.size / sizeof(cl_uint);
    for (size_t i = 0; i < count; ++i) words[i] = static_cast<cl_uint>(i);
    cl_mem mem = import_buffer(env.context, buf);
    cl_kernel k = env.build_kernel("kernel void twice(global uint *p) { size_t i = get_global_id(0); p[i] = 2 * p[i] + 1; }",
                                   "twice");
    REQUIRE(clSetKernelArg(k, 0, sizeof mem, &mem) == CL_SUCCESS);
    cl_event acq = nullptr, run = nullptr, rel = nullptr;
    REQUIRE(env.acquire(env.queue, 1, &mem, 0, nullptr, &acq) == CL_SUCCESS);
    REQUIRE(clEnqueueNDRangeKernel(env.queue, k, 1, nullptr, &count, nullptr, 1, &acq, &run) == CL_SUCCESS);
    REQUIRE(env.release(env.queue, 1, &mem, 1, &run, &rel) == CL_SUCCESS);
    REQUIRE(clWaitForEvents(1, &rel) == CL_SUCCESS);
    bool ok = true;
    for (size_t i = 0; i < count; ++i) ok &= words[i] == 2 * i + 1;
    CHECK(ok);
    for (cl_event e : {acq, run, rel}) clReleaseEvent(e);
    clReleaseKernel(k);
    clReleaseMemObject(mem);
}

// "The memory object will be acquired for all devices specified via
// CL_MEM_DEVICE_HANDLE_LIST_KHR" (and released likewise): acquire on one
// listed device's queue, use and release on the other's (the spec's sample
// does exactly this with cq1/cq2).
// PoCL (3.1 and 6) reports the parent device in CL_CONTEXT_DEVICES of a sub-device context
// (the ICD test below shows it); the layer keeps the devices the context was created with
// (layer/core/context_devices.hpp), so this passes there too.
TEST_CASE("A17: acquired for all listed devices: acquire on one device, use and release on another",
          "[spec][acquire][data][subdevices]") {
    REQUIRE_DMABUF();
    ClEnv env;
    SubDevices sd(env.device);
    REQUIRE_SUBDEVICES(sd);
    SubDeviceContext two(env.platform, sd);
    cl_command_queue q0 = two.q[0], q1 = two.q[1];
    Dmabuf buf = e2e::make_dmabuf(4096);
    const size_t n = buf.size;
    Mapping view(buf);
    fill_pattern(view.bytes(), n, 3);
    cl_mem mem = import_buffer(two.ctx, buf, 0,
                               {kDeviceList, dev_prop(sd.devices[0]), dev_prop(sd.devices[1]), kDeviceListEnd});
    cl_event acq = nullptr, rd = nullptr, wr = nullptr, rel = nullptr;
    REQUIRE(env.acquire(q0, 1, &mem, 0, nullptr, &acq) == CL_SUCCESS);
    std::vector<unsigned char> seen(n), next(n);
    fill_pattern(next.data(), n, 4);
    REQUIRE(clEnqueueReadBuffer(q1, mem, CL_FALSE, 0, n, seen.data(), 1, &acq, &rd) == CL_SUCCESS);
    REQUIRE(clEnqueueWriteBuffer(q1, mem, CL_FALSE, 0, n, next.data(), 1, &rd, &wr) == CL_SUCCESS);
    REQUIRE(env.release(q1, 1, &mem, 1, &wr, &rel) == CL_SUCCESS);
    REQUIRE(clWaitForEvents(1, &rel) == CL_SUCCESS);
    CHECK(has_pattern(seen.data(), n, 3));
    CHECK(has_pattern(view.bytes(), n, 4));
    for (cl_event e : {acq, rd, wr, rel}) clReleaseEvent(e);
    clFinish(q0);
    clReleaseMemObject(mem);
}

// num_mem_objects/mem_objects: "the number of memory objects to acquire" /
// "a list of valid memory objects" — several imports in one command.
TEST_CASE("A18: several imports are acquired and released by one command", "[spec][acquire][data]") {
    REQUIRE_DMABUF();
    ClEnv env;
    Dmabuf a = e2e::make_dmabuf(4096), b = e2e::make_dmabuf(4096), c = e2e::make_dmabuf(4096);
    Mapping va(a), vb(b), vc(c);
    fill_pattern(va.bytes(), a.size, 11);
    fill_pattern(vb.bytes(), b.size, 22);
    cl_mem mems[3] = {import_buffer(env.context, a), import_buffer(env.context, b), import_buffer(env.context, c)};
    REQUIRE(env.acquire(env.queue, 3, mems, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clEnqueueCopyBuffer(env.queue, mems[0], mems[2], 0, 0, 2048, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clEnqueueCopyBuffer(env.queue, mems[1], mems[2], 2048, 2048, 2048, 0, nullptr, nullptr) == CL_SUCCESS);
    cl_event rel = nullptr;
    REQUIRE(env.release(env.queue, 3, mems, 0, nullptr, &rel) == CL_SUCCESS);
    REQUIRE(clWaitForEvents(1, &rel) == CL_SUCCESS);
    std::vector<unsigned char> want(4096), tmp(4096);
    fill_pattern(tmp.data(), 4096, 11);
    std::memcpy(want.data(), tmp.data(), 2048);
    fill_pattern(tmp.data(), 4096, 22);
    std::memcpy(want.data() + 2048, tmp.data() + 2048, 2048);
    CHECK(std::memcmp(vc.bytes(), want.data(), 4096) == 0);
    clReleaseEvent(rel);
    for (cl_mem m : mems) clReleaseMemObject(m);
}
