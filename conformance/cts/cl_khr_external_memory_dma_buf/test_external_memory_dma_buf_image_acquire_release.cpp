//
// cl_khr_external_memory: acquire and release of an image import -- the
// same orderings as a buffer's (test_external_memory_dma_buf_acquire_
// release.cpp), checked on a linear 2D image with padded rows, where a
// device copy (an image is often one) must move the pixels at the pitch.
//
#include "external_memory_dma_buf_common.h"

using namespace dma_buf_test;

namespace {

const cl_image_format rgba8 = { CL_RGBA, CL_UNSIGNED_INT8 };
const size_t width = 29, height = 13, elem = 4;
const size_t pitch = 192; // 116 bytes of pixels, 76 of padding per row
const size_t dmabuf_size = pitch * height;

// The 2D image over `fd` (owned by it on success); *skip set where the
// device cannot check this layout or format.
cl_mem import_image(cl_context context, int fd, cl_int *err, bool *skip)
{
    cl_mem m = import_image_2d(context, fd, rgba8, width, height, pitch, err);
    *skip = *err == CL_IMAGE_FORMAT_NOT_SUPPORTED;
    return m;
}

// The pixels of pattern(seed) as the dma-buf holds them at the pitch,
// packed (what clEnqueueReadImage with row pitch 0 gives).
std::vector<uint8_t> packed_pixels(uint32_t seed)
{
    std::vector<uint8_t> out;
    for (size_t y = 0; y < height; ++y)
        for (size_t x = 0; x < width * elem; ++x)
            out.push_back(CpuView::pattern(y * pitch + x, seed));
    return out;
}

bool image_support(cl_device_id device)
{
    cl_bool images = CL_FALSE;
    clGetDeviceInfo(device, CL_DEVICE_IMAGE_SUPPORT, sizeof(images), &images,
                    nullptr);
    return images == CL_TRUE;
}

#define REQUIRE_LINEAR_IMAGES()                                                \
    if (!image_support(device))                                                \
    {                                                                          \
        log_info("the device has no image support\n");                         \
        return TEST_SKIPPED_ITSELF;                                            \
    }                                                                          \
    if (!assumes_linear_dma_buf(device))                                       \
    {                                                                          \
        log_info("the device does not list DMA_BUF among the handle types "    \
                 "whose images are linear: no layout to check\n");             \
        return TEST_SKIPPED_ITSELF;                                            \
    }

// The case's image over a fresh dma-buf, and the CPU's view of its bytes
// through `keep` (a dup of the fd, which outlives the import), filled with
// `value` before the import; the test is skipped where RGBA/UNSIGNED_INT8
// images are not supported.  Declares fd, keep, view, err and image.
#define IMPORT_IMAGE_WITH_VIEW(image, keep, view, value)                       \
    ALLOCATE_DMA_BUF(fd, dmabuf_size);                                         \
    const int keep = dup(fd);                                                  \
    test_assert_error(keep >= 0, "dup");                                       \
    CpuView view(keep, dmabuf_size);                                           \
    test_assert_error(view.ok(), "mmap of the dma-buf failed");                \
    view.fill(value);                                                          \
    cl_int err = CL_SUCCESS;                                                   \
    bool skip = false;                                                         \
    clMemWrapper image = import_image(context, fd, &err, &skip);               \
    if (err != CL_SUCCESS) close(fd);                                          \
    if (skip)                                                                  \
    {                                                                          \
        close(keep);                                                           \
        log_info("RGBA/UNSIGNED_INT8 images are not supported here\n");        \
        return TEST_SKIPPED_ITSELF;                                            \
    }                                                                          \
    test_error(err, "clCreateImageWithProperties")

} // namespace

