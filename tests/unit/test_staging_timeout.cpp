// The copy route's pinned staging (layer/handoff/staging) over a fake ICD
// whose transfer does not complete within the staging's wait (10 s +
// CLDMABUF_FENCE_TIMEOUT_MS): the transfer fails, and its slot, which the
// ICD's DMA still writes, is not used by the next transfer until the ICD
// completed it.  Hidden tag: run by the meson test unit-staging-timeout
// (CLDMABUF_STAGING=pinned), as each timeout costs the wait's full bound.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/core/import_state.hpp"
#include "layer/core/registry.hpp"
#include "layer/core/worker.hpp"
#include "fake_kernel.hpp"
#include "layer/handoff/release_fences.hpp"
#include "layer/handoff/staging.hpp"
#include "layer/sync/dmabuf_bridge.hpp"

using namespace cldmabuf;

namespace {

template <class T>
T handle(uintptr_t v) {
    return reinterpret_cast<T>(v);
}

const cl_device_id kDevice = handle<cl_device_id>(0xd0);
const cl_command_queue kAppQueue = handle<cl_command_queue>(0xa0);
const cl_command_queue kStagingQueue = handle<cl_command_queue>(0xb0);
const cl_context kContext = handle<cl_context>(0xc0);

// The fake ICD's state: the staging memory it maps, each transfer it was
// given, each event's status (CL_COMPLETE at enqueue unless held).
struct Transfer {
    bool read;  // device -> host (the DMA writes `host`)
    const void *host;
    size_t len;
    cl_event ev;
};
std::mutex icd_mutex;
std::vector<uint8_t> staging_memory;
std::vector<Transfer> transfers;
std::map<cl_event, cl_int> statuses;
std::vector<cl_event> released;
bool hold_next_read = false;
uintptr_t next_event = 0x1000;

cl_event new_event(bool held) {
    cl_event e = handle<cl_event>(next_event++);
    statuses[e] = held ? CL_SUBMITTED : CL_COMPLETE;
    return e;
}

cl_int CL_API_CALL queue_info(cl_command_queue, cl_command_queue_info name, size_t size, void *value, size_t *ret) {
    if (name != CL_QUEUE_DEVICE || size < sizeof(cl_device_id)) return CL_INVALID_VALUE;
    *static_cast<cl_device_id *>(value) = kDevice;
    if (ret) *ret = sizeof(cl_device_id);
    return CL_SUCCESS;
}
cl_command_queue CL_API_CALL create_queue(cl_context, cl_device_id, const cl_queue_properties *, cl_int *err) {
    if (err) *err = CL_SUCCESS;
    return kStagingQueue;
}
cl_mem CL_API_CALL create_buffer(cl_context, cl_mem_flags, size_t size, void *, cl_int *err) {
    std::lock_guard lock(icd_mutex);
    staging_memory.assign(size, 0);
    if (err) *err = CL_SUCCESS;
    return handle<cl_mem>(0xe0);
}
void *CL_API_CALL map_buffer(cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t, cl_uint,
                             const cl_event *, cl_event *, cl_int *err) {
    std::lock_guard lock(icd_mutex);
    if (err) *err = CL_SUCCESS;
    return staging_memory.data();
}
cl_int CL_API_CALL write_buffer(cl_command_queue, cl_mem, cl_bool, size_t, size_t len, const void *host, cl_uint,
                                const cl_event *, cl_event *ev) {
    std::lock_guard lock(icd_mutex);
    *ev = new_event(false);
    transfers.push_back({false, host, len, *ev});
    return CL_SUCCESS;
}
cl_int CL_API_CALL read_buffer(cl_command_queue, cl_mem, cl_bool, size_t, size_t len, void *host, cl_uint,
                               const cl_event *, cl_event *ev) {
    std::lock_guard lock(icd_mutex);
    *ev = new_event(hold_next_read);
    hold_next_read = false;
    transfers.push_back({true, host, len, *ev});
    return CL_SUCCESS;
}
cl_int CL_API_CALL event_info(cl_event e, cl_event_info, size_t, void *value, size_t *) {
    std::lock_guard lock(icd_mutex);
    auto it = statuses.find(e);
    if (it == statuses.end()) return CL_INVALID_EVENT;
    *static_cast<cl_int *>(value) = it->second;
    return CL_SUCCESS;
}
cl_int CL_API_CALL release_event(cl_event e) {
    std::lock_guard lock(icd_mutex);
    released.push_back(e);
    return CL_SUCCESS;
}
struct Callback {
    cl_event event = nullptr;
    void(CL_CALLBACK *fn)(cl_event, cl_int, void *) = nullptr;
    void *data = nullptr;
};
Callback callback;
cl_int CL_API_CALL set_callback(cl_event e, cl_int, void(CL_CALLBACK *fn)(cl_event, cl_int, void *), void *data) {
    std::lock_guard lock(icd_mutex);
    callback = {e, fn, data};
    return CL_SUCCESS;
}
cl_int CL_API_CALL ok_queue(cl_command_queue) { return CL_SUCCESS; }
cl_int CL_API_CALL ok_mem(cl_mem) { return CL_SUCCESS; }
cl_int CL_API_CALL unmap(cl_command_queue, cl_mem, void *, cl_uint, const cl_event *, cl_event *) {
    return CL_SUCCESS;
}

struct FakeIcd {
    cl_icd_dispatch saved;
    FakeIcd() {
        saved = dispatch_tables::guarded_next;
        auto &t = dispatch_tables::guarded_next;
        t.clGetCommandQueueInfo = queue_info;
        t.clCreateCommandQueueWithProperties = create_queue;
        t.clCreateBuffer = create_buffer;
        t.clEnqueueMapBuffer = map_buffer;
        t.clEnqueueWriteBuffer = write_buffer;
        t.clEnqueueReadBuffer = read_buffer;
        t.clGetEventInfo = event_info;
        t.clReleaseEvent = release_event;
        t.clFlush = ok_queue;
        t.clFinish = ok_queue;
        t.clReleaseCommandQueue = ok_queue;
        t.clReleaseMemObject = ok_mem;
        t.clEnqueueUnmapMemObject = unmap;
        t.clSetEventCallback = set_callback;
    }
    ~FakeIcd() {
        // The staging is freed on its queue's worker: let that job run first.
        drain_worker(kStagingQueue);
        dispatch_tables::guarded_next = saved;
    }
    static void drain_worker(const void *key) {
        std::promise<void> done;
        post_to_worker(key, [&] { done.set_value(); });
        done.get_future().wait();
    }
};

struct CopyImport {
    std::vector<uint8_t> bytes;
    Import import;
    CopyImport(size_t size, uint8_t fill, uintptr_t mem) : bytes(size, fill) {
        import.mem = handle<cl_mem>(mem);
        import.context = kContext;
        import.route = Route::copy;
        import.size = size;
        import.mapping = bytes.data();
        import.mapping_len = size;
        import.flags = CL_MEM_READ_WRITE;
    }
    ~CopyImport() { forget_import_state(import); }
};

}  // namespace

