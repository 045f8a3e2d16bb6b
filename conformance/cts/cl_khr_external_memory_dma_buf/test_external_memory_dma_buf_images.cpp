//
// cl_khr_external_memory_dma_buf: a linear 2D image over a dma-buf, with a
// row pitch wider than the row.
//
#include <algorithm>

#include "external_memory_dma_buf_common.h"

using namespace dma_buf_test;


// CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR:
// for the handle types listed, an image is imported with a linear layout,
// its rows image_row_pitch bytes apart.  A CPU-written dma-buf reads back
// pixel-exact through clEnqueueReadImage after acquire; a clEnqueueWriteImage
// reaches the dma-buf at the pitch by release, leaving each row's padding
// alone.
REGISTER_TEST(external_memory_dma_buf_image_linear_2d_pitch)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    if (!assumes_linear_dma_buf(device))
    {
        log_info("the device does not list DMA_BUF among the handle types "
                 "whose images are linear: no layout to check\n");
        return TEST_SKIPPED_ITSELF;
    }
    const cl_image_format format = { CL_RGBA, CL_UNSIGNED_INT8 };
    const size_t width = 37, height = 19, elem = 4;
    const size_t pitch = ((width * elem + 63) / 64) * 64 + 64; // padded rows
    const size_t size = pitch * height;
    ALLOCATE_DMA_BUF(fd, size);
    const int keep = dup(fd);
    CpuView view(keep, size);
    test_assert_error(view.ok(), "mmap of the dma-buf failed");
    view.fill(11);
    cl_int err = CL_SUCCESS;
    clMemWrapper image =
        import_image_2d(context, fd, format, width, height, pitch, &err);
    if (err != CL_SUCCESS) close(fd);
    if (err == CL_IMAGE_FORMAT_NOT_SUPPORTED)
    {
        close(keep);
        log_info("RGBA/UNSIGNED_INT8 images are not supported here\n");
        return TEST_SKIPPED_ITSELF;
    }
    test_error(err, "clCreateImageWithProperties");
    cl_mem m = image;
    test_error(fns.acquire(queue, 1, &m, 0, nullptr, nullptr), "acquire");
    const size_t origin[3] = { 0, 0, 0 }, region[3] = { width, height, 1 };
    std::vector<uint8_t> seen(width * elem * height);
    test_error(clEnqueueReadImage(queue, image, CL_TRUE, origin, region, 0, 0,
                                  seen.data(), 0, nullptr, nullptr),
               "clEnqueueReadImage");
    bool read_right = true;
    for (size_t y = 0; y < height; ++y)
        for (size_t x = 0; x < width * elem; ++x)
            read_right = read_right
                && seen[y * width * elem + x] == CpuView::pattern(y * pitch + x, 11);
    std::vector<uint8_t> next(width * elem * height);
    for (size_t i = 0; i < next.size(); ++i)
        next[i] = static_cast<uint8_t>(i * 7 + 3);
    test_error(clEnqueueWriteImage(queue, image, CL_TRUE, origin, region, 0, 0,
                                   next.data(), 0, nullptr, nullptr),
               "clEnqueueWriteImage");
    test_error(fns.release(queue, 1, &m, 0, nullptr, nullptr), "release");
    test_error(clFinish(queue), "clFinish");
    test_assert_error(read_right,
                      "the image did not read the dma-buf's rows at the pitch");
    const std::vector<uint8_t> now = view.contents();
    bool rows_right = true, padding_kept = true;
    for (size_t y = 0; y < height; ++y)
        for (size_t x = 0; x < pitch; ++x)
        {
            const uint8_t b = now[y * pitch + x];
            if (x < width * elem)
                rows_right = rows_right && b == next[y * width * elem + x];
            else
                padding_kept = padding_kept && b == CpuView::pattern(y * pitch + x, 11);
        }
    test_assert_error(rows_right,
                      "the image's write is not in the dma-buf at the pitch");
    test_assert_error(padding_kept, "the row padding changed");
    close(keep);
    return TEST_PASS;
}
