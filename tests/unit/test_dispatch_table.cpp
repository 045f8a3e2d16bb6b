// The layer's one dispatch table (layer/entry/dispatch_table.cpp) over fake target
// tables: exactly which slots the layer replaces (the list below: adding or
// dropping a slot there fails here until this list says so too), that a
// slot the target leaves NULL stays NULL unless the layer provides it on
// purpose, that every extension function name resolves, and that the slots
// several features check (layer/entry/entry_chains.cpp) refuse before the target
// is called and call it exactly once otherwise.
#include <catch2/catch_test_macros.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/entry/dispatch_table.hpp"
#include "layer/egl/egl.hpp"
#include "layer/queue/looked_up.hpp"
#include "layer/queue/epoch.hpp"
#include "layer/core/registry.hpp"

using namespace cldmabuf;

namespace {

constexpr size_t kSlots = sizeof(cl_icd_dispatch) / sizeof(void *);

struct Slot {
    size_t index;
    const char *name;
};
#define SLOT(name) Slot{offsetof(cl_icd_dispatch, name) / sizeof(void *), #name}

// Set wherever the target has the slot: a check or correction around the target's function.
const std::vector<Slot> wrapped = {
    SLOT(clGetPlatformInfo), SLOT(clGetDeviceInfo), SLOT(clGetExtensionFunctionAddressForPlatform),
    SLOT(clGetExtensionFunctionAddress),
    SLOT(clCreateSubBuffer), SLOT(clGetMemObjectInfo), SLOT(clGetImageInfo),
    SLOT(clGetEventInfo), SLOT(clReleaseEvent), SLOT(clWaitForEvents), SLOT(clSetUserEventStatus),
    SLOT(clSetEventCallback),
    SLOT(clGetEventProfilingInfo), SLOT(clFinish), SLOT(clCreateCommandQueue), SLOT(clRetainCommandQueue),
    SLOT(clReleaseCommandQueue),
    SLOT(clEnqueueReadBuffer), SLOT(clEnqueueReadBufferRect), SLOT(clEnqueueWriteBuffer),
    SLOT(clEnqueueWriteBufferRect), SLOT(clEnqueueFillBuffer), SLOT(clEnqueueWriteImage), SLOT(clEnqueueFillImage),
    SLOT(clEnqueueCopyBuffer), SLOT(clEnqueueCopyBufferRect), SLOT(clEnqueueCopyImage),
    SLOT(clEnqueueCopyImageToBuffer), SLOT(clEnqueueCopyBufferToImage),
    SLOT(clEnqueueMapBuffer), SLOT(clEnqueueMapImage), SLOT(clEnqueueUnmapMemObject),
    // stale handles (layer/import/fresh_handles.hpp, layer/core/events.cpp)
    SLOT(clCreateBuffer), SLOT(clCreateImage), SLOT(clCreateImage2D), SLOT(clCreateImage3D), SLOT(clCreatePipe),
    SLOT(clRetainMemObject), SLOT(clReleaseMemObject), SLOT(clRetainEvent), SLOT(clCreateUserEvent),
    // VA-API sharing's contexts ahead of egl's, then the record of their devices
    // (layer/entry/entry_chains_interop.cpp, layer/entry/entry_context.cpp)
    SLOT(clCreateContext), SLOT(clCreateContextFromType), SLOT(clGetContextInfo), SLOT(clReleaseContext),
};
// Counted in the enqueue epoch, then the target's (layer/queue/passthrough.hpp): with
// `wrapped`, every clEnqueue* slot that has a function type on Linux.
const std::vector<Slot> counted = {
    SLOT(clEnqueueReadImage), SLOT(clEnqueueNDRangeKernel), SLOT(clEnqueueTask), SLOT(clEnqueueNativeKernel),
    SLOT(clEnqueueMarker), SLOT(clEnqueueWaitForEvents), SLOT(clEnqueueBarrier), SLOT(clEnqueueMigrateMemObjects),
    SLOT(clEnqueueMarkerWithWaitList), SLOT(clEnqueueBarrierWithWaitList), SLOT(clEnqueueSVMFree),
    SLOT(clEnqueueSVMMemcpy), SLOT(clEnqueueSVMMemFill), SLOT(clEnqueueSVMMap), SLOT(clEnqueueSVMUnmap),
    SLOT(clEnqueueSVMMigrateMem),
};
// Counted too, unless egl provides them (then egl counts).
const std::vector<Slot> counted_unless_egl = {
    SLOT(clEnqueueAcquireGLObjects), SLOT(clEnqueueReleaseGLObjects), SLOT(clEnqueueAcquireEGLObjectsKHR),
    SLOT(clEnqueueReleaseEGLObjectsKHR),
};
// Memory-object creations whose handle goes through fresh_mem(), unless egl provides them.
const std::vector<Slot> fresh_unless_egl = {
    SLOT(clCreateFromGLBuffer), SLOT(clCreateFromGLTexture), SLOT(clCreateFromGLTexture2D),
    SLOT(clCreateFromGLTexture3D), SLOT(clCreateFromGLRenderbuffer), SLOT(clCreateFromEGLImageKHR),
};
// Set even where the target has none: mapped down for a pre-3.0 / pre-2.0 ICD (layer/icd/slots.hpp).
const std::vector<Slot> provided = {
    SLOT(clCreateBufferWithProperties), SLOT(clCreateImageWithProperties), SLOT(clCreateCommandQueueWithProperties),
};
// layer/egl, unless CLDMABUF_EGL=off or built without EGL headers.
const std::vector<Slot> egl_wrapped = {};  // its context slots are the interop chain's (in `wrapped`)
const std::vector<Slot> egl_provided = {
    SLOT(clCreateFromEGLImageKHR), SLOT(clEnqueueAcquireEGLObjectsKHR), SLOT(clEnqueueReleaseEGLObjectsKHR),
    SLOT(clCreateFromGLTexture), SLOT(clCreateFromGLTexture2D), SLOT(clCreateFromGLTexture3D),
    SLOT(clCreateFromGLRenderbuffer), SLOT(clCreateFromGLBuffer), SLOT(clEnqueueAcquireGLObjects),
    SLOT(clEnqueueReleaseGLObjects), SLOT(clGetGLObjectInfo), SLOT(clGetGLTextureInfo), SLOT(clGetGLContextInfoKHR),
    SLOT(clCreateEventFromGLsyncKHR),
};

const std::vector<std::string> layer_names = {
    "clEnqueueAcquireExternalMemObjectsKHR", "clEnqueueReleaseExternalMemObjectsKHR", "clImportMemoryARM",
    "clGetDeviceIDsFromVA_APIMediaAdapterINTEL", "clCreateFromVA_APIMediaSurfaceINTEL",
    "clEnqueueAcquireVA_APIMediaSurfacesINTEL", "clEnqueueReleaseVA_APIMediaSurfacesINTEL",
    "clGetSupportedVA_APIMediaSurfaceFormatsINTEL"};
const std::vector<std::string> egl_names = {"clCreateFromEGLImageKHR", "clEnqueueAcquireEGLObjectsKHR",
                                            "clEnqueueReleaseEGLObjectsKHR", "clGetGLContextInfoKHR",
                                            "clCreateEventFromGLsyncKHR"};

bool egl_on() { return egl_mode() != EglMode::off; }

std::set<std::string> names(const std::vector<Slot> &list, size_t below = kSlots) {
    std::set<std::string> out;
    for (const Slot &s : list)
        if (s.index < below) out.insert(s.name);
    return out;
}

std::string name_of(size_t index) {
    for (const auto *list :
         {&wrapped, &counted, &counted_unless_egl, &fresh_unless_egl, &provided, &egl_wrapped, &egl_provided})
        for (const Slot &s : *list)
            if (s.index == index) return s.name;
    return "slot #" + std::to_string(index);
}

void **slots(cl_icd_dispatch &t) { return reinterpret_cast<void **>(&t); }
void *const *slots(const cl_icd_dispatch &t) { return reinterpret_cast<void *const *>(&t); }

// A distinct, never-called value per slot.
void *sentinel(size_t i) { return reinterpret_cast<void *>(uintptr_t{0x5e000000} + 16 * i); }

// The first `n` slots hold sentinels, the rest NULL.
cl_icd_dispatch sentinel_table(size_t n = kSlots) {
    cl_icd_dispatch t{};
    for (size_t i = 0; i < n; ++i) slots(t)[i] = sentinel(i);
    return t;
}

// Names of the slots of `ours` that differ from `target`.
std::set<std::string> replaced(const cl_icd_dispatch &target, const cl_icd_dispatch &ours) {
    std::set<std::string> out;
    for (size_t i = 0; i < kSlots; ++i)
        if (slots(ours)[i] != slots(target)[i]) out.insert(name_of(i));
    return out;
}

std::set<std::string> operator+(std::set<std::string> a, const std::set<std::string> &b) {
    a.insert(b.begin(), b.end());
    return a;
}

}  // namespace

