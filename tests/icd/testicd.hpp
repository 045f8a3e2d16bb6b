// The test ICD's shared state: its objects, its modes, its lock.
//
// A small OpenCL implementation on host memory, loaded through the real ICD
// loader, so that the layer can be tested against ICDs PoCL does not
// resemble: one with native external memory, native semaphores, a native
// clImportMemoryARM, a discrete device, or an OpenCL 1.2 / 2.1 platform.
// README.md in this folder lists the modes.  Commands run at enqueue, or as
// soon as their wait list completes (user events can hold them back); in
// manual mode only when a control runs them (manual.cpp).
#pragma once

#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_icd.h>

// Debian 12's headers predate these names (layer/base/cl_compat.h says more).
#ifndef CL_MEM_DEVICE_HANDLE_LIST_KHR
#define CL_MEM_DEVICE_HANDLE_LIST_KHR 0x2051
#define CL_MEM_DEVICE_HANDLE_LIST_END_KHR 0
#endif

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace testicd {

// CLDMABUF_TESTICD: comma-separated words, read once.
struct Config {
    bool native_opaque_fd = false;  // cl_khr_external_memory(_opaque_fd), handle type 0x2060
    bool native_dmabuf = false;     // cl_khr_external_memory(_dma_buf), handle type 0x2067 (mmaps the fd)
    bool semaphores = false;        // cl_khr_semaphore + external_semaphore(_opaque_fd), stub functions
    bool arm_import = false;        // cl_arm_import_memory(_dma_buf), a native clImportMemoryARM
    bool va_sharing = false;        // cl_intel_va_api_media_sharing (NEO's), stubs that record and refuse
    bool discrete = false;          // GPU type, CL_DEVICE_HOST_UNIFIED_MEMORY false
    bool profiling = false;         // CL_QUEUE_PROFILING_ENABLE supported
    bool quirk_accept_overlap = false;  // overlapping copies succeed (NVIDIA does this)
    // Destructor callbacks run only when PLATFORM_TESTICD_RUN_DESTRUCTORS
    // asks, and the next buffer reuses the released one's handle meanwhile
    // (NVIDIA 580 calls them late; a handle value comes back).
    bool late_destructors = false;
    // The next event gets the handle of the event destroyed last (a stack of
    // them), as ICDs that recycle event objects do.
    bool reuse_events = false;
    // The ICD keeps one reference of its own on every event it creates
    // until PLATFORM_TESTICD_DROP_EVENT_REFS drops them (NVIDIA holds
    // internal references: CL_EVENT_REFERENCE_COUNT stays above 1 after the
    // application's last release).
    bool held_event_refs = false;
    // Nothing completes by itself: commands, and the destructor callbacks of
    // released buffers, wait as steps until PLATFORM_TESTICD_RUN_STEP runs
    // them (manual.cpp; tests/explore schedules them).
    bool manual = false;
    // manual: each event callback is a step of its own, delivered whenever
    // the scheduler says (an ICD that calls them late, from its own thread).
    bool late_callbacks = false;
    // The callbacks of a command terminated by a failed wait list are never
    // called (PoCL 3.1 and 6 do this; docs/icds.md).
    bool no_terminated_callbacks = false;
    // A command's event callbacks are held, not called, until
    // PLATFORM_TESTICD_RUN_CALLBACKS (NVIDIA calls a marker's about 20 ms
    // after it completed behind a transfer; held, any wait on them shows).
    bool held_callbacks = false;
    // callback_delay_ms=N: a command's event callbacks are called from the
    // ICD's own thread N ms after they came due, in order (NVIDIA's about
    // 20 ms behind a transfer, unheld: what a benchmark of the layer's
    // round on such an ICD measures, bench/bench_import.cpp --pool).
    int callback_delay_ms = 0;
    // A terminated command terminates every command behind it in its queue
    // until the queue drained, whatever they wait for (PoCL: an in-order
    // queue's commands depend on the one before).
    bool fail_queue_behind = false;
    int major = 3, minor = 0;       // version=1.2|2.1|3.0
    bool external_memory() const { return native_opaque_fd || native_dmabuf; }
    bool at_least(int maj, int min) const { return major > maj || (major == maj && minor >= min); }
};
const Config &config();

// Test-only platform queries: the log of what the ICD received (a string,
// one call per line), and a query that empties it.
constexpr cl_platform_info PLATFORM_TESTICD_LOG = 0x7E57;
constexpr cl_platform_info PLATFORM_TESTICD_LOG_CLEAR = 0x7E58;
// Test-only fault injection (tests/icd/test_icd_faults.cpp):
// clGetPlatformInfo(p, PLATFORM_TESTICD_FAIL, strlen(spec) + 1, spec, NULL)
// READS `spec` ("clCreateUserEvent:2": the 2nd call of that function from
// now fails with CL_OUT_OF_RESOURCES; "" disarms; "*" only counts), a
// control, not a query.  PLATFORM_TESTICD_FAULT_STATE answers cl_ulong[4]:
// calls of the armed function so far, whether it failed, live buffers, live
// events (the ICD objects a leak would leave).
constexpr cl_platform_info PLATFORM_TESTICD_FAIL = 0x7E59;
constexpr cl_platform_info PLATFORM_TESTICD_FAULT_STATE = 0x7E5A;
// late_destructors: a control (no value) that runs the destructor callbacks
// of the buffers released since the last time.
constexpr cl_platform_info PLATFORM_TESTICD_RUN_DESTRUCTORS = 0x7E5B;
void run_late_destructors();
// Park points (park.cpp): PLATFORM_TESTICD_PARK reads a function name
// ("clEnqueueFillBuffer", "clFinish", ...): that function's next call stops
// inside the ICD (an enqueue before its command is in the queue, clFinish
// after the queue drained) until PLATFORM_TESTICD_UNPARK; PLATFORM_TESTICD_PARKED
// answers a cl_uint, 1 while a call is parked.  Controls like the fault one.
constexpr cl_platform_info PLATFORM_TESTICD_PARK = 0x7E60;
constexpr cl_platform_info PLATFORM_TESTICD_PARKED = 0x7E61;
constexpr cl_platform_info PLATFORM_TESTICD_UNPARK = 0x7E62;
void arm_park(const std::string &function);
void park_point(const char *function);
bool park_state();
void unpark();
// held_event_refs: a control (no value) that drops the ICD's own reference
// on every event created since the last time.
constexpr cl_platform_info PLATFORM_TESTICD_DROP_EVENT_REFS = 0x7E5C;
void drop_held_event_refs();
// manual (manual.cpp): PLATFORM_TESTICD_STEPS answers the runnable steps, a
// string with one line each ("command q0 0x11f5", "callback 0x11f5 0",
// "destroy mem"), in a deterministic order; PLATFORM_TESTICD_RUN_STEP reads
// a cl_uint k and runs step #k of that list on the calling thread (a
// control, like the fault one; CL_INVALID_VALUE past the end);
// PLATFORM_TESTICD_WAITERS answers cl_ulong[2]: threads waiting inside the
// ICD (clFinish, clWaitForEvents, blocking commands), and of those, the
// ones whose wait cannot end before another step runs.
constexpr cl_platform_info PLATFORM_TESTICD_STEPS = 0x7E63;
constexpr cl_platform_info PLATFORM_TESTICD_RUN_STEP = 0x7E64;
constexpr cl_platform_info PLATFORM_TESTICD_WAITERS = 0x7E65;
// Every command not run yet, one line each, with the status of each event
// it waits for (what a deadlock report shows; any mode).
constexpr cl_platform_info PLATFORM_TESTICD_PENDING = 0x7E66;
std::string pending_commands();
std::string manual_steps();
cl_int manual_run_step(cl_uint k);
void manual_waiters(cl_ulong out[2]);
// Under lock(), manual mode: a status query of `ev`.  A thread that polls
// an event that has not ended counts as a waiter while it keeps polling
// (the layer polls its staging transfers).
void note_status_poll(cl_event ev);
// PLATFORM_TESTICD_SCHEDULER (a control, no value): the calling thread is the
// scheduler, whose status queries between steps are never a wait.
constexpr cl_platform_info PLATFORM_TESTICD_SCHEDULER = 0x7E67;
// held_callbacks: a control (no value) that calls every held callback;
// PLATFORM_TESTICD_HELD_CALLBACKS answers how many are held (cl_ulong).
constexpr cl_platform_info PLATFORM_TESTICD_RUN_CALLBACKS = 0x7E68;
constexpr cl_platform_info PLATFORM_TESTICD_HELD_CALLBACKS = 0x7E69;
void run_held_callbacks();
cl_ulong held_callbacks();
void note_scheduler_thread();
void release_event_under_lock(cl_event ev);
// Under lock(): `fn` becomes a step of its own (run without the lock).
void defer_step(std::string label, std::function<void()> fn);
// Under lock(): a thread waits (inside wait_until) on `done`.
void add_waiter(const std::function<bool()> *done);
void remove_waiter(const std::function<bool()> *done);
void arm_failure(const std::string &spec);
bool injected_failure(const char *function);  // true: this call is the one to fail
void fault_state(cl_ulong out[4]);
void record(const std::string &line);
std::string recorded();
void clear_record();
std::string hex(uint64_t v);
std::string properties_text(const cl_mem_properties *props);

// The dispatch table every object starts with (built once from the config:
// the slots of a newer OpenCL version than the platform's stay NULL).
cl_icd_dispatch *dispatch();

enum class Kind : uint32_t { platform = 0x504c4154, device, context, queue, mem, event, semaphore };
void count_object(Kind kind, int delta);  // live buffers and events (PLATFORM_TESTICD_FAULT_STATE)

struct Object {
    cl_icd_dispatch *disp;
    Kind kind;
    cl_uint refs = 1;
};

}  // namespace testicd