// event_wait_list: "the list of events that need to complete before
// clEnqueueAcquireExternalMemObjectsKHR can be executed" -- an image's
// acquire held back by a user event, and the read behind it, stay
// incomplete; the read then sees the pixels the CPU wrote while they were
// held back.
REGISTER_TEST(external_memory_dma_buf_image_acquire_waits_for_wait_list)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    REQUIRE_LINEAR_IMAGES();
    IMPORT_IMAGE_WITH_VIEW(image, keep, view, 21);
    clEventWrapper gate = clCreateUserEvent(context, &err);
    test_error(err, "clCreateUserEvent");
    cl_mem m = image;
    cl_event g = gate;
    clEventWrapper acquired, read_done, released;
    test_error(fns.acquire(queue, 1, &m, 1, &g, &acquired), "acquire");
    const size_t origin[3] = { 0, 0, 0 }, region[3] = { width, height, 1 };
    std::vector<uint8_t> seen(width * height * elem);
    test_error(clEnqueueReadImage(queue, image, CL_FALSE, origin, region, 0, 0,
                                  seen.data(), 1, &acquired, &read_done),
               "clEnqueueReadImage");
    clFlush(queue);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const bool held = event_status(acquired) > CL_COMPLETE
        && event_status(read_done) > CL_COMPLETE;
    view.fill(22); // while held back
    test_error(clSetUserEventStatus(gate, CL_COMPLETE), "clSetUserEventStatus");
    test_error(fns.release(queue, 1, &m, 1, &read_done, &released), "release");
    test_error(clWaitForEvents(1, &released), "clWaitForEvents");
    close(keep);
    test_assert_error(held, "the acquire ran before its wait list completed");
    test_assert_error(seen == packed_pixels(22),
                      "the read did not see the pixels written before the "
                      "acquire ran");
    return TEST_PASS;
}

// Release: "to guarantee that the state of memory objects is up-to-date and
// that they are accessible outside of OpenCL" -- a non-blocking
// clEnqueueWriteImage, then the release (its event of type CL_COMMAND_
// RELEASE_EXTERNAL_MEM_OBJECTS_KHR): once the release completed, the CPU
// sees every written pixel at the pitch, and each row's padding as it was.
REGISTER_TEST(external_memory_dma_buf_image_release_after_writes)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    REQUIRE_LINEAR_IMAGES();
    IMPORT_IMAGE_WITH_VIEW(image, keep, view, 23);
    cl_mem m = image;
    test_error(fns.acquire(queue, 1, &m, 0, nullptr, nullptr), "acquire");
    const size_t origin[3] = { 0, 0, 0 }, region[3] = { width, height, 1 };
    const std::vector<uint8_t> written = packed_pixels(24);
    test_error(clEnqueueWriteImage(queue, image, CL_FALSE, origin, region, 0, 0,
                                   written.data(), 0, nullptr, nullptr),
               "clEnqueueWriteImage");
    clEventWrapper released;
    test_error(fns.release(queue, 1, &m, 0, nullptr, &released), "release");
    test_error(clWaitForEvents(1, &released), "clWaitForEvents");
    cl_command_type type = 0;
    test_error(clGetEventInfo(released, CL_EVENT_COMMAND_TYPE, sizeof(type),
                              &type, nullptr),
               "CL_EVENT_COMMAND_TYPE");
    const std::vector<uint8_t> now = view.contents();
    close(keep);
    test_assert_error(type == CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR,
                      "the release's event has another command type");
    size_t wrong_pixels = 0, wrong_padding = 0;
    for (size_t y = 0; y < height; ++y)
        for (size_t x = 0; x < pitch; ++x)
        {
            const size_t at = y * pitch + x;
            if (x < width * elem)
                wrong_pixels += now[at] != CpuView::pattern(at, 24);
            else
                wrong_padding += now[at] != CpuView::pattern(at, 23);
        }
    if (wrong_pixels || wrong_padding)
        test_fail("after the release: %zu pixel bytes not written, %zu "
                  "padding bytes changed\n",
                  wrong_pixels, wrong_padding);
    return TEST_PASS;
}