TEST_CASE("dispatch table: exactly the listed slots are replaced, every other one is the target's", "[table]") {
    static cl_icd_dispatch target = sentinel_table();
    const cl_icd_dispatch &layer = *init_dispatch(&target, kSlots);
    REQUIRE(&layer == &ours());

    std::set<std::string> expected = names(wrapped) + names(counted) + names(provided);
    if (egl_on()) expected = expected + names(egl_wrapped) + names(egl_provided);
    else expected = expected + names(counted_unless_egl) + names(fresh_unless_egl);
    CHECK(replaced(target, layer) == expected);
    // What replaced a slot is the layer's, not another slot's target function.
    for (size_t i = 0; i < kSlots; ++i)
        if (slots(layer)[i] != slots(target)[i]) {
            INFO(name_of(i));
            bool a_sentinel = false;
            for (size_t j = 0; j < kSlots; ++j) a_sentinel |= slots(layer)[i] == sentinel(j);
            CHECK(slots(layer)[i] != nullptr);
            CHECK_FALSE(a_sentinel);
        }
}

TEST_CASE("dispatch table: a slot the target leaves NULL stays NULL unless the layer provides it", "[table]") {
    static cl_icd_dispatch target{};
    const cl_icd_dispatch &layer = *init_dispatch(&target, kSlots);
    std::set<std::string> expected = names(provided);
    if (egl_on()) expected = expected + names(egl_provided);
    CHECK(replaced(target, layer) == expected);
}