// The loader reads the dispatch pointer at offset 0 of every handle.
struct _cl_platform_id : testicd::Object {};
struct _cl_device_id : testicd::Object {};

struct _cl_context : testicd::Object {
    std::vector<cl_context_properties> properties;
    std::vector<std::pair<void(CL_CALLBACK *)(cl_context, void *), void *>> destructors;
};

struct Command;
struct _cl_command_queue : testicd::Object {
    cl_context context = nullptr;
    cl_command_queue_properties properties = 0;
    std::vector<Command *> pending;  // in order; front runs first
    bool behind_failure = false;     // fail_queue_behind: a command ahead was terminated
};

struct _cl_mem : testicd::Object {
    cl_context context = nullptr;
    cl_mem_object_type type = CL_MEM_OBJECT_BUFFER;
    cl_mem_flags flags = 0;
    size_t size = 0;
    char *storage = nullptr;      // the bytes (host memory in every mode)
    void *host_ptr = nullptr;     // CL_MEM_HOST_PTR
    bool owns_storage = false;    // freed on destroy
    void *mapping = nullptr;      // a native dma-buf import's mmap
    size_t mapping_len = 0;
    int owned_fd = -1;            // closed on destroy (native imports)
    cl_uint map_count = 0;
    _cl_mem *parent = nullptr;
    size_t origin = 0;
    std::vector<cl_mem_properties> properties;
    std::vector<std::pair<void(CL_CALLBACK *)(cl_mem, void *), void *>> destructors;
};

