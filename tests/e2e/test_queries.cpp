// What an application sees of the layer before it imports anything.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"

#include "cl_fixture.hpp"

using namespace e2e;

namespace {

std::vector<std::string> versioned_names(cl_platform_id p, cl_device_id d) {
    size_t n = 0;
    cl_int err = d ? clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, nullptr, &n)
                   : clGetPlatformInfo(p, CL_PLATFORM_EXTENSIONS_WITH_VERSION, 0, nullptr, &n);
    REQUIRE(err == CL_SUCCESS);
    std::vector<cl_name_version> list(n / sizeof(cl_name_version));
    err = d ? clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS_WITH_VERSION, n, list.data(), nullptr)
            : clGetPlatformInfo(p, CL_PLATFORM_EXTENSIONS_WITH_VERSION, n, list.data(), nullptr);
    REQUIRE(err == CL_SUCCESS);
    std::vector<std::string> names;
    for (auto &e : list) names.emplace_back(e.name);
    std::sort(names.begin(), names.end());
    return names;
}

bool contains(const std::vector<std::string> &v, const char *w) { return std::find(v.begin(), v.end(), w) != v.end(); }

}  // namespace

TEST_CASE("the layer is enabled for the end-to-end tests") { REQUIRE(layer_enabled()); }

TEST_CASE("platform and device list both extensions, plain and versioned lists agree") {
    ClEnv env;
    auto platform_words = split_words(platform_string(env.platform, CL_PLATFORM_EXTENSIONS));
    auto device_words = split_words(device_string(env.device, CL_DEVICE_EXTENSIONS));
    for (const char *ext : {"cl_khr_external_memory", "cl_khr_external_memory_dma_buf"}) {
        CHECK(contains(platform_words, ext));
        CHECK(contains(device_words, ext));
        CHECK(std::count(device_words.begin(), device_words.end(), std::string(ext)) == 1);
    }
    std::sort(platform_words.begin(), platform_words.end());
    std::sort(device_words.begin(), device_words.end());
    CHECK(versioned_names(env.platform, nullptr) == platform_words);
    CHECK(versioned_names(nullptr, env.device) == device_words);
}

TEST_CASE("handle-type queries answer DMA_BUF") {
    ClEnv env;
    // DMA_BUF once, with whatever the ICD lists itself (NVIDIA: OPAQUE_FD).
    auto check = [](const cl_external_memory_handle_type_khr *types, size_t bytes) {
        REQUIRE(bytes % sizeof(cl_external_memory_handle_type_khr) == 0);
        const size_t n = bytes / sizeof(cl_external_memory_handle_type_khr);
        REQUIRE(n >= 1);
        CHECK(std::count(types, types + n, cl_external_memory_handle_type_khr(CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR)) ==
              1);
    };
    cl_external_memory_handle_type_khr types[8] = {};
    size_t bytes = 0;
    REQUIRE(clGetPlatformInfo(env.platform, CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, sizeof types, types,
                              &bytes) == CL_SUCCESS);
    check(types, bytes);
    const size_t platform_bytes = bytes;
    bytes = 0;
    REQUIRE(clGetDeviceInfo(env.device, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, sizeof types, types,
                            &bytes) == CL_SUCCESS);
    check(types, bytes);
    if (!icd_has_own_external_memory(env.device)) {
        CHECK(platform_bytes == sizeof(cl_external_memory_handle_type_khr));
        CHECK(bytes == sizeof(cl_external_memory_handle_type_khr));
    }
    // Too small a buffer is the usual CL_INVALID_VALUE.
    CHECK(clGetDeviceInfo(env.device, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, 1, types, nullptr) ==
          CL_INVALID_VALUE);
    // A string query with a short buffer fails the same way.
    char tiny[4];
    CHECK(clGetPlatformInfo(env.platform, CL_PLATFORM_EXTENSIONS, sizeof tiny, tiny, nullptr) == CL_INVALID_VALUE);
}

TEST_CASE("extension functions come from the layer, other names still reach the ICD") {
    ClEnv env;
    CHECK(env.acquire != nullptr);
    CHECK(env.release != nullptr);
    CHECK(clGetExtensionFunctionAddress("clEnqueueAcquireExternalMemObjectsKHR") ==
          reinterpret_cast<void *>(env.acquire));
    CHECK(clGetExtensionFunctionAddressForPlatform(env.platform, "clNoSuchFunctionKHR") == nullptr);
}

TEST_CASE("calls the layer does not touch behave as without it") {
    ClEnv env;
    cl_int err = CL_SUCCESS;
    cl_mem plain = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 64, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    const cl_mem_properties none[] = {0};
    cl_mem with_props = clCreateBufferWithProperties(env.context, none, CL_MEM_READ_WRITE, 64, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    size_t n = 99;
    REQUIRE(clGetMemObjectInfo(plain, CL_MEM_PROPERTIES, 0, nullptr, &n) == CL_SUCCESS);
    CHECK(n == 0);
    unsigned char data[64];
    std::memset(data, 7, sizeof data);
    REQUIRE(clEnqueueWriteBuffer(env.queue, with_props, CL_TRUE, 0, 64, data, 0, nullptr, nullptr) == CL_SUCCESS);
    unsigned char back[64] = {};
    REQUIRE(clEnqueueReadBuffer(env.queue, with_props, CL_TRUE, 0, 64, back, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(std::memcmp(data, back, 64) == 0);
    clReleaseMemObject(plain);
    clReleaseMemObject(with_props);
}

TEST_CASE("the layer's counters: the whole array, a caller's older 13-counter array, too small refused") {
    ClEnv env;
    size_t bytes = 0;
    REQUIRE(clGetPlatformInfo(env.platform, CL_PLATFORM_STATS_CLDMABUF, 0, nullptr, &bytes) == CL_SUCCESS);
    CHECK(bytes == CL_STATS_COUNT_CLDMABUF * sizeof(cl_ulong));
    std::vector<cl_ulong> all(CL_STATS_COUNT_CLDMABUF, ~cl_ulong{0});
    REQUIRE(clGetPlatformInfo(env.platform, CL_PLATFORM_STATS_CLDMABUF, bytes, all.data(), nullptr) == CL_SUCCESS);
    // Built against the header before quiet_handoffs: 13 counters, the same first 13.
    std::vector<cl_ulong> older(14, 0xabab);
    size_t ret = 0;
    REQUIRE(clGetPlatformInfo(env.platform, CL_PLATFORM_STATS_CLDMABUF, 13 * sizeof(cl_ulong), older.data(), &ret) ==
            CL_SUCCESS);
    CHECK(ret == bytes);
    CHECK(older[13] == 0xabab);  // nothing written past the caller's array
    CHECK(older[CL_STATS_BLT_COPIES_CLDMABUF] == all[CL_STATS_BLT_COPIES_CLDMABUF]);  // nothing ran between
    CHECK(clGetPlatformInfo(env.platform, CL_PLATFORM_STATS_CLDMABUF, 12 * sizeof(cl_ulong), older.data(), nullptr) ==
          CL_INVALID_VALUE);
    CHECK(clGetPlatformInfo(env.platform, CL_PLATFORM_STATS_CLDMABUF, bytes + 4, all.data(), nullptr) == CL_SUCCESS);
    CHECK(clGetPlatformInfo(env.platform, CL_PLATFORM_STATS_CLDMABUF, 13 * sizeof(cl_ulong) + 4, older.data(),
                            nullptr) == CL_INVALID_VALUE);
}
