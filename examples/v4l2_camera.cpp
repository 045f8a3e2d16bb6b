// A V4L2 camera feeding OpenCL through dma-bufs, zero-copy: copy this.
//
//   v4l2-camera [/dev/videoN] [frames]
//
// Opens a single-planar capture node (default: the first one whose driver is
// "vivid", the kernel's test camera, else the first capture node), asks for
// YUYV 640x480, allocates MMAP buffers and exports each one as a dma-buf
// (VIDIOC_EXPBUF).  Every buffer is imported twice, once as a buffer and once
// as a 2D image (CL_RGBA/CL_UNSIGNED_INT8, one texel = one Y0 U Y1 V pixel
// pair, row pitch = the camera's bytesperline), with the standard
// cl_khr_external_memory_dma_buf properties.  Per frame: DQBUF, acquire, one
// kernel per import computes each row's luma sum, release, QBUF; the CPU's
// view of the same frame (the V4L2 mmap) is the check.
//
// Needs an ICD with cl_khr_external_memory_dma_buf: any OpenCL ICD with
// OPENCL_LAYERS=libcldmabuf.so.  CL_EXAMPLE_PLATFORM=<substring> picks the
// platform.  Exit 0 when every frame is right on both imports.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "yuyv_luma.hpp"

#ifndef CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR
#define CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR 0x2067
#endif