TEST_CASE("dispatch table: a loader built before OpenCL 2.0 gets the 1.x overrides and the provided slots",
          "[table]") {
    // ocl-icd and the Khronos loader fill every slot they know; a table
    // from older headers ends before the first 2.0 slot.
    const size_t n = offsetof(cl_icd_dispatch, clCreateCommandQueueWithProperties) / sizeof(void *);
    static cl_icd_dispatch target = sentinel_table(n);
    const cl_icd_dispatch &layer = *init_dispatch(&target, static_cast<cl_uint>(n));
    std::set<std::string> expected = names(wrapped, n) + names(counted, n) + names(provided);
    if (egl_on()) expected = expected + names(egl_wrapped, n) + names(egl_provided);
    else expected = expected + names(counted_unless_egl, n) + names(fresh_unless_egl, n);
    CHECK(replaced(target, layer) == expected);
}

namespace {

void *CL_API_CALL next_address_for_platform(cl_platform_id, const char *name) {
    if (!std::strcmp(name, "clEnqueueNotTheLayersKHR")) return sentinel(5);
    if (!std::strcmp(name, "clEnqueueAcquireGLObjects")) return sentinel(8);
    if (!std::strcmp(name, "clEnqueueReleaseGLObjects")) return sentinel(9);
    // clEnqueueFake<N>KHR: distinct ICD enqueues, to fill the trampoline pool.
    if (unsigned n = 0; std::sscanf(name, "clEnqueueFake%uKHR", &n) == 1) return sentinel(100 + n);
    return !std::strcmp(name, "clNotTheLayersKHR") ? sentinel(1) : nullptr;
}
void *CL_API_CALL next_address(const char *name) {
    return !std::strcmp(name, "clNotTheLayersKHR") ? sentinel(2) : nullptr;
}

}  // namespace

