// The layer on ICDs unlike PoCL, through the real loader (tests/icd/README.md).
// Each tag runs under the CLDMABUF_TESTICD mode named in tests/meson.build.
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch_test_macros.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>

#include "CL/cl_ext_cldmabuf.h"
#include "test_dmabufs.hpp"
#include "test_handoff.hpp"

using namespace testicd_test;

namespace {

constexpr cl_external_memory_handle_type_khr opaque_fd = 0x2060;
constexpr cl_external_memory_handle_type_khr dma_buf = CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR;

bool contains(const std::string &haystack, const std::string &needle) {
    return haystack.find(needle) != std::string::npos;
}

template <typename T>
bool unique(std::vector<T> v) {
    std::sort(v.begin(), v.end());
    return std::adjacent_find(v.begin(), v.end()) == v.end();
}

// The property list as tests/icd records it.
std::string recorded(const std::vector<cl_mem_properties> &props) {
    std::string s;
    for (size_t i = 0; i + 1 < props.size(); ++i) s += hex(props[i]) + ",";
    return s + "0";
}

cl_mem import_dmabuf(const Env &env, e2e::Dmabuf &buf, size_t size, cl_int *err) {
    const cl_mem_properties props[] = {dma_buf, static_cast<cl_mem_properties>(buf.fd), 0};
    cl_mem mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, size, nullptr, err);
    if (mem) buf.release_fd();  // the importer owns it now
    return mem;
}

// A fresh dma-buf of `size` bytes imported (the import owns its fd).
cl_mem import_fresh(const Env &env, size_t size) {
    cl_int err = CL_OUT_OF_RESOURCES;
    e2e::Dmabuf buf = e2e::make_dmabuf(size);
    cl_mem mem = import_dmabuf(env, buf, size, &err);
    REQUIRE(err == CL_SUCCESS);
    return mem;
}

}  // namespace

TEST_CASE("handle-type queries answer the union of the ICD's and the layer's types", "[union]") {
    Env env;
    for (int device_level = 0; device_level < 2; ++device_level) {
        cl_int err = CL_SUCCESS;
        auto types = device_level
                         ? device_array<cl_external_memory_handle_type_khr>(
                               env.device, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, &err)
                         : platform_array<cl_external_memory_handle_type_khr>(
                               env.platform, CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, &err);
        INFO("device level: " << device_level);
        REQUIRE(err == CL_SUCCESS);
        CHECK(std::count(types.begin(), types.end(), opaque_fd) == 1);  // the ICD's own
        CHECK(std::count(types.begin(), types.end(), dma_buf) == 1);    // the layer's
        CHECK(unique(types));
    }
}