struct _cl_event : testicd::Object {
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    cl_command_type type = 0;
    cl_int status = CL_QUEUED;
    cl_ulong times[4] = {0, 0, 0, 0};  // queued, submit, start, end
    struct Callback {
        cl_int when;
        void(CL_CALLBACK *fn)(cl_event, cl_int, void *);
        void *data;
    };
    std::vector<Callback> callbacks;
};

struct _cl_semaphore_khr : testicd::Object {};

namespace testicd {

// One lock for all state: the layer's worker thread completes user events.
std::mutex &lock();
std::condition_variable &changed();
// Work to run after the lock is dropped (application and layer callbacks
// may call back into the ICD).
using Later = std::vector<std::function<void()>>;
void run_later(Later &later);

cl_platform_id the_platform();
cl_device_id the_device();

template <typename T>
bool valid(T *obj, Kind kind) {
    return obj && static_cast<Object *>(obj)->kind == kind && obj->refs > 0;
}

// The OpenCL query convention.
cl_int answer(const void *data, size_t bytes, size_t size, void *value, size_t *size_ret);
template <typename T>
cl_int answer_value(const T &v, size_t size, void *value, size_t *size_ret) {
    return answer(&v, sizeof v, size, value, size_ret);
}
inline cl_int answer_string(const std::string &s, size_t size, void *value, size_t *size_ret) {
    return answer(s.c_str(), s.size() + 1, size, value, size_ret);
}

// Memory (memory.cpp).
void retain_mem(cl_mem mem);
void release_mem(cl_mem mem, Later &later);  // under lock()
char *mem_bytes(cl_mem mem);                 // storage of a buffer or sub-buffer
// A buffer over `storage` (under lock(); takes a context reference).
cl_mem new_buffer(cl_context ctx, cl_mem_flags flags, size_t size, char *storage, bool owns);
// A native dma-buf import: the buffer over an mmap of `fd` (the fd is the
// ICD's from now on).  Not under lock().
cl_mem import_dmabuf_fd(cl_context ctx, cl_mem_flags flags, int fd, size_t size, cl_int *errcode_ret);

// Commands (commands.cpp).  `work` runs under lock() once every event of
// the wait list completed; its result is the event's final status.
cl_int submit(cl_command_queue queue, cl_command_type type, cl_uint num_events, const cl_event *wait_list,
              cl_event *event, bool blocking, std::vector<cl_mem> keep, std::function<cl_int()> work);
cl_event new_event(cl_context context, cl_command_queue queue, cl_command_type type);
// The queues with commands, in the order of their first command (under
// lock()); which of a queue's commands may run now (indices into its
// pending list: the front whose wait list ended, or on an out-of-order queue
// in manual mode every such command before a barrier); run one; then free
// the released queues that drained and wake the waiters.
const std::vector<cl_command_queue> &command_queues();
bool front_ready(cl_command_queue q);
std::vector<size_t> ready_commands(cl_command_queue q);
cl_command_type command_type(cl_command_queue q, size_t i);
void run_command(cl_command_queue q, size_t i, Later &later);
void run_front(cl_command_queue q, Later &later);
void pump_all(Later &later);

// Extension functions (extensions.cpp).
void *extension_function(const char *name);
std::string extension_string();
std::vector<cl_name_version> extension_versions();
std::vector<cl_external_memory_handle_type_khr> import_handle_types();

// Each file fills its part of the table.
void fill_platform_slots(cl_icd_dispatch &d);
void fill_memory_slots(cl_icd_dispatch &d);
void fill_command_slots(cl_icd_dispatch &d);

}  // namespace testicd