TEST_CASE("dispatch table: every extension function the layer hands out resolves, other names go down",
          "[table]") {
    static cl_icd_dispatch target = sentinel_table();
    target.clGetExtensionFunctionAddressForPlatform = next_address_for_platform;
    target.clGetExtensionFunctionAddress = next_address;
    const cl_icd_dispatch &layer = *init_dispatch(&target, kSlots);

    for (const std::string &name : layer_names) {
        INFO(name);
        void *fn = layer_extension_function(name.c_str());
        CHECK(fn != nullptr);
        CHECK(layer.clGetExtensionFunctionAddressForPlatform(nullptr, name.c_str()) == fn);
        CHECK(layer.clGetExtensionFunctionAddress(name.c_str()) == fn);
    }
    for (const std::string &name : egl_names) {
        INFO(name);
        void *fn = layer.clGetExtensionFunctionAddressForPlatform(nullptr, name.c_str());
        CHECK((fn != nullptr) == egl_on());
        CHECK(layer.clGetExtensionFunctionAddress(name.c_str()) == fn);
    }
    // A name handed out and a slot the layer fills are the same function.
    if (egl_on())
        CHECK(layer_extension_function("clCreateFromEGLImageKHR") ==
              reinterpret_cast<void *>(layer.clCreateFromEGLImageKHR));
    CHECK(layer.clGetExtensionFunctionAddressForPlatform(nullptr, "clNotTheLayersKHR") == sentinel(1));
    CHECK(layer.clGetExtensionFunctionAddress("clNotTheLayersKHR") == sentinel(2));
    CHECK(layer_extension_function(nullptr) == nullptr);
    // None of these was an enqueue the layer cannot see (the layer's own, a
    // name no one has, a non-enqueue of the ICD's).
    CHECK(layer.clGetExtensionFunctionAddress("clEnqueueNoSuchThingKHR") == nullptr);
    CHECK_FALSE(unseen_enqueues());
    // An enqueue with a slot of the layer's, asked by name: the layer's slot,
    // counted once (not a trampoline in front of a dispatcher that calls it).
    if (layer.clEnqueueAcquireGLObjects) {
        CHECK(layer.clGetExtensionFunctionAddressForPlatform(nullptr, "clEnqueueAcquireGLObjects") ==
              reinterpret_cast<void *>(layer.clEnqueueAcquireGLObjects));
        CHECK(layer.clGetExtensionFunctionAddressForPlatform(nullptr, "clEnqueueReleaseGLObjects") ==
              reinterpret_cast<void *>(layer.clEnqueueReleaseGLObjects));
        CHECK_FALSE(unseen_enqueues());
    }
    // An ICD enqueue handed out by name: behind a counting trampoline
    // (layer/queue/looked_up.hpp; calling one: unit-tests), the same one
    // for the same function asked again.
    const int capacity = counted_extension_capacity();
    void *counted = layer.clGetExtensionFunctionAddressForPlatform(nullptr, "clEnqueueNotTheLayersKHR");
    REQUIRE(capacity > 0);  // every build has them, whatever its fast paths' form (issue #29)
    CHECK(counted != nullptr);
    CHECK(counted != sentinel(5));
    CHECK(layer.clGetExtensionFunctionAddressForPlatform(nullptr, "clEnqueueNotTheLayersKHR") == counted);
    CHECK_FALSE(unseen_enqueues());
    // Once the pool is spent the ICD's function goes out as it is, and the
    // application calls it past the layer.
    for (int n = 0; n + 1 < capacity; ++n) {
        const std::string name = "clEnqueueFake" + std::to_string(n) + "KHR";
        void *fn = layer.clGetExtensionFunctionAddressForPlatform(nullptr, name.c_str());
        CHECK(fn != sentinel(100 + n));
    }
    CHECK_FALSE(unseen_enqueues());
    CHECK(layer.clGetExtensionFunctionAddressForPlatform(nullptr, "clEnqueueFake999KHR") == sentinel(1099));
    CHECK(unseen_enqueues());
}

TEST_CASE("enqueue epoch: which names handed down are enqueues the layer does not see", "[table]") {
    CHECK(unseen_enqueue_name("clEnqueueCommandBufferKHR"));
    CHECK(unseen_enqueue_name("clEnqueueMemcpyINTEL"));
    CHECK(unseen_enqueue_name("clEnqueueAcquireGLObjects"));  // the ICD's own, by name: past the table
    // The loaders answer these with their own dispatcher, which calls the layer's slot.
    CHECK_FALSE(unseen_enqueue_name("clEnqueueAcquireEGLObjectsKHR"));
    CHECK_FALSE(unseen_enqueue_name("clEnqueueReleaseEGLObjectsKHR"));
    CHECK_FALSE(unseen_enqueue_name("clCreateCommandBufferKHR"));
    CHECK_FALSE(unseen_enqueue_name("clEnqueu"));
    CHECK_FALSE(unseen_enqueue_name(nullptr));
}

