// Q*: the queries and names cl_khr_external_memory / _dma_buf add.
#include <algorithm>

#include "spec_common.hpp"

using namespace spec;

namespace {

std::vector<cl_external_memory_handle_type_khr> platform_types(cl_platform_id p, cl_platform_info what) {
    size_t bytes = 0;
    REQUIRE(clGetPlatformInfo(p, what, 0, nullptr, &bytes) == CL_SUCCESS);
    REQUIRE(bytes % sizeof(cl_external_memory_handle_type_khr) == 0);
    std::vector<cl_external_memory_handle_type_khr> v(bytes / sizeof(cl_external_memory_handle_type_khr));
    if (bytes) REQUIRE(clGetPlatformInfo(p, what, bytes, v.data(), nullptr) == CL_SUCCESS);
    return v;
}

std::vector<cl_external_memory_handle_type_khr> device_types(cl_device_id d, cl_device_info what) {
    size_t bytes = 0;
    REQUIRE(clGetDeviceInfo(d, what, 0, nullptr, &bytes) == CL_SUCCESS);
    REQUIRE(bytes % sizeof(cl_external_memory_handle_type_khr) == 0);
    std::vector<cl_external_memory_handle_type_khr> v(bytes / sizeof(cl_external_memory_handle_type_khr));
    if (bytes) REQUIRE(clGetDeviceInfo(d, what, bytes, v.data(), nullptr) == CL_SUCCESS);
    return v;
}

std::vector<cl_device_id> all_devices(cl_platform_id p) {
    cl_uint n = 0;
    REQUIRE(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) == CL_SUCCESS);
    std::vector<cl_device_id> d(n);
    REQUIRE(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, d.data(), nullptr) == CL_SUCCESS);
    return d;
}

bool contains(const std::vector<cl_external_memory_handle_type_khr> &v, cl_external_memory_handle_type_khr t) {
    return std::find(v.begin(), v.end(), t) != v.end();
}

std::vector<cl_name_version> versions(cl_platform_id p, cl_device_id d) {
    size_t n = 0;
    if (d)
        REQUIRE(clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, nullptr, &n) == CL_SUCCESS);
    else
        REQUIRE(clGetPlatformInfo(p, CL_PLATFORM_EXTENSIONS_WITH_VERSION, 0, nullptr, &n) == CL_SUCCESS);
    std::vector<cl_name_version> v(n / sizeof(cl_name_version));
    if (d)
        REQUIRE(clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS_WITH_VERSION, n, v.data(), nullptr) == CL_SUCCESS);
    else
        REQUIRE(clGetPlatformInfo(p, CL_PLATFORM_EXTENSIONS_WITH_VERSION, n, v.data(), nullptr) == CL_SUCCESS);
    return v;
}

bool listed(const std::string &exts, const char *name) {
    auto words = e2e::split_words(exts);
    return std::find(words.begin(), words.end(), name) != words.end();
}

}  // namespace

// Not the variable but the dispatch chain: the layer named by OPENCL_LAYERS
// answers its own entry point (a wrong path leaves the bare ICD).
TEST_CASE("Q0: the layer is enabled for the specification tests", "[spec][query]") {
    INFO(e2e::layer_problem());
    REQUIRE(e2e::layer_enabled());
}

// xml/cl.xml: cl_khr_external_memory revision 1.0.1, cl_khr_external_memory_dma_buf
// revision 1.0.0; both name strings are reported by platform and device.
TEST_CASE("Q1: both name strings are reported, with the registry's revisions (1.0.1 and 1.0.0)",
          "[spec][query]") {
    ClEnv env;
    CHECK(listed(e2e::platform_string(env.platform, CL_PLATFORM_EXTENSIONS), "cl_khr_external_memory"));
    CHECK(listed(e2e::platform_string(env.platform, CL_PLATFORM_EXTENSIONS), "cl_khr_external_memory_dma_buf"));
    CHECK(listed(e2e::device_string(env.device, CL_DEVICE_EXTENSIONS), "cl_khr_external_memory"));
    CHECK(listed(e2e::device_string(env.device, CL_DEVICE_EXTENSIONS), "cl_khr_external_memory_dma_buf"));
    for (cl_device_id d : {static_cast<cl_device_id>(nullptr), env.device}) {
        auto v = versions(env.platform, d);
        auto find = [&](const char *name) -> const cl_name_version * {
            for (auto &e : v)
                if (!std::strcmp(e.name, name)) return &e;
            return nullptr;
        };
        const cl_name_version *mem = find("cl_khr_external_memory");
        const cl_name_version *dma = find("cl_khr_external_memory_dma_buf");
        REQUIRE(mem);
        REQUIRE(dma);
        CHECK(mem->version == CL_MAKE_VERSION(1, 0, 1));
        CHECK(dma->version == CL_MAKE_VERSION(1, 0, 0));
    }
}

