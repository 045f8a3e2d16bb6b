#include "layer/import/route_probe.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/icd/devices.hpp"
#include "layer/icd/profile.hpp"
#include "layer/base/log.hpp"

namespace cldmabuf {
namespace {

// Whether `route` really shares the host memory on `device`: a write to the
// host memory after the image's creation must show in a device-side copy
// out of the image.  Recorded per (root device, route) for the process, in
// the device's profile: what the ICD does with a USE_HOST_PTR image is the
// device's, not the context's, and root devices (unlike contexts and
// sub-devices, whose addresses are reused once released) live as long as
// their platform.

void CL_CALLBACK free_probe_memory(cl_mem, void *memory) { std::free(memory); }

bool run_probe(cl_context context, cl_device_id device, Route route) {
    constexpr size_t width = 16, height = 4;
    const cl_image_format format{CL_RGBA, CL_UNORM_INT8};
    size_t pitch = width * 4;
    if (route == Route::image_from_buffer) {
        size_t align = std::max<cl_uint>(device_value<cl_uint>(device, CL_DEVICE_IMAGE_PITCH_ALIGNMENT), 1) * 4;
        pitch = (pitch + align - 1) / align * align;
    }
    const size_t bytes = (pitch * height + 4095) / 4096 * 4096;
    auto *host = static_cast<unsigned char *>(std::aligned_alloc(4096, bytes));
    if (!host) return false;
    std::memset(host, 0x11, bytes);

    cl_int err = CL_SUCCESS;
    IcdMem buffer, image;  // in this order: the image, which may sit on the buffer, goes first
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = width;
    desc.image_height = height;
    desc.image_row_pitch = pitch;
    if (route == Route::image_from_buffer) {
        buffer = IcdMem(next().clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, host, &err));
        if (buffer) {
            desc.buffer = buffer.get();
            image = IcdMem(next().clCreateImage(context, CL_MEM_READ_WRITE, &format, &desc, nullptr, &err));
        }
    } else {
        image = IcdMem(
            next().clCreateImage(context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, &format, &desc, host, &err));
    }
    cl_mem owner = buffer ? buffer.get() : image.get();
    if (!owner || next().clSetMemObjectDestructorCallback(owner, free_probe_memory, host) != CL_SUCCESS) {
        image.reset();
        buffer.reset();  // before `host` is freed
        // Nothing was enqueued on the objects and both are released: the ICD
        // has no use of `host` left, so it is freed here, not leaked.
        std::free(host);
        LOG_WARN("zero-copy probe: the ICD refused the probe image (error %d)", err);
        return false;
    }
    // The write the device must see.
    for (size_t y = 0; y < height; ++y)
        for (size_t x = 0; x < width * 4; ++x) host[y * pitch + x] = static_cast<unsigned char>(0x40 + y * 3 + x);

    bool shared = false;
    IcdQueue queue;
    IcdMem out;
    if (image) {
        queue = IcdQueue(next().clCreateCommandQueueWithProperties(context, device, nullptr, &err));
        out = IcdMem(next().clCreateBuffer(context, CL_MEM_READ_WRITE, width * height * 4, nullptr, &err));
    }
    if (image && queue && out) {
        const size_t origin[3] = {0, 0, 0}, region[3] = {width, height, 1};
        std::vector<unsigned char> seen(width * height * 4);
        err = next().clEnqueueCopyImageToBuffer(queue.get(), image.get(), out.get(), origin, region, 0, 0, nullptr,
                                                nullptr);
        if (err == CL_SUCCESS)
            err = next().clEnqueueReadBuffer(queue.get(), out.get(), CL_TRUE, 0, seen.size(), seen.data(), 0, nullptr,
                                             nullptr);
        shared = err == CL_SUCCESS;
        for (size_t y = 0; y < height && shared; ++y)
            for (size_t x = 0; x < width * 4 && shared; ++x)
                shared = seen[y * width * 4 + x] == static_cast<unsigned char>(0x40 + y * 3 + x);
        next().clFinish(queue.get());
    }
    return shared;
}

}  // namespace

bool probe_route_in_place(cl_context context, cl_device_id device, Route route) {
    if (auto recorded = recorded_route_in_place(device, route)) return *recorded;
    const bool shared = run_probe(context, device, route);
    LOG_INFO("zero-copy probe on device %p: route %s %s", static_cast<void *>(device), route_name(route),
             shared ? "shares host memory" : "keeps its own copy");
    record_route_in_place(device, route, shared);
    return shared;
}

}  // namespace cldmabuf
