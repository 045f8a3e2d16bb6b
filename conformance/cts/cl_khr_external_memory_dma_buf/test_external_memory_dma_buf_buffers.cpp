//
// cl_khr_external_memory_dma_buf: buffer imports carry the dma-buf's bytes
// both ways, through reads and writes, sub-buffers and maps.
//
#include "external_memory_dma_buf_common.h"

using namespace dma_buf_test;

// "Applications must acquire the memory objects that are created using
// external handles before they can be used by any OpenCL commands" and
// clEnqueueReleaseExternalMemObjectsKHR: "to guarantee that the state of
// memory objects is up-to-date and that they are accessible outside of
// OpenCL".  A CPU write before acquire is read by OpenCL; an OpenCL write is
// seen by the CPU after release.
REGISTER_TEST(external_memory_dma_buf_buffer_round_trip)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    const size_t size = 64 * 1024;
    ALLOCATE_DMA_BUF(fd, size);
    const int keep = dup(fd); // the CPU's view; the import owns `fd`
    CpuView view(keep, size);
    test_assert_error(view.ok(), "mmap of the dma-buf failed");
    view.fill(1);
    cl_int err = CL_SUCCESS;
    clMemWrapper mem = import_buffer(context, fd, size, &err);
    if (err != CL_SUCCESS) close(fd);
    test_error(err, "import");
    cl_mem m = mem;
    test_error(fns.acquire(queue, 1, &m, 0, nullptr, nullptr), "acquire");
    std::vector<uint8_t> seen(size);
    test_error(clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, size, seen.data(), 0,
                                   nullptr, nullptr),
               "read");
    test_assert_error(seen == expected_pattern(size, 1),
                      "OpenCL did not read the CPU's bytes after acquire");
    auto next = expected_pattern(size, 2);
    test_error(clEnqueueWriteBuffer(queue, mem, CL_FALSE, 0, size, next.data(),
                                    0, nullptr, nullptr),
               "write");
    clEventWrapper released;
    test_error(fns.release(queue, 1, &m, 0, nullptr, &released), "release");
    test_error(clWaitForEvents(1, &released), "wait for the release");
    test_assert_error(view.first_mismatch(2) == SIZE_MAX,
                      "the CPU did not see OpenCL's write after release");
    close(keep);
    return TEST_PASS;
}

// The dma_buf handle: "the size of the memory object may be smaller than the
// dma-buf" -- an import of the first bytes covers exactly those bytes.
REGISTER_TEST(external_memory_dma_buf_buffer_smaller_than_dma_buf)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    const size_t size = 16 * 1024, part = 4096 + 512;
    ALLOCATE_DMA_BUF(fd, size);
    const int keep = dup(fd);
    CpuView view(keep, size);
    test_assert_error(view.ok(), "mmap of the dma-buf failed");
    view.fill(3);
    cl_int err = CL_SUCCESS;
    clMemWrapper mem = import_buffer(context, fd, part, &err);
    if (err != CL_SUCCESS) close(fd);
    test_error(err, "import of a part");
    size_t reported = 0;
    test_error(clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof(reported), &reported,
                                  nullptr),
               "CL_MEM_SIZE");
    test_assert_error(reported == part, "CL_MEM_SIZE is not the size asked");
    cl_mem m = mem;
    test_error(fns.acquire(queue, 1, &m, 0, nullptr, nullptr), "acquire");
    std::vector<uint8_t> seen(part);
    test_error(clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, part, seen.data(), 0,
                                   nullptr, nullptr),
               "read");
    test_assert_error(seen == expected_pattern(part, 3),
                      "the part read is not the dma-buf's first bytes");
    test_error(fns.release(queue, 1, &m, 0, nullptr, nullptr), "release");
    test_error(clFinish(queue), "clFinish");
    close(keep);
    return TEST_PASS;
}