// "This extension requires OpenCL 3.0" (both); "_dma_buf requires cl_khr_external_memory".
TEST_CASE("Q2: the extensions are only reported on OpenCL 3.0, dma_buf only together with external_memory",
          "[spec][query]") {
    ClEnv env;
    cl_version pv = 0, dv = 0;
    REQUIRE(clGetPlatformInfo(env.platform, CL_PLATFORM_NUMERIC_VERSION, sizeof pv, &pv, nullptr) == CL_SUCCESS);
    REQUIRE(clGetDeviceInfo(env.device, CL_DEVICE_NUMERIC_VERSION, sizeof dv, &dv, nullptr) == CL_SUCCESS);
    CHECK(CL_VERSION_MAJOR(pv) >= 3);
    CHECK(CL_VERSION_MAJOR(dv) >= 3);
    const std::string exts = e2e::device_string(env.device, CL_DEVICE_EXTENSIONS);
    if (listed(exts, "cl_khr_external_memory_dma_buf")) CHECK(listed(exts, "cl_khr_external_memory"));
}

// New Commands: clEnqueueAcquireExternalMemObjectsKHR, clEnqueueReleaseExternalMemObjectsKHR.
TEST_CASE("Q3: both new commands are returned by clGetExtensionFunctionAddressForPlatform", "[spec][query]") {
    ClEnv env;
    CHECK(clGetExtensionFunctionAddressForPlatform(env.platform, "clEnqueueAcquireExternalMemObjectsKHR"));
    CHECK(clGetExtensionFunctionAddressForPlatform(env.platform, "clEnqueueReleaseExternalMemObjectsKHR"));
}

// CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR: "must return a common list
// of external memory handle types supported by all devices in the platform".
TEST_CASE("Q4: the platform's handle types are supported by every device of the platform", "[spec][query]") {
    ClEnv env;
    auto common = platform_types(env.platform, CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR);
    for (cl_device_id d : all_devices(env.platform)) {
        auto dev = device_types(d, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR);
        for (auto t : common) CHECK(contains(dev, t));
    }
    // cl_khr_external_memory_dma_buf: the dma-buf handle type is what it adds.
    CHECK(contains(common, CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR));
}

// CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR: "Must return a non-empty list
// ... for at least one of the devices in the platform".
TEST_CASE("Q5: at least one device reports a non-empty handle-type list, containing DMA_BUF", "[spec][query]") {
    ClEnv env;
    bool any = false;
    for (cl_device_id d : all_devices(env.platform)) {
        auto v = device_types(d, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR);
        any |= !v.empty();
    }
    CHECK(any);
    CHECK(contains(device_types(env.device, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR),
                   CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR));
}

// CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR: "This list
// contains a subset of CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR. The
// returned list may be empty."  (Images are not imported yet: the honest
// answer today is the empty list, which is a subset.)
TEST_CASE("Q6: the ASSUME_LINEAR_IMAGES list is a subset of the device's import handle types", "[spec][query]") {
    ClEnv env;
    for (cl_device_id d : all_devices(env.platform)) {
        auto all = device_types(d, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR);
        auto linear = device_types(d, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR);
        for (auto t : linear) CHECK(contains(all, t));
    }
}

// The handle type is a cl_uint (New Types: typedef cl_uint
// cl_external_memory_handle_type_khr); the array queries follow the usual
// param_value_size rules.
TEST_CASE("Q7: handle-type queries return cl_uint arrays and refuse a too small buffer", "[spec][query]") {
    ClEnv env;
    STATIC_REQUIRE(sizeof(cl_external_memory_handle_type_khr) == sizeof(cl_uint));
    size_t bytes = 0;
    REQUIRE(clGetDeviceInfo(env.device, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, 0, nullptr, &bytes) ==
            CL_SUCCESS);
    REQUIRE(bytes >= sizeof(cl_uint));
    cl_uint one = 0;
    CHECK(clGetDeviceInfo(env.device, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, 1, &one, nullptr) ==
          CL_INVALID_VALUE);
    CHECK(clGetPlatformInfo(env.platform, CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, 1, &one, nullptr) ==
          CL_INVALID_VALUE);
}

// Sub-devices are devices of the platform too: what their parent imports they
// report (the platform list is common to all devices).
TEST_CASE("Q8: sub-devices report the platform's handle types", "[spec][query]") {
    ClEnv env;
    SubDevices sd(env.device);
    REQUIRE_SUBDEVICES(sd);
    auto common = platform_types(env.platform, CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR);
    for (cl_device_id d : sd.devices) {
        auto v = device_types(d, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR);
        for (auto t : common) CHECK(contains(v, t));
    }
}