TEST_CASE("an opaque-fd import reaches the ICD with the application's property list untouched", "[opaque]") {
    Env env;
    const int fd = make_memfd(4096);
    const std::vector<cl_mem_properties> props = {opaque_fd, static_cast<cl_mem_properties>(fd),
                                                  CL_MEM_DEVICE_HANDLE_LIST_KHR,
                                                  reinterpret_cast<cl_mem_properties>(env.device),
                                                  CL_MEM_DEVICE_HANDLE_LIST_END_KHR, 0};
    cl_int err = CL_OUT_OF_RESOURCES;
    cl_mem mem = clCreateBufferWithProperties(env.context, props.data(), CL_MEM_READ_WRITE, 4096, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(mem);
    CHECK(contains(env.icd_log(), "clCreateBufferWithProperties props=" + recorded(props) + " flags=0x1 size=4096"));

    SECTION("acquire and release of the ICD's object go to the ICD's own entry points") {
        const auto [acquire, release] = Handoff(env);
        env.clear_icd_log();
        cl_event ev = nullptr;
        CHECK(acquire(env.queue, 1, &mem, 0, nullptr, &ev) == CL_SUCCESS);
        CHECK(clWaitForEvents(1, &ev) == CL_SUCCESS);
        clReleaseEvent(ev);
        CHECK(release(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
        CHECK(clFinish(env.queue) == CL_SUCCESS);
        const std::string log = env.icd_log();
        CHECK(contains(log, "clEnqueueAcquireExternalMemObjectsKHR mems=" + hex(reinterpret_cast<uintptr_t>(mem))));
        CHECK(contains(log, "clEnqueueReleaseExternalMemObjectsKHR mems=" + hex(reinterpret_cast<uintptr_t>(mem))));
    }

    SECTION("a list mixing the layer's import and the ICD's is refused, and nothing is enqueued") {
        REQUIRE_DMABUF();
        e2e::Dmabuf buf = e2e::make_dmabuf(4096);
        cl_int ierr = CL_OUT_OF_RESOURCES;
        cl_mem ours = import_dmabuf(env, buf, 4096, &ierr);
        REQUIRE(ierr == CL_SUCCESS);
        auto acquire = reinterpret_cast<clEnqueueAcquireExternalMemObjectsKHR_fn>(
            env.function("clEnqueueAcquireExternalMemObjectsKHR"));
        env.clear_icd_log();
        const cl_mem both[] = {ours, mem};
        CHECK(acquire(env.queue, 2, both, 0, nullptr, nullptr) == CL_INVALID_OPERATION);
        CHECK_FALSE(contains(env.icd_log(), "clEnqueueAcquireExternalMemObjectsKHR"));
        // A plain buffer instead of the ICD's import: the spec's error for a non-external object.
        cl_mem plain = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 64, nullptr, &ierr);
        const cl_mem with_plain[] = {ours, plain};
        CHECK(acquire(env.queue, 2, with_plain, 0, nullptr, nullptr) == CL_INVALID_MEM_OBJECT);
        clReleaseMemObject(plain);
        clReleaseMemObject(ours);
    }

    SECTION("an image import with a foreign handle type reaches the ICD untouched too") {
        const int ifd = make_memfd(4096);
        const std::vector<cl_mem_properties> iprops = {opaque_fd, static_cast<cl_mem_properties>(ifd), 0};
        const cl_image_format format = {CL_RGBA, CL_UNORM_INT8};
        cl_image_desc desc{};
        desc.image_type = CL_MEM_OBJECT_IMAGE2D;
        desc.image_width = 16;
        desc.image_height = 16;
        cl_int ierr = CL_SUCCESS;
        cl_mem image = clCreateImageWithProperties(env.context, iprops.data(), CL_MEM_READ_ONLY, &format, &desc,
                                                   nullptr, &ierr);
        CHECK(image == nullptr);
        CHECK(ierr == CL_INVALID_OPERATION);  // the test ICD has no images: its answer, not the layer's
        CHECK(contains(env.icd_log(), "clCreateImageWithProperties props=" + recorded(iprops)));
        close(ifd);
    }
    clReleaseMemObject(mem);
}

TEST_CASE("a handle type neither the ICD nor the layer lists is refused by the layer, not asked of the ICD",
          "[opaque]") {
    // NVIDIA 580 lists OPAQUE_FD only and answers 801 (no CL error code) for
    // OPAQUE_WIN32: the spec's answer is CL_INVALID_PROPERTY.
    Env env;
    const int fd = make_memfd(4096);
    constexpr cl_mem_properties opaque_win32 = 0x2061;
    const std::vector<cl_mem_properties> props = {opaque_win32, static_cast<cl_mem_properties>(fd), 0};
    env.clear_icd_log();
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBufferWithProperties(env.context, props.data(), CL_MEM_READ_WRITE, 4096, nullptr, &err);
    CHECK(mem == nullptr);
    CHECK(err == CL_INVALID_PROPERTY);
    const cl_image_format format = {CL_RGBA, CL_UNORM_INT8};
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = 16;
    desc.image_height = 16;
    err = CL_SUCCESS;
    mem = clCreateImageWithProperties(env.context, props.data(), CL_MEM_READ_ONLY, &format, &desc, nullptr, &err);
    CHECK(mem == nullptr);
    CHECK(err == CL_INVALID_PROPERTY);
    CHECK_FALSE(contains(env.icd_log(), "WithProperties props="));
    CHECK(fcntl(fd, F_GETFD) != -1);  // a refused import leaves the fd the application's
    close(fd);
}

TEST_CASE("versioned extension lists carry one entry per extension and agree with the strings", "[versions]") {
    Env env;
    for (int device_level = 0; device_level < 2; ++device_level) {
        INFO("device level: " << device_level);
        const std::string text = device_level ? device_string(env.device, CL_DEVICE_EXTENSIONS)
                                              : platform_string(env.platform, CL_PLATFORM_EXTENSIONS);
        auto versions = device_level ? device_array<cl_name_version>(env.device, CL_DEVICE_EXTENSIONS_WITH_VERSION)
                                     : platform_array<cl_name_version>(env.platform, CL_PLATFORM_EXTENSIONS_WITH_VERSION);
        std::vector<std::string> listed;
        for (const auto &nv : versions) listed.push_back(nv.name);
        auto named = words(text);
        CHECK(unique(listed));
        CHECK(unique(named));
        std::sort(listed.begin(), listed.end());
        std::sort(named.begin(), named.end());
        CHECK(listed == named);
        for (const auto &nv : versions)
            if (std::string(nv.name) == "cl_khr_external_memory")
                CHECK(nv.version == CL_MAKE_VERSION(1, 0, 1));  // the ICD says 1.0.0; the layer completes 1.0.1
    }
}

TEST_CASE("a dma-buf import goes to an ICD that imports dma-bufs itself", "[native-dmabuf]") {
    REQUIRE_DMABUF();
    Env env;
    e2e::Dmabuf buf = e2e::make_dmabuf(4096);
    const int fd = buf.fd;
    auto *cpu = static_cast<unsigned char *>(cldmabuf::test::map(buf));
    std::memset(cpu, 0x5a, 4096);
    cl_int err = CL_OUT_OF_RESOURCES;
    cl_mem mem = import_dmabuf(env, buf, 4096, &err);
    REQUIRE(err == CL_SUCCESS);
    const std::string log = env.icd_log();
    CHECK(contains(log, "clCreateBufferWithProperties props=" + hex(dma_buf) + "," + hex(fd) + ",0"));
    CHECK_FALSE(contains(log, "clCreateBuffer flags"));

    const auto [acquire, release] = Handoff(env);
    env.clear_icd_log();
    REQUIRE(acquire(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    unsigned char seen[4096] = {};
    REQUIRE(clEnqueueReadBuffer(env.queue, mem, CL_TRUE, 0, sizeof seen, seen, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(seen[0] == 0x5a);
    CHECK(seen[4095] == 0x5a);
    REQUIRE(release(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(contains(env.icd_log(), "clEnqueueAcquireExternalMemObjectsKHR"));
    CHECK(contains(env.icd_log(), "clEnqueueReleaseExternalMemObjectsKHR"));
    clReleaseMemObject(mem);
    cldmabuf::test::unmap(cpu, 4096);
}

TEST_CASE("CLDMABUF_DMABUF_IMPORT=layer keeps dma-buf imports in the layer on such an ICD", "[dmabuf-forced]") {
    REQUIRE_DMABUF();
    Env env;
    e2e::Dmabuf buf = e2e::make_dmabuf(4096);
    cl_int err = CL_OUT_OF_RESOURCES;
    cl_mem mem = import_dmabuf(env, buf, 4096, &err);
    REQUIRE(err == CL_SUCCESS);
    const std::string log = env.icd_log();
    CHECK(contains(log, "clCreateBuffer flags"));  // the layer's buffer over its mapping
    CHECK_FALSE(contains(log, "props=" + hex(dma_buf)));
    auto acquire = reinterpret_cast<clEnqueueAcquireExternalMemObjectsKHR_fn>(
        env.function("clEnqueueAcquireExternalMemObjectsKHR"));
    REQUIRE(acquire(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK_FALSE(contains(env.icd_log(), "clEnqueueAcquireExternalMemObjectsKHR"));
    clReleaseMemObject(mem);
}

TEST_CASE("native semaphores: strings, queries and functions pass through", "[semaphores]") {
    Env env;
    for (const char *name : {"cl_khr_semaphore", "cl_khr_external_semaphore", "cl_khr_external_semaphore_opaque_fd"}) {
        auto platform_words = words(platform_string(env.platform, CL_PLATFORM_EXTENSIONS));
        auto device_words = words(device_string(env.device, CL_DEVICE_EXTENSIONS));
        CHECK(std::count(platform_words.begin(), platform_words.end(), name) == 1);
        CHECK(std::count(device_words.begin(), device_words.end(), name) == 1);
    }
    cl_int err = CL_SUCCESS;
    auto types = platform_array<cl_semaphore_type_khr>(env.platform, CL_PLATFORM_SEMAPHORE_TYPES_KHR, &err);
    CHECK(err == CL_SUCCESS);
    CHECK(types == std::vector<cl_semaphore_type_khr>{CL_SEMAPHORE_TYPE_BINARY_KHR});
    auto create = reinterpret_cast<clCreateSemaphoreWithPropertiesKHR_fn>(
        env.function("clCreateSemaphoreWithPropertiesKHR"));
    auto release = reinterpret_cast<clReleaseSemaphoreKHR_fn>(env.function("clReleaseSemaphoreKHR"));
    REQUIRE(create);
    REQUIRE(release);
    const cl_semaphore_properties_khr props[] = {CL_SEMAPHORE_TYPE_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR, 0};
    cl_semaphore_khr sem = create(env.context, props, &err);
    CHECK(err == CL_SUCCESS);
    CHECK(release(sem) == CL_SUCCESS);
    CHECK(contains(env.icd_log(), "clCreateSemaphoreWithPropertiesKHR props=" + hex(CL_SEMAPHORE_TYPE_KHR) + "," +
                                      hex(CL_SEMAPHORE_TYPE_BINARY_KHR) + ",0"));
    CHECK(contains(env.icd_log(), "clReleaseSemaphoreKHR"));
    // auto: the layer adds nothing on top of an ICD's own semaphores (no sync_fd over NVIDIA's opaque fds).
    auto device_words = words(device_string(env.device, CL_DEVICE_EXTENSIONS));
    CHECK(std::count(device_words.begin(), device_words.end(), "cl_khr_external_semaphore_sync_fd") == 0);
    auto imports = platform_array<cl_external_semaphore_handle_type_khr>(
            env.platform, CL_PLATFORM_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR, &err);
    CHECK(imports == std::vector<cl_external_semaphore_handle_type_khr>{CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR});
}

TEST_CASE("CLDMABUF_DEBUG=semaphores-force: the layer's semaphores over the ICD's own", "[semaphores-forced]") {
    Env env;
    cl_int err = CL_SUCCESS;
    auto imports = platform_array<cl_external_semaphore_handle_type_khr>(
            env.platform, CL_PLATFORM_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR, &err);
    CHECK(imports == std::vector<cl_external_semaphore_handle_type_khr>{0x2058 /* SYNC_FD */});
    auto words_list = words(device_string(env.device, CL_DEVICE_EXTENSIONS));
    CHECK(std::count(words_list.begin(), words_list.end(), "cl_khr_semaphore") == 1);  // listed once
    CHECK(std::count(words_list.begin(), words_list.end(), "cl_khr_external_semaphore_sync_fd") == 1);
    auto create = reinterpret_cast<clCreateSemaphoreWithPropertiesKHR_fn>(
        env.function("clCreateSemaphoreWithPropertiesKHR"));
    auto signal = reinterpret_cast<clEnqueueSignalSemaphoresKHR_fn>(env.function("clEnqueueSignalSemaphoresKHR"));
    auto wait = reinterpret_cast<clEnqueueWaitSemaphoresKHR_fn>(env.function("clEnqueueWaitSemaphoresKHR"));
    auto release = reinterpret_cast<clReleaseSemaphoreKHR_fn>(env.function("clReleaseSemaphoreKHR"));
    REQUIRE(create);
    REQUIRE(signal);
    REQUIRE(wait);
    REQUIRE(release);
    const cl_semaphore_properties_khr props[] = {CL_SEMAPHORE_TYPE_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR, 0};
    cl_semaphore_khr sem = create(env.context, props, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(signal(env.queue, 1, &sem, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(wait(env.queue, 1, &sem, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(release(sem) == CL_SUCCESS);
    CHECK_FALSE(contains(env.icd_log(), "clCreateSemaphoreWithPropertiesKHR"));  // never reached the ICD
    CHECK_FALSE(contains(env.icd_log(), "clEnqueueSignalSemaphoresKHR"));
}

TEST_CASE("clImportMemoryARM of a dma-buf goes to an ICD with cl_arm_import_memory_dma_buf", "[arm]") {
    REQUIRE_DMABUF();
    Env env;
    e2e::Dmabuf buf = e2e::make_dmabuf(4096);
    auto import = reinterpret_cast<cl_mem(CL_API_CALL *)(cl_context, cl_mem_flags, const cl_import_properties_arm *,
                                                         void *, size_t, cl_int *)>(env.function("clImportMemoryARM"));
    REQUIRE(import);
    const cl_import_properties_arm props[] = {CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM, 0};
    cl_int err = CL_OUT_OF_RESOURCES;
    cl_mem mem = import(env.context, CL_MEM_READ_WRITE, props, &buf.fd, 4096, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(contains(env.icd_log(), "clImportMemoryARM props=" + hex(CL_IMPORT_TYPE_ARM) + "," +
                                      hex(CL_IMPORT_TYPE_DMA_BUF_ARM) + ",0"));
    clReleaseMemObject(mem);
}

TEST_CASE("an ICD with cl_intel_va_api_media_sharing gets every VA call and context property untouched", "[va]") {
    Env env;
    int n_listed = 0;
    for (const std::string &w : words(platform_string(env.platform, CL_PLATFORM_EXTENSIONS)))
        n_listed += w == "cl_intel_va_api_media_sharing";
    CHECK(n_listed == 1);
    void *const fake_display = reinterpret_cast<void *>(uintptr_t{0x5a5a0000});
    // The context: the VA display reaches the ICD (it answers the list itself).
    const cl_context_properties props[] = {0x4097 /* CL_CONTEXT_VA_API_DISPLAY_INTEL */,
                                           reinterpret_cast<cl_context_properties>(fake_display),
                                           CL_CONTEXT_INTEROP_USER_SYNC, CL_FALSE, 0};
    cl_int err = CL_OUT_OF_RESOURCES;
    cl_context ctx = clCreateContext(props, 1, &env.device, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    std::vector<cl_context_properties> got(5);
    REQUIRE(clGetContextInfo(ctx, CL_CONTEXT_PROPERTIES, sizeof props, got.data(), nullptr) == CL_SUCCESS);
    CHECK(std::equal(got.begin(), got.end(), props));
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, env.device, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);

    using DevicesFn = cl_int(CL_API_CALL *)(cl_platform_id, cl_uint, void *, cl_uint, cl_uint, cl_device_id *, cl_uint *);
    using CreateFn = cl_mem(CL_API_CALL *)(cl_context, cl_mem_flags, unsigned int *, cl_uint, cl_int *);
    using StepFn = cl_int(CL_API_CALL *)(cl_command_queue, cl_uint, const cl_mem *, cl_uint, const cl_event *, cl_event *);
    auto devices = reinterpret_cast<DevicesFn>(env.function("clGetDeviceIDsFromVA_APIMediaAdapterINTEL"));
    auto create = reinterpret_cast<CreateFn>(env.function("clCreateFromVA_APIMediaSurfaceINTEL"));
    auto acquire = reinterpret_cast<StepFn>(env.function("clEnqueueAcquireVA_APIMediaSurfacesINTEL"));
    auto release = reinterpret_cast<StepFn>(env.function("clEnqueueReleaseVA_APIMediaSurfacesINTEL"));
    REQUIRE((devices && create && acquire && release));
    cl_uint n = 0;
    CHECK(devices(env.platform, 0x4094, fake_display, 0x4095, 0, nullptr, &n) == -1098);  // the ICD's answer
    CHECK(contains(env.icd_log(), "clGetDeviceIDsFromVA_APIMediaAdapterINTEL source=" + hex(0x4094) + " adapter=" +
                                      hex(0x5a5a0000) + " set=" + hex(0x4095)));
    unsigned int surface = 7;
    CHECK(create(ctx, CL_MEM_READ_ONLY, &surface, 1, &err) == nullptr);
    CHECK(err == -1099);
    CHECK(contains(env.icd_log(), "clCreateFromVA_APIMediaSurfaceINTEL flags=" + hex(CL_MEM_READ_ONLY) +
                                      " surface=7 plane=1"));
    cl_mem plain = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(acquire(q, 1, &plain, 0, nullptr, nullptr) == CL_INVALID_MEM_OBJECT);
    CHECK(release(q, 1, &plain, 0, nullptr, nullptr) == -1101);
    CHECK(contains(env.icd_log(), "clEnqueueAcquireVA_APIMediaSurfacesINTEL n=1"));
    CHECK(contains(env.icd_log(), "clEnqueueReleaseVA_APIMediaSurfacesINTEL n=1"));
    // The format query of a context the ICD shares itself is the ICD's.
    using FormatsFn = cl_int(CL_API_CALL *)(cl_context, cl_mem_flags, cl_mem_object_type, cl_uint, cl_uint, void *,
                                            cl_uint *);
    auto formats = reinterpret_cast<FormatsFn>(env.function("clGetSupportedVA_APIMediaSurfaceFormatsINTEL"));
    REQUIRE(formats);
    n = 0;
    CHECK(formats(ctx, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 1, 0, nullptr, &n) == CL_SUCCESS);
    CHECK(n == 7);
    CHECK(contains(env.icd_log(), "clGetSupportedVA_APIMediaSurfaceFormatsINTEL flags=" + hex(CL_MEM_READ_ONLY) +
                                      " type=" + hex(CL_MEM_OBJECT_IMAGE2D) + " plane=1"));
    clReleaseMemObject(plain);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
}

TEST_CASE("an OpenCL 1.2/2.x ICD gets working imports and no call into a slot it lacks", "[pre30]") {
    Env env;
    REQUIRE(platform_string(env.platform, CL_PLATFORM_VERSION).rfind("OpenCL 3.0", 0) != 0);
    cl_int err = CL_OUT_OF_RESOURCES;

    SECTION("no properties: the plain entry point") {
        cl_mem mem = clCreateBufferWithProperties(env.context, nullptr, CL_MEM_READ_WRITE, 256, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        CHECK(contains(env.icd_log(), "clCreateBuffer flags=0x1 size=256"));
        clReleaseMemObject(mem);
        const cl_mem_properties empty[] = {0};
        mem = clCreateBufferWithProperties(env.context, empty, CL_MEM_READ_WRITE, 256, nullptr, &err);
        CHECK(err == CL_SUCCESS);
        clReleaseMemObject(mem);
    }
    SECTION("properties the ICD cannot take are refused") {
        const cl_mem_properties props[] = {0x4242, 1, 0};
        CHECK(clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, 256, nullptr, &err) == nullptr);
        CHECK(err == CL_INVALID_PROPERTY);
    }
    SECTION("a dma-buf import works, data included") {
        REQUIRE_DMABUF();
        e2e::Dmabuf buf = e2e::make_dmabuf(4096);
        auto *cpu = static_cast<unsigned char *>(cldmabuf::test::map(buf));
        std::memset(cpu, 0x21, 4096);
        cl_mem mem = import_dmabuf(env, buf, 4096, &err);
        REQUIRE(err == CL_SUCCESS);
        const auto [acquire, release] = Handoff(env);
        REQUIRE(acquire(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
        unsigned char seen[4096] = {};
        REQUIRE(clEnqueueReadBuffer(env.queue, mem, CL_TRUE, 0, sizeof seen, seen, 0, nullptr, nullptr) == CL_SUCCESS);
        CHECK(seen[100] == 0x21);
        const unsigned char value = 0x77;
        REQUIRE(clEnqueueFillBuffer(env.queue, mem, &value, 1, 0, 4096, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(release(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(clFinish(env.queue) == CL_SUCCESS);
        CHECK(cpu[4000] == 0x77);
        // Maps of the import (the layer's map sync around the ICD's map):
        // what the CPU wrote to the dma-buf is read through a map, and what
        // is written through a map is in the dma-buf after the unmap.
        std::memset(cpu, 0x66, 4096);
        auto *mapped = static_cast<unsigned char *>(clEnqueueMapBuffer(
            env.queue, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, 4096, 0, nullptr, nullptr, &err));
        REQUIRE(err == CL_SUCCESS);
        REQUIRE(mapped != nullptr);
        CHECK(mapped[123] == 0x66);
        std::memset(mapped, 0x55, 4096);
        REQUIRE(clEnqueueUnmapMemObject(env.queue, mem, mapped, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(clFinish(env.queue) == CL_SUCCESS);
        CHECK(cpu[3000] == 0x55);
        CHECK_FALSE(contains(env.icd_log(), "clCreateBufferWithProperties"));
        clReleaseMemObject(mem);
        cldmabuf::test::unmap(cpu, 4096);
    }
}

TEST_CASE("a discrete device takes the copy route, and the bytes travel", "[discrete]") {
    REQUIRE_DMABUF();
    Env env;
    e2e::Dmabuf buf = e2e::make_dmabuf(4096);
    auto *cpu = static_cast<unsigned char *>(cldmabuf::test::map(buf));
    std::memset(cpu, 0x33, 4096);
    cl_int err = CL_OUT_OF_RESOURCES;
    cl_mem mem = import_dmabuf(env, buf, 4096, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_uint route = 99;
    REQUIRE(clGetMemObjectInfo(mem, CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, sizeof route, &route, nullptr) == CL_SUCCESS);
    CHECK(route == CL_DMA_BUF_ROUTE_COPY_CLDMABUF);
    const auto [acquire, release] = Handoff(env);
    std::memset(cpu, 0x44, 4096);  // after the import: only acquire's copy brings it over
    REQUIRE(acquire(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    unsigned char seen[4096] = {};
    REQUIRE(clEnqueueReadBuffer(env.queue, mem, CL_TRUE, 0, sizeof seen, seen, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(seen[10] == 0x44);
    const unsigned char value = 0x55;
    REQUIRE(clEnqueueFillBuffer(env.queue, mem, &value, 1, 0, 4096, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(release(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(cpu[2000] == 0x55);
    clReleaseMemObject(mem);
    cldmabuf::test::unmap(cpu, 4096);
}

// A producer's pool hands the same dma-buf out again, imported anew each
// frame.  Above 1 MiB a copy-route buffer is registered with the ICD (a
// USE_HOST_PTR buffer over its mapping, layer/handoff/staging.hpp); the
// registration and the staging's queue and slots park when the import
// goes and the next import of the dma-buf takes them back, and since the
// registration is there before the acquire's facts, the new import's first
// acquire is the fast path's: no host step for it, and no staging made per
// frame.
TEST_CASE("a pool's frame imported again on a discrete device: its first acquire is fast, nothing is made again, "
          "and the bytes travel",
          "[discrete]") {
    REQUIRE_DMABUF();
    Env env;
    const auto [acquire, release] = Handoff(env);
    constexpr size_t N = 2u << 20;
    e2e::Dmabuf frame = e2e::make_dmabuf(N);
    auto *cpu = static_cast<uint32_t *>(cldmabuf::test::map(frame));
    auto round = [&, acquire = acquire, release = release](uint32_t in, uint32_t out) {
        for (size_t i = 0; i < N / 4; ++i) cpu[i] = in + uint32_t(i);
        const int fd = frame.dup_fd();
        const cl_mem_properties props[] = {dma_buf, static_cast<cl_mem_properties>(fd), 0};
        cl_int err = CL_OUT_OF_RESOURCES;
        cl_mem mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, N, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        REQUIRE(acquire(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
        std::vector<uint32_t> seen(N / 4);
        REQUIRE(clEnqueueReadBuffer(env.queue, mem, CL_TRUE, 0, N, seen.data(), 0, nullptr, nullptr) == CL_SUCCESS);
        bool arrived = true;
        for (size_t i = 0; i < seen.size() && arrived; ++i) arrived = seen[i] == in + uint32_t(i);
        CHECK(arrived);
        REQUIRE(clEnqueueFillBuffer(env.queue, mem, &out, sizeof out, 0, N, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(release(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(clFinish(env.queue) == CL_SUCCESS);
        CHECK(std::count(cpu, cpu + N / 4, out) == static_cast<std::ptrdiff_t>(N / 4));
        REQUIRE(clReleaseMemObject(mem) == CL_SUCCESS);
    };
    // Each round: the acquire at once; the release queued, behind the
    // application's Read and Fill (its Read of the device copy must follow them).
    const auto stats_before = layer_stats(env);
    round(0x1000, 0xa1a1a1a1u);  // the registration and the staging are made here
    const auto stats_first = layer_stats(env);
    CHECK(stats_first[CL_STATS_FAST_HANDOFFS_CLDMABUF] - stats_before[CL_STATS_FAST_HANDOFFS_CLDMABUF] == 1);
    CHECK(stats_first[CL_STATS_QUEUED_HANDOFFS_CLDMABUF] - stats_before[CL_STATS_QUEUED_HANDOFFS_CLDMABUF] == 1);
    env.clear_icd_log();
    round(0x2000, 0xb2b2b2b2u);
    const auto stats_second = layer_stats(env);
    CHECK(stats_second[CL_STATS_FAST_HANDOFFS_CLDMABUF] - stats_first[CL_STATS_FAST_HANDOFFS_CLDMABUF] == 1);
    CHECK(stats_second[CL_STATS_QUEUED_HANDOFFS_CLDMABUF] - stats_first[CL_STATS_QUEUED_HANDOFFS_CLDMABUF] == 1);
    // The second frame's ICD calls: its own device copy, and no registration
    // (USE_HOST_PTR), staging slots (ALLOC_HOST_PTR) or staging queue.
    const std::string log = env.icd_log();
    INFO(log);
    size_t buffers = 0;
    for (size_t at = 0; (at = log.find("clCreateBuffer ", at)) != std::string::npos; ++at)
        buffers += at == 0 || log[at - 1] == '\n';
    CHECK(buffers == 1);
    CHECK_FALSE(contains(log, "clCreateCommandQueue"));
    cldmabuf::test::unmap(cpu, N);
}

namespace {
int open_fd_count() {
    int n = 0;
    if (DIR *d = opendir("/proc/self/fd")) {
        while (readdir(d)) ++n;
        closedir(d);
    }
    return n;
}
}  // namespace

// NVIDIA 580 calls a buffer's destructor callbacks a while after the buffer
// went, and may have handed its handle value to a new buffer meanwhile: the
// late callback of the first import must tear down the first, never the
// second that now has its handle (layer/import/record.cpp).  Without the
// check the second is torn down under its user (its acquire answers
// CL_INVALID_MEM_OBJECT, on NVIDIA an acquire crashed) and the first's fds stay open.
TEST_CASE("a late destructor callback tears down its own import, not the newer one on the reused handle",
          "[late-destructors]") {
    REQUIRE_DMABUF();
    Env env;
    const auto [acquire, release] = Handoff(env);
    auto run_destructors = [&] {
        REQUIRE(clGetPlatformInfo(env.platform, 0x7E5B, 0, nullptr, nullptr) == CL_SUCCESS);  // testicd.hpp
    };
    cl_int err = CL_OUT_OF_RESOURCES;
    {
        // What the layer opens once per process (the first import's probes) is not this test's.
        e2e::Dmabuf warm = e2e::make_dmabuf(4096);
        cl_mem m = import_dmabuf(env, warm, 4096, &err);
        REQUIRE(err == CL_SUCCESS);
        REQUIRE(clReleaseMemObject(m) == CL_SUCCESS);
        run_destructors();
    }
    const int fds_before = open_fd_count();
    e2e::Dmabuf a = e2e::make_dmabuf(4096);
    cl_mem first = import_dmabuf(env, a, 4096, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(clReleaseMemObject(first) == CL_SUCCESS);  // gone in the ICD, its callback owed
    e2e::Dmabuf b = e2e::make_dmabuf(4096);
    cl_mem second = import_dmabuf(env, b, 4096, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(second == first);  // the ICD gave the handle value back (the mode's point)
    run_destructors();          // the first import's callback, now
    cl_uint route = 99;
    CHECK(clGetMemObjectInfo(second, CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, sizeof route, &route, nullptr) ==
          CL_SUCCESS);
    CHECK(acquire(env.queue, 1, &second, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(release(env.queue, 1, &second, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    REQUIRE(clReleaseMemObject(second) == CL_SUCCESS);
    run_destructors();
    CHECK(open_fd_count() == fds_before);  // both imports' dma-bufs closed, each once
}

// ---- stale handles (issue #28, items 4 and 5) ------------------------------------------

namespace {

cl_mem import_dmabuf_flags(const Env &env, e2e::Dmabuf &buf, size_t size, cl_mem_flags flags, cl_int *err) {
    const cl_mem_properties props[] = {dma_buf, static_cast<cl_mem_properties>(buf.fd), 0};
    cl_mem mem = clCreateBufferWithProperties(env.context, props, flags, size, nullptr, err);
    if (mem) buf.release_fd();
    return mem;
}

// The layer's gauges (include/CL/cl_ext_cldmabuf.h): imports and layer
// events the application holds now, the registry's side-table entries.
cl_ulong layer_gauge(const Env &env, size_t which) {
    cl_ulong s[CL_STATS_COUNT_CLDMABUF] = {};
    size_t bytes = 0;
    REQUIRE(clGetPlatformInfo(env.platform, CL_PLATFORM_STATS_CLDMABUF, sizeof s, s, &bytes) == CL_SUCCESS);
    REQUIRE(bytes == sizeof s);
    return s[which];
}

void run_destructors(const Env &env) {
    REQUIRE(clGetPlatformInfo(env.platform, 0x7E5B, 0, nullptr, nullptr) == CL_SUCCESS);  // testicd.hpp
}

// What the layer opens once per process (the first import's probes) is not the test's.
void warm_up_imports(const Env &env) {
    cl_int err = CL_OUT_OF_RESOURCES;
    e2e::Dmabuf warm = e2e::make_dmabuf(4096);
    cl_mem m = import_dmabuf(env, warm, 4096, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(clReleaseMemObject(m) == CL_SUCCESS);
    run_destructors(env);
}

}  // namespace

// NVIDIA 580 hands a destroyed buffer's handle value to the next buffer
// before it calls the destroyed one's destructor callbacks.  A plain buffer
// on an import's old handle is a plain buffer: its own flags and no
// properties, host reads and writes as its flags allow (no read-only guard,
// no host-access refusal of the import's), no import route, an acquire of it
// refused; the old import's late callback still tears the old import down,
// once (its fds closed), and leaves the plain buffer alone.  The import is
// CL_MEM_READ_ONLY | CL_MEM_HOST_NO_ACCESS: in place (late-destructors) its
// mapping is read-only and the guard refuses host writes; on the copy route
// (late-destructors-discrete) the host-access flags refuse reads and writes.
TEST_CASE("a plain buffer on a dead import's handle is a plain buffer", "[late-destructors]") {
    REQUIRE_DMABUF();
    Env env;
    auto acquire = reinterpret_cast<clEnqueueAcquireExternalMemObjectsKHR_fn>(
        env.function("clEnqueueAcquireExternalMemObjectsKHR"));
    REQUIRE(acquire);
    warm_up_imports(env);
    const int fds_before = open_fd_count();
    cl_int err = CL_OUT_OF_RESOURCES;
    e2e::Dmabuf a = e2e::make_dmabuf(4096);
    cl_mem import = import_dmabuf_flags(env, a, 4096, CL_MEM_READ_ONLY | CL_MEM_HOST_NO_ACCESS, &err);
    REQUIRE(err == CL_SUCCESS);
    const unsigned char ones[64] = {1};
    CHECK(clEnqueueWriteBuffer(env.queue, import, CL_TRUE, 0, sizeof ones, ones, 0, nullptr, nullptr) ==
          CL_INVALID_OPERATION);  // the import's flags, as the layer holds them
    REQUIRE(clReleaseMemObject(import) == CL_SUCCESS);  // gone in the ICD, its callback owed

    cl_mem plain = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 4096, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(plain == import);  // the ICD gave the handle value back (the mode's point)

    size_t bytes = 99;
    CHECK(clGetMemObjectInfo(plain, CL_MEM_PROPERTIES, 0, nullptr, &bytes) == CL_SUCCESS);
    CHECK(bytes == 0);  // clCreateBuffer: no properties, not the import's list
    cl_mem_flags flags = 0;
    CHECK(clGetMemObjectInfo(plain, CL_MEM_FLAGS, sizeof flags, &flags, nullptr) == CL_SUCCESS);
    CHECK(flags == CL_MEM_READ_WRITE);
    cl_uint route = 99;
    CHECK(clGetMemObjectInfo(plain, CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, sizeof route, &route, nullptr) ==
          CL_INVALID_VALUE);  // not an import

    unsigned char pattern[4096], seen[4096] = {};
    for (size_t i = 0; i < sizeof pattern; ++i) pattern[i] = static_cast<unsigned char>(i * 7 + 3);
    CHECK(clEnqueueWriteBuffer(env.queue, plain, CL_TRUE, 0, sizeof pattern, pattern, 0, nullptr, nullptr) ==
          CL_SUCCESS);
    CHECK(clEnqueueReadBuffer(env.queue, plain, CL_TRUE, 0, sizeof seen, seen, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(std::memcmp(seen, pattern, sizeof seen) == 0);
    const unsigned char fill = 0x5A;
    CHECK(clEnqueueFillBuffer(env.queue, plain, &fill, 1, 0, 64, 0, nullptr, nullptr) == CL_SUCCESS);
    cl_mem src = clCreateBuffer(env.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4096, pattern, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(clEnqueueCopyBuffer(env.queue, src, plain, 0, 0, 4096, 0, nullptr, nullptr) == CL_SUCCESS);
    void *mapped = clEnqueueMapBuffer(env.queue, plain, CL_TRUE, CL_MAP_WRITE, 0, 4096, 0, nullptr, nullptr, &err);
    CHECK(err == CL_SUCCESS);
    if (mapped) {
        CHECK(std::memcmp(mapped, pattern, 4096) == 0);  // the copy reached this buffer, not the old dma-buf
        CHECK(clEnqueueUnmapMemObject(env.queue, plain, mapped, 0, nullptr, nullptr) == CL_SUCCESS);
    }
    CHECK(acquire(env.queue, 1, &plain, 0, nullptr, nullptr) == CL_INVALID_MEM_OBJECT);
    CHECK(clFinish(env.queue) == CL_SUCCESS);

    run_destructors(env);  // the import's callback, now: it must tear down the import, not the buffer
    std::memset(seen, 0, sizeof seen);
    CHECK(clEnqueueReadBuffer(env.queue, plain, CL_TRUE, 0, sizeof seen, seen, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(std::memcmp(seen, pattern, sizeof seen) == 0);
    CHECK(clReleaseMemObject(plain) == CL_SUCCESS);
    CHECK(clReleaseMemObject(src) == CL_SUCCESS);
    run_destructors(env);
    CHECK(open_fd_count() == fds_before);  // the import's dma-buf closed, once
    CHECK(layer_gauge(env, CL_STATS_LIVE_IMPORTS_CLDMABUF) == 0);
}

// The application's own references decide, not the ICD's count: an import
// the application retained stays an import until its last release.
TEST_CASE("an import stays an import until the application's last release", "[late-destructors]") {
    REQUIRE_DMABUF();
    Env env;
    cl_int err = CL_OUT_OF_RESOURCES;
    e2e::Dmabuf a = e2e::make_dmabuf(4096);
    cl_mem import = import_dmabuf(env, a, 4096, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(clRetainMemObject(import) == CL_SUCCESS);
    REQUIRE(clReleaseMemObject(import) == CL_SUCCESS);
    cl_uint route = 99;
    CHECK(clGetMemObjectInfo(import, CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, sizeof route, &route, nullptr) ==
          CL_SUCCESS);
    size_t bytes = 0;
    CHECK(clGetMemObjectInfo(import, CL_MEM_PROPERTIES, 0, nullptr, &bytes) == CL_SUCCESS);
    CHECK(bytes == 3 * sizeof(cl_mem_properties));
    CHECK(layer_gauge(env, CL_STATS_LIVE_IMPORTS_CLDMABUF) == 1);
    REQUIRE(clReleaseMemObject(import) == CL_SUCCESS);
    // The application's last release: the registry lets go at once, though
    // the ICD has not called the destructor callback yet.
    CHECK(layer_gauge(env, CL_STATS_LIVE_IMPORTS_CLDMABUF) == 0);
    run_destructors(env);
}

// The same for sub-buffers: a plain buffer on a released sub-buffer's handle
// is no slice of the import, and a newer sub-buffer of the import on that
// handle stays one when the old sub-buffer's callback comes late.
TEST_CASE("sub-buffer handles of an import are not stale either", "[late-destructors]") {
    REQUIRE_DMABUF();
    Env env;
    warm_up_imports(env);
    const int fds_before = open_fd_count();
    cl_int err = CL_OUT_OF_RESOURCES;
    e2e::Dmabuf a = e2e::make_dmabuf(8192);
    cl_mem import = import_dmabuf_flags(env, a, 8192, CL_MEM_READ_ONLY | CL_MEM_HOST_NO_ACCESS, &err);
    REQUIRE(err == CL_SUCCESS);
    const cl_buffer_region region{4096, 4096};
    const unsigned char ones[64] = {1};

    cl_mem sub1 = clCreateSubBuffer(import, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(clEnqueueWriteBuffer(env.queue, sub1, CL_TRUE, 0, sizeof ones, ones, 0, nullptr, nullptr) ==
          CL_INVALID_OPERATION);
    REQUIRE(clReleaseMemObject(sub1) == CL_SUCCESS);  // callback owed
    cl_mem sub2 = clCreateSubBuffer(import, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(sub2 == sub1);
    run_destructors(env);  // sub1's late callback: sub2 is still a slice of the import
    // (what the layer answers for a slice of an import: no host pointer and
    // no USE/COPY_HOST_PTR, which the import's own ICD object has)
    cl_mem_flags flags = 0;
    CHECK(clGetMemObjectInfo(sub2, CL_MEM_FLAGS, sizeof flags, &flags, nullptr) == CL_SUCCESS);
    CHECK((flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR)) == 0);
    CHECK(clEnqueueWriteBuffer(env.queue, sub2, CL_TRUE, 0, sizeof ones, ones, 0, nullptr, nullptr) ==
          CL_INVALID_OPERATION);

    REQUIRE(clReleaseMemObject(sub2) == CL_SUCCESS);  // callback owed
    cl_mem plain = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 4096, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(plain == sub2);
    CHECK(clEnqueueWriteBuffer(env.queue, plain, CL_TRUE, 0, sizeof ones, ones, 0, nullptr, nullptr) == CL_SUCCESS);
    unsigned char seen[64] = {};
    CHECK(clEnqueueReadBuffer(env.queue, plain, CL_TRUE, 0, sizeof seen, seen, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(std::memcmp(seen, ones, sizeof seen) == 0);
    cl_mem parent = import;
    CHECK(clGetMemObjectInfo(plain, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, nullptr) == CL_SUCCESS);
    CHECK(parent == nullptr);
    run_destructors(env);
    CHECK(clReleaseMemObject(plain) == CL_SUCCESS);
    CHECK(clReleaseMemObject(import) == CL_SUCCESS);
    run_destructors(env);
    CHECK(open_fd_count() == fds_before);
}

namespace {

cl_command_type command_type(cl_event ev) {
    cl_command_type type = 0;
    CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr) == CL_SUCCESS);
    return type;
}

cl_int execution_status(cl_event ev) {
    cl_int status = 99;
    CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) == CL_SUCCESS);
    return status;
}

void drop_icd_event_refs(const Env &env) {
    REQUIRE(clGetPlatformInfo(env.platform, 0x7E5C, 0, nullptr, nullptr) == CL_SUCCESS);  // testicd.hpp
}

}  // namespace

// An ICD that holds references of its own on events (NVIDIA): after the
// application's last release CL_EVENT_REFERENCE_COUNT is still above 1, yet
// the event is the application's no more, and once the ICD lets go it may
// hand the handle to the next event.  That event reports its own command
// type and status, not the layer command's that had the handle before.
TEST_CASE("a reused event handle reports its own command type and status", "[stale-events]") {
    REQUIRE_DMABUF();
    Env env;
    const auto [acquire, release] = Handoff(env);
    cl_mem mem = import_fresh(env, 4096);
    cl_event acquired = nullptr, released = nullptr;
    REQUIRE(acquire(env.queue, 1, &mem, 0, nullptr, &acquired) == CL_SUCCESS);
    REQUIRE(release(env.queue, 1, &mem, 0, nullptr, &released) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(command_type(acquired) == CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR);
    CHECK(command_type(released) == CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR);
    // The application's retain and release pair leaves it the application's.
    REQUIRE(clRetainEvent(acquired) == CL_SUCCESS);
    REQUIRE(clReleaseEvent(acquired) == CL_SUCCESS);
    CHECK(command_type(acquired) == CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR);
    cl_uint refs = 0;
    REQUIRE(clGetEventInfo(acquired, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, nullptr) == CL_SUCCESS);
    CHECK(refs >= 2);  // the application's and the ICD's own
    REQUIRE(clReleaseEvent(acquired) == CL_SUCCESS);
    REQUIRE(clReleaseEvent(released) == CL_SUCCESS);
    REQUIRE(clReleaseMemObject(mem) == CL_SUCCESS);
    drop_icd_event_refs(env);  // now the ICD destroys them; the handles come back

    // User events until both handles came back (the ICD reuses the last destroyed first).
    std::vector<cl_event> users;
    bool saw_acquired = false, saw_released = false;
    for (int i = 0; i < 256 && !(saw_acquired && saw_released); ++i) {
        cl_int err = CL_OUT_OF_RESOURCES;
        cl_event ev = clCreateUserEvent(env.context, &err);
        REQUIRE(err == CL_SUCCESS);
        users.push_back(ev);
        if (ev != acquired && ev != released) continue;
        (ev == acquired ? saw_acquired : saw_released) = true;
        CHECK(command_type(ev) == CL_COMMAND_USER);
        CHECK(execution_status(ev) == CL_SUBMITTED);
    }
    CHECK(saw_acquired);
    CHECK(saw_released);
    for (cl_event ev : users) {
        CHECK(clSetUserEventStatus(ev, CL_COMPLETE) == CL_SUCCESS);
        CHECK(clReleaseEvent(ev) == CL_SUCCESS);
    }
    drop_icd_event_refs(env);

    // And the ICD's own enqueue events (markers: past the layer's side table).
    std::vector<cl_event> markers;
    saw_acquired = saw_released = false;
    for (int i = 0; i < 256 && !(saw_acquired && saw_released); ++i) {
        cl_event ev = nullptr;
        REQUIRE(clEnqueueMarkerWithWaitList(env.queue, 0, nullptr, &ev) == CL_SUCCESS);
        markers.push_back(ev);
        if (ev != acquired && ev != released) continue;
        (ev == acquired ? saw_acquired : saw_released) = true;
        CHECK(command_type(ev) == CL_COMMAND_MARKER);
    }
    CHECK(saw_acquired);
    CHECK(saw_released);
    CHECK(clFinish(env.queue) == CL_SUCCESS);
    for (cl_event ev : markers) CHECK(clReleaseEvent(ev) == CL_SUCCESS);
    drop_icd_event_refs(env);
}

// The side table of the layer's events does not grow with the commands: each
// entry goes with the application's last release (its retains counted),
// whatever references the ICD keeps (here: one of its own on every event).
TEST_CASE("the layer's event entries go with the application's last release", "[stale-events]") {
    REQUIRE_DMABUF();
    Env env;
    const auto [acquire, release] = Handoff(env);
    cl_mem mem = import_fresh(env, 4096);
    const cl_ulong before = layer_gauge(env, CL_STATS_LIVE_LAYER_EVENTS_CLDMABUF);
    for (int round = 0; round < 50; ++round) {
        cl_event acquired = nullptr, released = nullptr;
        REQUIRE(acquire(env.queue, 1, &mem, 0, nullptr, &acquired) == CL_SUCCESS);
        REQUIRE(release(env.queue, 1, &mem, 1, &acquired, &released) == CL_SUCCESS);
        REQUIRE(clRetainEvent(released) == CL_SUCCESS);  // two references of the application's
        REQUIRE(clReleaseEvent(acquired) == CL_SUCCESS);
        REQUIRE(clWaitForEvents(1, &released) == CL_SUCCESS);
        REQUIRE(clReleaseEvent(released) == CL_SUCCESS);
        CHECK(command_type(released) == CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR);  // one left
        REQUIRE(clReleaseEvent(released) == CL_SUCCESS);
    }
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(layer_gauge(env, CL_STATS_LIVE_LAYER_EVENTS_CLDMABUF) == before);
    REQUIRE(clReleaseMemObject(mem) == CL_SUCCESS);
    drop_icd_event_refs(env);
}

// The allocator's side table (layer/core/allocated.cpp) has the same late
// callbacks: the one of an allocation whose handle a newer allocation got
// must close its own dma-buf fd, not the newer one's, and leave the newer
// one's entry (CL_MEM_DMA_BUF_FD_CLDMABUF) alone.
TEST_CASE("a late destructor callback of an allocation closes its own fd, not the newer allocation's",
          "[late-destructors]") {
    REQUIRE_DMABUF();
    Env env;
    const cl_mem_properties props[] = {CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, CL_DMA_BUF_EXPORTER_ANY_CLDMABUF, 0};
    cl_int err = CL_OUT_OF_RESOURCES;
    {
        cl_mem warm = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, 4096, nullptr, &err);
        if (!warm) SKIP("the allocator has no exporter here (error " << err << ")");
        REQUIRE(clReleaseMemObject(warm) == CL_SUCCESS);
        run_destructors(env);
    }
    const int fds_before = open_fd_count();
    cl_mem first = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, 4096, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(clReleaseMemObject(first) == CL_SUCCESS);  // its callback owed
    cl_mem second = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, 4096, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(second == first);
    run_destructors(env);  // the first allocation's callback, now
    cl_int fd = -1;
    CHECK(clGetMemObjectInfo(second, CL_MEM_DMA_BUF_FD_CLDMABUF, sizeof fd, &fd, nullptr) == CL_SUCCESS);
    if (fd >= 0) {
        struct stat st{};
        CHECK(fstat(fd, &st) == 0);
        close(fd);
    }
    // A plain buffer on the allocation's handle before its callback: none of
    // the allocator's answers.
    REQUIRE(clReleaseMemObject(second) == CL_SUCCESS);  // its callback owed
    cl_mem plain = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 4096, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(plain == second);
    fd = -1;
    CHECK(clGetMemObjectInfo(plain, CL_MEM_DMA_BUF_FD_CLDMABUF, sizeof fd, &fd, nullptr) == CL_INVALID_VALUE);
    if (fd >= 0) close(fd);
    cl_uint exporter = 0;
    CHECK(clGetMemObjectInfo(plain, CL_MEM_DMA_BUF_EXPORTER_CLDMABUF, sizeof exporter, &exporter, nullptr) ==
          CL_INVALID_VALUE);
    size_t bytes = 99;
    CHECK(clGetMemObjectInfo(plain, CL_MEM_PROPERTIES, 0, nullptr, &bytes) == CL_SUCCESS);
    CHECK(bytes == 0);
    run_destructors(env);
    REQUIRE(clReleaseMemObject(plain) == CL_SUCCESS);
    run_destructors(env);
    CHECK(open_fd_count() == fds_before);  // each allocation's fd closed, once
}