// clCreateSubBuffer on an import: a region of the same memory (core: "a
// sub-buffer object ... created from an existing buffer object" shares its
// data store).  Reads through sub-buffers at two offsets; a write through one
// reaches the dma-buf at its offset.
REGISTER_TEST(external_memory_dma_buf_sub_buffer)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    cl_uint align_bits = 0;
    test_error(clGetDeviceInfo(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN,
                               sizeof(align_bits), &align_bits, nullptr),
               "CL_DEVICE_MEM_BASE_ADDR_ALIGN");
    const size_t align = std::max<size_t>(align_bits / 8, 64);
    const size_t size = 8 * align + 65536, off = 4 * align, len = 8192;
    ALLOCATE_DMA_BUF(fd, size);
    const int keep = dup(fd);
    CpuView view(keep, size);
    test_assert_error(view.ok(), "mmap of the dma-buf failed");
    view.fill(5);
    cl_int err = CL_SUCCESS;
    clMemWrapper mem = import_buffer(context, fd, size, &err);
    if (err != CL_SUCCESS) close(fd);
    test_error(err, "import");
    cl_buffer_region region = { off, len };
    clMemWrapper sub = clCreateSubBuffer(mem, CL_MEM_READ_WRITE,
                                         CL_BUFFER_CREATE_TYPE_REGION, &region,
                                         &err);
    test_error(err, "clCreateSubBuffer");
    cl_mem m = mem;
    test_error(fns.acquire(queue, 1, &m, 0, nullptr, nullptr), "acquire");
    std::vector<uint8_t> seen(len);
    test_error(clEnqueueReadBuffer(queue, sub, CL_TRUE, 0, len, seen.data(), 0,
                                   nullptr, nullptr),
               "read through the sub-buffer");
    test_assert_error(seen == expected_pattern(len, 5, off),
                      "the sub-buffer does not read the dma-buf at its offset");
    auto next = expected_pattern(len, 6, off);
    test_error(clEnqueueWriteBuffer(queue, sub, CL_TRUE, 0, len, next.data(), 0,
                                    nullptr, nullptr),
               "write through the sub-buffer");
    test_error(fns.release(queue, 1, &m, 0, nullptr, nullptr), "release");
    test_error(clFinish(queue), "clFinish");
    test_assert_error(view.first_mismatch(6, off, len) == SIZE_MAX,
                      "the sub-buffer's write did not reach the dma-buf");
    test_assert_error(view.first_mismatch(5, 0, off) == SIZE_MAX,
                      "bytes before the sub-buffer changed");
    close(keep);
    return TEST_PASS;
}

// The dma_buf handle: "Host access ... while acquired goes through OpenCL":
// clEnqueueMapBuffer between acquire and release shows the dma-buf's bytes,
// and a write through the map is in the dma-buf after unmap and release.
REGISTER_TEST(external_memory_dma_buf_map_unmap)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    const size_t size = 32 * 1024;
    ALLOCATE_DMA_BUF(fd, size);
    const int keep = dup(fd);
    CpuView view(keep, size);
    test_assert_error(view.ok(), "mmap of the dma-buf failed");
    view.fill(7);
    cl_int err = CL_SUCCESS;
    clMemWrapper mem = import_buffer(context, fd, size, &err);
    if (err != CL_SUCCESS) close(fd);
    test_error(err, "import");
    cl_mem m = mem;
    test_error(fns.acquire(queue, 1, &m, 0, nullptr, nullptr), "acquire");
    auto *p = static_cast<uint8_t *>(
        clEnqueueMapBuffer(queue, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                           size, 0, nullptr, nullptr, &err));
    test_error(err, "clEnqueueMapBuffer");
    const auto want = expected_pattern(size, 7);
    const bool same = std::equal(want.begin(), want.end(), p);
    const auto next = expected_pattern(size, 8);
    std::copy(next.begin(), next.end(), p);
    test_error(clEnqueueUnmapMemObject(queue, mem, p, 0, nullptr, nullptr),
               "clEnqueueUnmapMemObject");
    test_error(fns.release(queue, 1, &m, 0, nullptr, nullptr), "release");
    test_error(clFinish(queue), "clFinish");
    test_assert_error(same, "the map did not show the dma-buf's bytes");
    test_assert_error(view.first_mismatch(8) == SIZE_MAX,
                      "the write through the map is not in the dma-buf");
    close(keep);
    return TEST_PASS;
}