TEST_CASE("staging: a transfer that outlives its wait keeps its slot from the next transfer until it completed",
          "[.staging-timeout]") {
    REQUIRE(staging_choice() == StagingChoice::pinned);
    FakeIcd icd;
    constexpr size_t N = 1 << 20;  // one chunk: slot 0
    {
        CopyImport a(N, 0x11, 0xf1), b(N, 0x55, 0xf2);
        auto staging = staging_for(a.import, kAppQueue);
        REQUIRE(staging);
        REQUIRE(staging_for(b.import, kAppQueue) == staging);  // one staging per (context, device)

        // A's write-back: the ICD's DMA into slot 0 does not complete in time.
        {
            std::lock_guard lock(icd_mutex);
            hold_next_read = true;
        }
        cl_event writing = nullptr;
        CHECK(staged_to_dmabuf(*staging, a.import, &writing) == CL_OUT_OF_RESOURCES);
        CHECK(writing == nullptr);  // slots, not the dma-buf: the DMA writes only the staging memory
        cl_event stuck = nullptr;
        {
            std::lock_guard lock(icd_mutex);
            REQUIRE(transfers.size() == 1);
            stuck = transfers[0].ev;
            std::memset(staging_memory.data(), 0xaa, N);  // what the DMA is writing into slot 0
        }

        // B's upload while that DMA still writes slot 0: refused, the slot untouched.
        CHECK(staged_to_device(*staging, b.import) != CL_SUCCESS);
        {
            std::lock_guard lock(icd_mutex);
            CHECK(transfers.size() == 1);  // no Write from a slot still being written
            size_t overwritten = 0;
            for (size_t i = 0; i < N; ++i) overwritten += staging_memory[i] != 0xaa;
            CHECK(overwritten == 0);
            CHECK(std::find(released.begin(), released.end(), stuck) == released.end());  // still the ICD's
            statuses[stuck] = CL_COMPLETE;  // the DMA finished
        }

        // Now the slot is free: B's upload goes through slot 0.
        CHECK(staged_to_device(*staging, b.import) == CL_SUCCESS);
        {
            std::lock_guard lock(icd_mutex);
            REQUIRE(transfers.size() == 2);
            CHECK_FALSE(transfers[1].read);
            CHECK(transfers[1].host == staging_memory.data());
            CHECK(staging_memory[0] == 0x55);
            CHECK(std::find(released.begin(), released.end(), stuck) != released.end());
        }
    }
}

TEST_CASE("staging: a failed release's fences are signalled only once its write-back that outlived its wait "
          "completed",
          "[staging]") {
    unit::FakeKernel k;  // no fence source: attach() tells only whether the fence was signalled first
    unit::ScopedKernel scope{&k};
    FakeIcd icd;
    cl_event writer = nullptr;
    {
        std::lock_guard lock(icd_mutex);
        writer = new_event(true);
        callback = {};
    }
    auto before = std::make_shared<sync::DmabufSignal>(), after = std::make_shared<sync::DmabufSignal>();
    IcdEvents writers;
    writers.add(IcdEvent(writer));
    signal_release_fences_after({before, after}, std::move(writers));
    CHECK(before->attach(7) != -ECANCELED);  // not signalled while the ICD still writes the dma-buf
    Callback cb;
    {
        std::lock_guard lock(icd_mutex);
        cb = callback;
    }
    REQUIRE(cb.event == writer);
    cb.fn(writer, CL_COMPLETE, cb.data);  // the write-back completed
    CHECK(after->attach(7) == -ECANCELED);  // signalled
    FakeIcd::drain_worker(writer);
    std::lock_guard lock(icd_mutex);
    CHECK(std::find(released.begin(), released.end(), writer) != released.end());
}