namespace {

constexpr uint32_t kWidth = 640, kHeight = 480;
constexpr unsigned kBuffers = 4;

using yuyv::xioctl;

[[noreturn]] void die(const char *what) {
    std::fprintf(stderr, "v4l2: %s: %s\n", what, std::strerror(errno));
    std::exit(1);
}

#define CL_CHECK(call)                                                             \
    do {                                                                           \
        cl_int e_ = (call);                                                        \
        if (e_ != CL_SUCCESS) {                                                    \
            std::fprintf(stderr, "v4l2: %s failed: %d\n", #call, e_);              \
            std::exit(1);                                                          \
        }                                                                          \
    } while (0)

struct Frame {
    void *cpu = MAP_FAILED;  // the V4L2 mmap: the CPU's view, used as the reference
    size_t length = 0;
    cl_mem buffer = nullptr, image = nullptr;
};

int export_dmabuf(int cam, unsigned index) {
    v4l2_exportbuffer exp{};
    exp.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    exp.index = index;
    exp.flags = O_RDWR | O_CLOEXEC;
    if (xioctl(cam, VIDIOC_EXPBUF, &exp) != 0) die("VIDIOC_EXPBUF");
    return exp.fd;
}


}  // namespace

int main(int argc, char **argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    const std::string node = argc > 1 ? argv[1] : yuyv::find_camera();
    const unsigned frames = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 8;
    if (node.empty()) {
        std::printf("v4l2: no capture node (load the test camera: modprobe vivid)\n");
        return 1;
    }

    // ---- the camera: YUYV 640x480, MMAP buffers, each exported as a dma-buf
    const int cam = open(node.c_str(), O_RDWR | O_CLOEXEC);
    if (cam < 0) die(node.c_str());
    std::string driver;
    if (!yuyv::is_capture(cam, &driver)) {
        std::printf("v4l2: %s is not a single-planar streaming capture node\n", node.c_str());
        return 1;
    }
    v4l2_format fmt{};
    fmt.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    fmt.fmt.pix.width = kWidth;
    fmt.fmt.pix.height = kHeight;
    fmt.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
    fmt.fmt.pix.field = V4L2_FIELD_NONE;
    if (xioctl(cam, VIDIOC_S_FMT, &fmt) != 0) die("VIDIOC_S_FMT");
    if (fmt.fmt.pix.pixelformat != V4L2_PIX_FMT_YUYV || fmt.fmt.pix.width != kWidth ||
        fmt.fmt.pix.height != kHeight) {
        std::printf("v4l2: %s does not do YUYV %ux%u\n", node.c_str(), kWidth, kHeight);
        return 1;
    }
    const uint32_t pitch = fmt.fmt.pix.bytesperline, size = fmt.fmt.pix.sizeimage;
    std::printf("camera: %s (%s), YUYV %ux%u, bytesperline %u, sizeimage %u\n", node.c_str(), driver.c_str(),
                kWidth, kHeight, pitch, size);

    v4l2_requestbuffers req{};
    req.count = kBuffers;
    req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    req.memory = V4L2_MEMORY_MMAP;
    if (xioctl(cam, VIDIOC_REQBUFS, &req) != 0 || req.count == 0) die("VIDIOC_REQBUFS");

    // ---- OpenCL: a device that imports dma-bufs
    const yuyv::ClDevice dev = yuyv::pick_dmabuf_device("v4l2");
    if (!dev.device) return 1;
    cl_platform_id platform = dev.platform;
    cl_device_id device = dev.device;
    auto acquire = reinterpret_cast<clEnqueueAcquireExternalMemObjectsKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(platform, "clEnqueueAcquireExternalMemObjectsKHR"));
    auto release = reinterpret_cast<clEnqueueReleaseExternalMemObjectsKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(platform, "clEnqueueReleaseExternalMemObjectsKHR"));
    if (!acquire || !release) {
        std::printf("v4l2: no clEnqueueAcquire/ReleaseExternalMemObjectsKHR\n");
        return 1;
    }
    cl_int err;
    cl_context ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    CL_CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, nullptr, &err);
    CL_CHECK(err);
    yuyv::LumaKernels k = yuyv::build_luma_kernels(ctx, device, "v4l2");
    cl_kernel kbuf = k.rows_buffer, kimg = k.rows_image;
    cl_mem sums_buf = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, kHeight * sizeof(cl_uint), nullptr, &err);
    CL_CHECK(err);
    cl_mem sums_img = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, kHeight * sizeof(cl_uint), nullptr, &err);
    CL_CHECK(err);

    // ---- each camera buffer: CPU mapping + two imports of its dma-buf
    std::vector<Frame> bufs(req.count);
    for (unsigned i = 0; i < req.count; ++i) {
        v4l2_buffer b{};
        b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        b.memory = V4L2_MEMORY_MMAP;
        b.index = i;
        if (xioctl(cam, VIDIOC_QUERYBUF, &b) != 0) die("VIDIOC_QUERYBUF");
        bufs[i].length = b.length;
        bufs[i].cpu = mmap(nullptr, b.length, PROT_READ, MAP_SHARED, cam, b.m.offset);
        if (bufs[i].cpu == MAP_FAILED) die("mmap");
        // A successful import owns its fd, so each import gets its own export.
        const int fd_buf = export_dmabuf(cam, i), fd_img = export_dmabuf(cam, i);
        cl_mem_properties bprops[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, (cl_mem_properties)fd_buf, 0};
        bufs[i].buffer = clCreateBufferWithProperties(ctx, bprops, CL_MEM_READ_ONLY, size, nullptr, &err);
        CL_CHECK(err);
        cl_mem_properties iprops[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, (cl_mem_properties)fd_img, 0};
        cl_image_format f{CL_RGBA, CL_UNSIGNED_INT8};
        cl_image_desc desc{};
        desc.image_type = CL_MEM_OBJECT_IMAGE2D;
        desc.image_width = kWidth / 2;  // one texel per Y0 U Y1 V pair
        desc.image_height = kHeight;
        desc.image_row_pitch = pitch;
        bufs[i].image = clCreateImageWithProperties(ctx, iprops, CL_MEM_READ_ONLY, &f, &desc, nullptr, &err);
        CL_CHECK(err);
    }
    std::printf("imported %u camera buffers as a buffer and a %ux%u RGBA8UI image each (row pitch %u)\n",
                req.count, kWidth / 2, kHeight, pitch);

    for (unsigned i = 0; i < req.count; ++i) {
        v4l2_buffer b{};
        b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        b.memory = V4L2_MEMORY_MMAP;
        b.index = i;
        if (xioctl(cam, VIDIOC_QBUF, &b) != 0) die("VIDIOC_QBUF");
    }
    v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (xioctl(cam, VIDIOC_STREAMON, &type) != 0) die("VIDIOC_STREAMON");

    // ---- per frame: dequeue, acquire, two kernels, release, check, requeue
    unsigned good = 0;
    std::vector<cl_uint> gpu_buf(kHeight), gpu_img(kHeight), cpu(kHeight);
    const cl_uint width = kWidth;
    for (unsigned n = 0; n < frames; ++n) {
        pollfd p{cam, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0) {  // vivid produces frames at 30 fps; 5 s is a dead camera
            std::printf("frame %u: no frame within 5 s\n", n);
            break;
        }
        v4l2_buffer b{};
        b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        b.memory = V4L2_MEMORY_MMAP;
        if (xioctl(cam, VIDIOC_DQBUF, &b) != 0) die("VIDIOC_DQBUF");
        Frame &f = bufs[b.index];

        cl_mem objs[] = {f.buffer, f.image};
        CL_CHECK(acquire(q, 2, objs, 0, nullptr, nullptr));
        CL_CHECK(clSetKernelArg(kbuf, 0, sizeof(cl_mem), &f.buffer));
        CL_CHECK(clSetKernelArg(kbuf, 1, sizeof(cl_uint), &pitch));
        CL_CHECK(clSetKernelArg(kbuf, 2, sizeof(cl_uint), &width));
        CL_CHECK(clSetKernelArg(kbuf, 3, sizeof(cl_mem), &sums_buf));
        CL_CHECK(clSetKernelArg(kimg, 0, sizeof(cl_mem), &f.image));
        CL_CHECK(clSetKernelArg(kimg, 1, sizeof(cl_mem), &sums_img));
        const size_t rows = kHeight;
        CL_CHECK(clEnqueueNDRangeKernel(q, kbuf, 1, nullptr, &rows, nullptr, 0, nullptr, nullptr));
        CL_CHECK(clEnqueueNDRangeKernel(q, kimg, 1, nullptr, &rows, nullptr, 0, nullptr, nullptr));
        CL_CHECK(release(q, 2, objs, 0, nullptr, nullptr));
        CL_CHECK(clEnqueueReadBuffer(q, sums_buf, CL_FALSE, 0, kHeight * sizeof(cl_uint), gpu_buf.data(), 0,
                                     nullptr, nullptr));
        CL_CHECK(clEnqueueReadBuffer(q, sums_img, CL_TRUE, 0, kHeight * sizeof(cl_uint), gpu_img.data(), 0,
                                     nullptr, nullptr));

        // The reference: the same frame through the camera's own mapping.
        const uint64_t total = yuyv::luma_rows(static_cast<const uint8_t *>(f.cpu), pitch, kWidth, kHeight, cpu.data());
        unsigned bad_buf = 0, bad_img = 0;
        for (uint32_t y = 0; y < kHeight; ++y) {
            bad_buf += gpu_buf[y] != cpu[y];
            bad_img += gpu_img[y] != cpu[y];
        }
        const bool ok = bad_buf == 0 && bad_img == 0 && total > 0;
        good += ok;
        std::printf("frame %u (buffer %u, sequence %u): luma sum %llu, buffer kernel %s, image kernel %s\n", n,
                    b.index, b.sequence, static_cast<unsigned long long>(total),
                    bad_buf ? "WRONG" : "ok", bad_img ? "WRONG" : "ok");
        if (xioctl(cam, VIDIOC_QBUF, &b) != 0) die("VIDIOC_QBUF");
    }

    xioctl(cam, VIDIOC_STREAMOFF, &type);
    for (Frame &f : bufs) {
        clReleaseMemObject(f.buffer);
        clReleaseMemObject(f.image);
        munmap(f.cpu, f.length);
    }
    clReleaseMemObject(sums_buf);
    clReleaseMemObject(sums_img);
    yuyv::release_luma_kernels(k);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    close(cam);
    std::printf("v4l2: %u/%u frames correct\n", good, frames);
    return good == frames ? 0 : 1;
}
