//
// cl_khr_external_memory / cl_khr_external_memory_dma_buf: the handle-type
// queries and CL_MEM_PROPERTIES.  Each test cites the sentence it checks.
//
#include <algorithm>

#include "external_memory_dma_buf_common.h"

using namespace dma_buf_test;

namespace {

std::vector<cl_external_memory_handle_type_khr>
handle_types(cl_platform_id platform, cl_device_id device, cl_uint param,
             cl_int *err)
{
    size_t bytes = 0;
    *err = device ? clGetDeviceInfo(device, param, 0, nullptr, &bytes)
                  : clGetPlatformInfo(platform, param, 0, nullptr, &bytes);
    std::vector<cl_external_memory_handle_type_khr> out(
        bytes / sizeof(cl_external_memory_handle_type_khr));
    if (*err == CL_SUCCESS && bytes % sizeof(cl_external_memory_handle_type_khr))
        *err = CL_INVALID_VALUE; // not a whole number of handle types
    if (*err == CL_SUCCESS && bytes)
        *err = device
            ? clGetDeviceInfo(device, param, bytes, out.data(), nullptr)
            : clGetPlatformInfo(platform, param, bytes, out.data(), nullptr);
    return out;
}

bool lists(const std::vector<cl_external_memory_handle_type_khr> &v,
           cl_external_memory_handle_type_khr t)
{
    return std::find(v.begin(), v.end(), t) != v.end();
}

} // namespace

// CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR: "Returns the list of
// external memory handle types supported by the device."  A device reporting
// cl_khr_external_memory_dma_buf lists CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR.
REGISTER_TEST(external_memory_dma_buf_device_handle_types)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    cl_int err = CL_SUCCESS;
    auto types = handle_types(nullptr, device,
                              CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR,
                              &err);
    test_error(err, "CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR");
    test_assert_error(lists(types, CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR),
                      "the device's import handle types lack DMA_BUF");
    return TEST_PASS;
}

// CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR: "Returns the list of
// importable external memory handle types supported by all devices in
// platform."  Every type the platform lists is in each device's list.
REGISTER_TEST(external_memory_dma_buf_platform_handle_types)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    cl_int err = CL_SUCCESS;
    cl_platform_id platform = platform_of(device);
    auto platform_types = handle_types(
        platform, nullptr, CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR,
        &err);
    test_error(err, "CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR");
    cl_uint n = 0;
    test_error(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n),
               "clGetDeviceIDs");
    std::vector<cl_device_id> devices(n);
    test_error(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, devices.data(),
                              nullptr),
               "clGetDeviceIDs");
    for (cl_device_id d : devices)
    {
        auto device_types = handle_types(
            nullptr, d, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, &err);
        test_error(err, "CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR");
        for (auto t : platform_types)
            test_assert_error(lists(device_types, t),
                              "a platform handle type is missing on a device");
    }
    return TEST_PASS;
}

// CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR
// (1.0.1): the handle types for which images are assumed linear; a subset of
// the device's import handle types (it may be empty).
REGISTER_TEST(external_memory_dma_buf_assume_linear_images_handle_types)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    cl_int err = CL_SUCCESS;
    auto all = handle_types(nullptr, device,
                            CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR,
                            &err);
    test_error(err, "CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR");
    auto linear = handle_types(
        nullptr, device,
        CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR,
        &err);
    if (err == CL_INVALID_VALUE)
    {
        log_info("the ICD predates revision 1.0.1 of cl_khr_external_memory "
                 "(no ASSUME_LINEAR query)\n");
        return TEST_SKIPPED_ITSELF;
    }
    test_error(err, "..._ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR");
    for (auto t : linear)
        test_assert_error(lists(all, t),
                          "an assume-linear type is not an import type");
    return TEST_PASS;
}

// CL_MEM_PROPERTIES: "Return the properties argument specified in
// clCreateBufferWithProperties" -- the list as given, in the same order.
REGISTER_TEST(external_memory_dma_buf_mem_properties)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    ALLOCATE_DMA_BUF(fd, 4096);
    const cl_mem_properties props[] = {
        CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
        static_cast<cl_mem_properties>(fd),
        CL_MEM_DEVICE_HANDLE_LIST_KHR,
        reinterpret_cast<cl_mem_properties>(device),
        CL_MEM_DEVICE_HANDLE_LIST_END_KHR,
        0
    };
    cl_int err = CL_SUCCESS;
    clMemWrapper mem = clCreateBufferWithProperties(
        context, props, CL_MEM_READ_WRITE, 4096, nullptr, &err);
    if (err != CL_SUCCESS) close(fd); // a failed import leaves the fd ours
    test_error(err, "clCreateBufferWithProperties");
    size_t bytes = 0;
    test_error(clGetMemObjectInfo(mem, CL_MEM_PROPERTIES, 0, nullptr, &bytes),
               "CL_MEM_PROPERTIES size");
    test_assert_error(bytes == sizeof(props), "CL_MEM_PROPERTIES size differs");
    std::vector<cl_mem_properties> got(bytes / sizeof(cl_mem_properties));
    test_error(clGetMemObjectInfo(mem, CL_MEM_PROPERTIES, bytes, got.data(),
                                  nullptr),
               "CL_MEM_PROPERTIES");
    test_assert_error(std::equal(got.begin(), got.end(), props),
                      "CL_MEM_PROPERTIES is not the list as given");
    return TEST_PASS;
}