namespace {

int marker_calls = 0;
cl_int CL_API_CALL target_marker(cl_command_queue, cl_uint, const cl_event *, cl_event *event) {
    ++marker_calls;
    if (event) *event = reinterpret_cast<cl_event>(sentinel(6));
    return CL_INVALID_CONTEXT;  // distinct: the target's answer comes back unchanged
}
cl_int CL_API_CALL target_kernel(cl_command_queue, cl_kernel, cl_uint work_dim, const size_t *, const size_t *,
                                 const size_t *, cl_uint num_events, const cl_event *, cl_event *event) {
    ++marker_calls;
    if (event) *event = reinterpret_cast<cl_event>(sentinel(7));
    return static_cast<cl_int>(work_dim * 100 + num_events);  // the arguments past the sixth arrive too
}

}  // namespace

TEST_CASE("enqueue epoch: a counted slot moves the epoch once and returns the target's answer", "[table]") {
    static cl_icd_dispatch target = sentinel_table();
    target.clEnqueueMarkerWithWaitList = target_marker;
    target.clEnqueueNDRangeKernel = target_kernel;
    const cl_icd_dispatch &layer = *init_dispatch(&target, kSlots);
    marker_calls = 0;
    cl_event ev = nullptr;
    const uint64_t before = read_epoch().epoch();
    CHECK(layer.clEnqueueMarkerWithWaitList(nullptr, 0, nullptr, &ev) == CL_INVALID_CONTEXT);
    CHECK(ev == reinterpret_cast<cl_event>(sentinel(6)));
    CHECK(read_epoch().epoch() == before + 1);
    CHECK(layer.clEnqueueNDRangeKernel(nullptr, nullptr, 3, nullptr, nullptr, nullptr, 7, nullptr, &ev) == 307);
    CHECK(ev == reinterpret_cast<cl_event>(sentinel(7)));
    CHECK(read_epoch().epoch() == before + 2);
    CHECK(marker_calls == 2);
}

namespace {
uint64_t in_flight_seen = 99;
cl_int CL_API_CALL target_kernel_in_flight(cl_command_queue, cl_kernel, cl_uint work_dim, const size_t *,
                                           const size_t *, const size_t *, cl_uint num_events, const cl_event *,
                                           cl_event *) {
    in_flight_seen = read_epoch().in_flight();
    return static_cast<cl_int>(work_dim * 100 + num_events);
}
std::shared_ptr<Import> add_import(cl_mem mem, Route route, bool writable, cl_mem_flags flags);
cl_mem handle(int i);
}  // namespace

// Issue #28 item 1: a command belongs to an epoch only once the ICD has it.
TEST_CASE("enqueue epoch: with an import alive a counted slot is in flight until the target returned", "[table]") {
    static cl_icd_dispatch target = sentinel_table();
    target.clEnqueueNDRangeKernel = target_kernel_in_flight;
    const cl_icd_dispatch &layer = *init_dispatch(&target, kSlots);
    // No import: counted as landed before the jump (nothing it uses can be an import's).
    const EpochWord before = read_epoch();
    CHECK(layer.clEnqueueNDRangeKernel(nullptr, nullptr, 2, nullptr, nullptr, nullptr, 5, nullptr, nullptr) == 205);
    CHECK(in_flight_seen == before.in_flight());
    CHECK(read_epoch().raw == before.raw + kEpochOne);
    // An import alive: in flight inside the target, landed once it returned.
    add_import(handle(40), Route::host_ptr, true, CL_MEM_READ_WRITE);
    const EpochWord tracked = read_epoch();
    CHECK(layer.clEnqueueNDRangeKernel(nullptr, nullptr, 3, nullptr, nullptr, nullptr, 7, nullptr, nullptr) == 307);
    CHECK(in_flight_seen == tracked.in_flight() + 1);
    CHECK(read_epoch().raw == tracked.raw + kEpochOne);
    imports().remove(handle(40));
}

// ---- the slots several features check (layer/entry/entry_chains.cpp) ---------------------------

namespace {

int target_calls = 0;

cl_int CL_API_CALL target_read(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint, const cl_event *,
                               cl_event *) {
    ++target_calls;
    return CL_SUCCESS;
}
cl_int CL_API_CALL target_write(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint,
                                const cl_event *, cl_event *) {
    ++target_calls;
    return CL_SUCCESS;
}
cl_int CL_API_CALL target_fill(cl_command_queue, cl_mem, const void *, size_t, size_t, size_t, cl_uint,
                               const cl_event *, cl_event *) {
    ++target_calls;
    return CL_SUCCESS;
}
void *CL_API_CALL target_map(cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t, cl_uint,
                             const cl_event *, cl_event *, cl_int *errcode_ret) {
    ++target_calls;
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return sentinel(3);
}

cl_mem handle(int i) { return reinterpret_cast<cl_mem>(uintptr_t{0x7e000000} + 16 * i); }

std::shared_ptr<Import> add_import(cl_mem mem, Route route, bool writable, cl_mem_flags flags) {
    static char bytes[64];
    auto import = std::make_shared<Import>();
    import->mem = mem;
    import->mapping = bytes;
    import->mapping_len = sizeof bytes;
    import->mapped_writable = writable;
    import->route = route;
    import->flags = flags;
    imports().add(import);
    return import;
}

}  // namespace

TEST_CASE("entry chains: the read-only guard and host-access flags refuse before the target, once otherwise",
          "[chains]") {
    static cl_icd_dispatch target = sentinel_table();
    target.clEnqueueReadBuffer = target_read;
    target.clEnqueueWriteBuffer = target_write;
    target.clEnqueueFillBuffer = target_fill;
    target.clEnqueueMapBuffer = target_map;
    const cl_icd_dispatch &layer = *init_dispatch(&target, kSlots);
    auto *q = reinterpret_cast<cl_command_queue>(sentinel(4));
    char host[16] = {};
    cl_int err = CL_SUCCESS;

    const cl_mem read_only = handle(1), no_host = handle(2), plain = handle(3);
    add_import(read_only, Route::host_ptr, false, CL_MEM_READ_ONLY);
    add_import(no_host, Route::copy, true, CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS);

    target_calls = 0;
    const uint64_t epoch = read_epoch().epoch();
    // Read-only zero-copy import: writes, fills and write maps never reach the target.
    CHECK(layer.clEnqueueWriteBuffer(q, read_only, CL_TRUE, 0, 4, host, 0, nullptr, nullptr) ==
          CL_INVALID_OPERATION);
    CHECK(layer.clEnqueueFillBuffer(q, read_only, host, 4, 0, 4, 0, nullptr, nullptr) == CL_INVALID_OPERATION);
    CHECK(layer.clEnqueueMapBuffer(q, read_only, CL_TRUE, CL_MAP_WRITE, 0, 4, 0, nullptr, nullptr, &err) ==
          nullptr);
    CHECK(err == CL_INVALID_OPERATION);
    // Copy-route import with CL_MEM_HOST_NO_ACCESS: neither reads, writes nor maps.
    CHECK(layer.clEnqueueReadBuffer(q, no_host, CL_TRUE, 0, 4, host, 0, nullptr, nullptr) == CL_INVALID_OPERATION);
    CHECK(layer.clEnqueueWriteBuffer(q, no_host, CL_TRUE, 0, 4, host, 0, nullptr, nullptr) == CL_INVALID_OPERATION);
    err = CL_SUCCESS;
    CHECK(layer.clEnqueueMapBuffer(q, no_host, CL_TRUE, CL_MAP_READ, 0, 4, 0, nullptr, nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_OPERATION);
    CHECK(target_calls == 0);
    CHECK(read_epoch().epoch() == epoch);  // a refused command is no command of the queue
    // A fill of the copy-route import is no host access: the target gets it.
    CHECK(layer.clEnqueueFillBuffer(q, no_host, host, 4, 0, 4, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(target_calls == 1);

    // Any other object: each call reaches the target exactly once.
    target_calls = 0;
    CHECK(layer.clEnqueueReadBuffer(q, plain, CL_TRUE, 0, 4, host, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(layer.clEnqueueWriteBuffer(q, plain, CL_TRUE, 0, 4, host, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(layer.clEnqueueFillBuffer(q, plain, host, 4, 0, 4, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(layer.clEnqueueMapBuffer(q, plain, CL_TRUE, CL_MAP_WRITE, 0, 4, 0, nullptr, nullptr, &err) == sentinel(3));
    CHECK(target_calls == 4);
    CHECK(read_epoch().epoch() == epoch + 5);  // each command that reached the target, counted once

    imports().remove(read_only);
    imports().remove(no_host);
}
