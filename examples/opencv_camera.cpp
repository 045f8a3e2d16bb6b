// OpenCV's T-API (cv::UMat) running on a camera frame's dma-buf, zero-copy:
// copy this.
//
//   opencv-camera [/dev/videoN] [frames]     a V4L2 camera (vivid in the VM lane)
//   opencv-camera --synthetic [frames]       no camera: frames written by the CPU into
//                                            dma-bufs of the system heap, an i915 render
//                                            node (the virtual Gen9 on a build host) or udmabuf
//
// The application owns the OpenCL context and hands it to OpenCV; OpenCV
// keeps working on its own objects:
//   1. a device that imports dma-bufs (the layer adds the extension), a
//      context on it, adopted by OpenCV with OpenCLExecutionContext::create +
//      bind(); OpenCV makes its command queue on that context, and the
//      application uses that queue for the handoff (OpenCV 4.6 cannot adopt a
//      queue it did not create);
//   2. each frame's dma-buf imported with the standard
//      cl_khr_external_memory_dma_buf properties and wrapped as a CV_8UC2
//      UMat (Y0 U, Y1 V: two bytes a pixel) whose step is the camera's
//      bytesperline (cv::ocl::convertFromBuffer and a ROI: no copy);
//   3. the result goes to a dma-buf too (what a display or an encoder would
//      take), imported and wrapped the same way;
//   4. per frame: acquire both on OpenCV's queue, cv::cvtColor(YUYV -> GRAY)
//      and a 3x3 cv::blur on the UMats, release both on the same queue;
//   5. the check: the same two operations on a cv::Mat over the CPU's own
//      mapping of the frame, byte for byte against the CPU's mapping of the
//      result's dma-buf.
//
// Both imports are CL_MEM_HOST_NO_ACCESS: where OpenCV would run an
// operation on the CPU instead (its OpenCL kernel did not build, or it judged
// the device unfit) it has to map them, the map is refused and OpenCV throws.
// So a passing run ran both operations on the OpenCL device.
//
// Needs an ICD with cl_khr_external_memory_dma_buf: any OpenCL ICD with
// OPENCL_LAYERS=libcldmabuf.so.  CL_EXAMPLE_PLATFORM=<substring> picks the
// platform.  Exit 0 when every frame is byte-exact.  docs/opencv.md says what
// OpenCV needs from the application and what it cannot do.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <drm.h>
#include <i915_drm.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <opencv2/core.hpp>
#include <opencv2/core/ocl.hpp>
#include <opencv2/imgproc.hpp>
#include <string>
#include <vector>

#include "yuyv_luma.hpp"

#ifndef CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR
#define CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR 0x2067
#endif

namespace {

constexpr int kWidth = 640, kHeight = 480;
constexpr unsigned kBuffers = 4;
// The synthetic frames' row pitch: wider than a row (1280 bytes), so a UMat
// that ignored its step would read the padding and fail the check.
constexpr uint32_t kSyntheticPitch = 1344;

using yuyv::xioctl;

[[noreturn]] void die(const char *what) {
    std::fprintf(stderr, "opencv: %s: %s\n", what, std::strerror(errno));
    std::exit(1);
}

#define CL_CHECK(call)                                                             \
    do {                                                                           \
        cl_int e_ = (call);                                                        \
        if (e_ != CL_SUCCESS) {                                                    \
            std::fprintf(stderr, "opencv: %s failed: %d\n", #call, e_);            \
            std::exit(1);                                                          \
        }                                                                          \
    } while (0)

// One frame buffer: the CPU's view (the reference), its import and the UMat over it.
struct Frame {
    uint8_t *cpu = nullptr;
    size_t length = 0;
    int cpu_fd = -1;      // synthetic frames: the dma-buf the CPU writes through
    cl_mem mem = nullptr;  // the import; OpenCV's UMat holds a second reference
    cv::UMat umat;
};

// ---- the result's dma-buf, and the synthetic frames': from the system heap,
// else an i915 render node's GEM object through PRIME (the virtual Gen9 on a
// build host), else udmabuf.

std::string exporter;

int make_udmabuf(size_t size) {
    const int dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
    if (dev < 0) return -1;
    const int mem = memfd_create("opencv-camera", MFD_ALLOW_SEALING | MFD_CLOEXEC);
    int fd = -1;
    if (mem >= 0 && ftruncate(mem, static_cast<off_t>(size)) == 0 && fcntl(mem, F_ADD_SEALS, F_SEAL_SHRINK) == 0) {
        udmabuf_create create{};
        create.memfd = static_cast<__u32>(mem);
        create.flags = UDMABUF_FLAGS_CLOEXEC;
        create.size = size;
        fd = ioctl(dev, UDMABUF_CREATE, &create);
        if (fd >= 0) exporter = "udmabuf";
    }
    if (mem >= 0) close(mem);
    close(dev);
    return fd;
}

int make_dmabuf(size_t size) {
    const int heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
    if (heap >= 0) {
        dma_heap_allocation_data alloc{};
        alloc.len = size;
        alloc.fd_flags = O_RDWR | O_CLOEXEC;
        const int rc = ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &alloc);
        close(heap);
        if (rc == 0) {
            exporter = "the system dma-heap";
            return static_cast<int>(alloc.fd);
        }
    }
    const int node = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    if (node < 0) return make_udmabuf(size);
    drm_i915_gem_create create{};
    create.size = size;
    drm_prime_handle prime{};
    prime.fd = -1;
    if (ioctl(node, DRM_IOCTL_I915_GEM_CREATE, &create) == 0) {
        prime.handle = create.handle;
        prime.flags = DRM_CLOEXEC | DRM_RDWR;
        if (ioctl(node, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime) != 0) prime.fd = -1;
        drm_gem_close gem_close{};
        gem_close.handle = create.handle;
        ioctl(node, DRM_IOCTL_GEM_CLOSE, &gem_close);  // the dma-buf keeps the object alive
        exporter = "an i915 GEM object (PRIME export)";
    }
    close(node);
    return prime.fd >= 0 ? prime.fd : make_udmabuf(size);  // a render node, not i915's (vgem)
}

void cpu_sync(int fd, uint64_t flags) {
    dma_buf_sync sync{flags};
    if (xioctl(fd, DMA_BUF_IOCTL_SYNC, &sync) != 0) die("DMA_BUF_IOCTL_SYNC");
}

// Frame n of the synthetic stream: every byte from a hash of (x, y, n), so
// luma, chroma and the blur's rounding see all values; the row padding holds
// 0xEE, which no correct result can pick up.
void fill_synthetic(uint8_t *px, uint32_t pitch, unsigned n) {
    for (uint32_t y = 0; y < kHeight; ++y) {
        uint8_t *row = px + static_cast<size_t>(y) * pitch;
        for (uint32_t x = 0; x < 2u * kWidth; ++x) {
            uint32_t h = (x * 0x9E3779B1u) ^ (y * 0x85EBCA77u) ^ ((n + 1) * 0xC2B2AE3Du);
            h ^= h >> 15;
            h *= 0x2C1B3C6Du;
            h ^= h >> 13;
            row[x] = static_cast<uint8_t>(h);
        }
        std::memset(row + 2 * kWidth, 0xEE, pitch - 2 * kWidth);
    }
}

int export_dmabuf(int cam, unsigned index) {
    v4l2_exportbuffer exp{};
    exp.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    exp.index = index;
    exp.flags = O_RDWR | O_CLOEXEC;
    if (xioctl(cam, VIDIOC_EXPBUF, &exp) != 0) die("VIDIOC_EXPBUF");
    return exp.fd;
}

// Opens `node`, sets YUYV 640x480 and asks for MMAP buffers; -1 when it cannot.
int open_camera(const std::string &node, uint32_t *pitch, uint32_t *size, unsigned *count) {
    const int cam = open(node.c_str(), O_RDWR | O_CLOEXEC);
    if (cam < 0) die(node.c_str());
    std::string driver;
    if (!yuyv::is_capture(cam, &driver)) {
        std::printf("opencv: %s is not a single-planar streaming capture node\n", node.c_str());
        return -1;
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
        std::printf("opencv: %s does not do YUYV %dx%d\n", node.c_str(), kWidth, kHeight);
        return -1;
    }
    *pitch = fmt.fmt.pix.bytesperline;
    *size = fmt.fmt.pix.sizeimage;
    std::printf("camera: %s (%s), YUYV %dx%d, bytesperline %u, sizeimage %u\n", node.c_str(), driver.c_str(),
                kWidth, kHeight, *pitch, *size);
    v4l2_requestbuffers req{};
    req.count = kBuffers;
    req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    req.memory = V4L2_MEMORY_MMAP;
    if (xioctl(cam, VIDIOC_REQBUFS, &req) != 0 || req.count == 0) die("VIDIOC_REQBUFS");
    *count = req.count;
    return cam;
}

// The device's work as the CPU does it: the reference.
void cpu_reference(const uint8_t *frame, uint32_t pitch, cv::Mat &out) {
    const cv::Mat yuyv(kHeight, kWidth, CV_8UC2, const_cast<uint8_t *>(frame), pitch);
    cv::Mat gray;
    cv::cvtColor(yuyv, gray, cv::COLOR_YUV2GRAY_YUYV);
    cv::blur(gray, out, cv::Size(3, 3), cv::Point(-1, -1), cv::BORDER_REPLICATE);
}

}  // namespace

int main(int argc, char **argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    const bool synthetic = argc > 1 && !std::strcmp(argv[1], "--synthetic");
    const std::string node = synthetic ? "" : argc > 1 ? argv[1] : yuyv::find_camera();
    const unsigned frames = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 8;
    if (frames == 0) {
        std::printf("usage: opencv-camera [/dev/videoN | --synthetic] [frames > 0]\n");
        return 2;
    }
    if (!synthetic && node.empty()) {
        std::printf("opencv: no capture node (load the test camera: modprobe vivid; or --synthetic)\n");
        return 1;
    }

    // ---- the frames' source: the camera, or dma-bufs this program fills
    int cam = -1;
    uint32_t pitch = kSyntheticPitch, size = kSyntheticPitch * kHeight;
    unsigned count = kBuffers;
    if (!synthetic && (cam = open_camera(node, &pitch, &size, &count)) < 0) return 1;

    // ---- OpenCL: the application's context, then handed to OpenCV
    const yuyv::ClDevice dev = yuyv::pick_dmabuf_device("opencv");
    if (!dev.device) return 1;
    auto acquire = reinterpret_cast<clEnqueueAcquireExternalMemObjectsKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(dev.platform, "clEnqueueAcquireExternalMemObjectsKHR"));
    auto release = reinterpret_cast<clEnqueueReleaseExternalMemObjectsKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(dev.platform, "clEnqueueReleaseExternalMemObjectsKHR"));
    if (!acquire || !release) {
        std::printf("opencv: no clEnqueueAcquire/ReleaseExternalMemObjectsKHR\n");
        return 1;
    }
    cl_int err;
    cl_context ctx = clCreateContext(nullptr, 1, &dev.device, nullptr, nullptr, &err);
    CL_CHECK(err);
    char platform_name[256] = {};
    CL_CHECK(clGetPlatformInfo(dev.platform, CL_PLATFORM_NAME, sizeof platform_name, platform_name, nullptr));

    // create() takes over one reference of the context and of the device: the
    // application keeps its own by retaining first.  bind() makes it the
    // calling thread's OpenCL context for every UMat operation.
    CL_CHECK(clRetainContext(ctx));
    CL_CHECK(clRetainDevice(dev.device));
    cv::ocl::OpenCLExecutionContext ocv;
    try {
        ocv = cv::ocl::OpenCLExecutionContext::create(platform_name, dev.platform, ctx, dev.device);
        ocv.bind();
    } catch (const cv::Exception &e) {
        std::printf("opencv: OpenCV does not take the context: %s\n", e.what());
        return 1;
    }
    if (!cv::ocl::useOpenCL() || cv::ocl::Context::getDefault().ptr() != ctx ||
        cv::ocl::Device::getDefault().ptr() != dev.device) {
        std::printf("opencv: OpenCV's T-API is not on the application's context (useOpenCL %d)\n",
                    cv::ocl::useOpenCL());
        return 1;
    }
    // Every UMat operation below runs on this in-order queue: the handoff goes there too.
    auto q = static_cast<cl_command_queue>(ocv.getQueue().ptr());
    std::printf("OpenCV %s: T-API on the application's context, device %s, OpenCV's queue %p\n", CV_VERSION,
                cv::ocl::Device::getDefault().name().c_str(), static_cast<void *>(q));

    // ---- each frame buffer: the CPU's view, one import, a UMat over the import
    std::vector<Frame> bufs(count);
    for (unsigned i = 0; i < count; ++i) {
        Frame &f = bufs[i];
        int fd;
        if (synthetic) {
            f.cpu_fd = make_dmabuf(size);
            if (f.cpu_fd < 0) {
                std::printf("opencv: no dma-buf exporter here (no dma-heap, no i915 render node, no udmabuf)\n");
                return 1;
            }
            fd = fcntl(f.cpu_fd, F_DUPFD_CLOEXEC, 0);  // a successful import owns its fd
            if (fd < 0) die("dup");
            f.length = size;
            f.cpu = static_cast<uint8_t *>(mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, f.cpu_fd, 0));
        } else {
            v4l2_buffer b{};
            b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
            b.memory = V4L2_MEMORY_MMAP;
            b.index = i;
            if (xioctl(cam, VIDIOC_QUERYBUF, &b) != 0) die("VIDIOC_QUERYBUF");
            f.length = b.length;
            f.cpu = static_cast<uint8_t *>(mmap(nullptr, b.length, PROT_READ, MAP_SHARED, cam, b.m.offset));
            fd = export_dmabuf(cam, i);
        }
        if (f.cpu == MAP_FAILED) die("mmap");
        cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, (cl_mem_properties)fd, 0};
        f.mem = clCreateBufferWithProperties(ctx, props, CL_MEM_READ_ONLY | CL_MEM_HOST_NO_ACCESS, size, nullptr,
                                             &err);
        CL_CHECK(err);
        // No copy: the UMat's data is the import (OpenCV retains it and
        // releases its reference with the UMat's last copy).  OpenCV 4.6's
        // convertFromBuffer checks `step` but gives the UMat a packed row
        // (cols x element size) all the same, so the UMat spans the whole
        // pitch and the frame is its ROI, which keeps the pitch as its step.
        cv::UMat whole;
        cv::ocl::convertFromBuffer(f.mem, pitch, kHeight, static_cast<int>(pitch / 2), CV_8UC2, whole);
        f.umat = whole(cv::Rect(0, 0, kWidth, kHeight));
    }
    if (synthetic)
        std::printf("synthetic frames: %u dma-bufs of %u bytes from %s, row pitch %u\n", count, size,
                    exporter.c_str(), pitch);
    std::printf("imported %u frame buffers, each wrapped as a %dx%d CV_8UC2 UMat with step %zu\n", count, kWidth,
                kHeight, bufs[0].umat.step[0]);

    // ---- the result: a packed 8-bit gray frame in a dma-buf of its own
    const size_t out_bytes = static_cast<size_t>(kWidth) * kHeight;
    const int out_fd = make_dmabuf(out_bytes);
    if (out_fd < 0) {
        std::printf("opencv: no dma-buf exporter for the result (no dma-heap, no i915 render node, no udmabuf)\n");
        return 1;
    }
    auto *out_cpu = static_cast<uint8_t *>(mmap(nullptr, out_bytes, PROT_READ, MAP_SHARED, out_fd, 0));
    if (out_cpu == MAP_FAILED) die("mmap");
    const int out_import_fd = fcntl(out_fd, F_DUPFD_CLOEXEC, 0);
    if (out_import_fd < 0) die("dup");
    cl_mem_properties out_props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, (cl_mem_properties)out_import_fd, 0};
    cl_mem out = clCreateBufferWithProperties(ctx, out_props, CL_MEM_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS, out_bytes,
                                              nullptr, &err);
    CL_CHECK(err);
    cv::UMat out_umat, gray_umat;
    cv::ocl::convertFromBuffer(out, kWidth, kHeight, kWidth, CV_8UC1, out_umat);
    std::printf("result: a %dx%d CV_8UC1 UMat over a dma-buf of %zu bytes from %s\n", kWidth, kHeight, out_bytes,
                exporter.c_str());

    v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    if (!synthetic) {
        for (unsigned i = 0; i < count; ++i) {
            v4l2_buffer b{};
            b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
            b.memory = V4L2_MEMORY_MMAP;
            b.index = i;
            if (xioctl(cam, VIDIOC_QBUF, &b) != 0) die("VIDIOC_QBUF");
        }
        if (xioctl(cam, VIDIOC_STREAMON, &type) != 0) die("VIDIOC_STREAMON");
    }

    // ---- per frame: a frame, acquire, OpenCV on the UMat, release, check
    unsigned good = 0;
    const cv::Mat device_result(kHeight, kWidth, CV_8UC1, out_cpu);  // the result's dma-buf
    cv::Mat reference;
    for (unsigned n = 0; n < frames; ++n) {
        v4l2_buffer b{};
        unsigned index = n % count;
        if (synthetic) {
            cpu_sync(bufs[index].cpu_fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
            fill_synthetic(bufs[index].cpu, pitch, n);
            cpu_sync(bufs[index].cpu_fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
        } else {
            pollfd p{cam, POLLIN, 0};
            if (poll(&p, 1, 5000) <= 0) {  // vivid produces frames at 30 fps; 5 s is a dead camera
                std::printf("frame %u: no frame within 5 s\n", n);
                break;
            }
            b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
            b.memory = V4L2_MEMORY_MMAP;
            if (xioctl(cam, VIDIOC_DQBUF, &b) != 0) die("VIDIOC_DQBUF");
            index = b.index;
        }
        Frame &f = bufs[index];

        try {
            cl_mem objs[] = {f.mem, out};
            CL_CHECK(acquire(q, 2, objs, 0, nullptr, nullptr));
            cv::cvtColor(f.umat, gray_umat, cv::COLOR_YUV2GRAY_YUYV);
            cv::blur(gray_umat, out_umat, cv::Size(3, 3), cv::Point(-1, -1), cv::BORDER_REPLICATE);
            CL_CHECK(release(q, 2, objs, 0, nullptr, nullptr));
        } catch (const cv::Exception &e) {
            // Most likely OpenCV fell back to the CPU and the map was refused.
            // std::exit, not return: the UMats' destructors would assert on
            // the half-done map.
            std::printf("frame %u: OpenCV did not run on the device: %s\n", n, e.what());
            std::exit(1);
        }
        // OpenCV writes into the existing buffer when size and type match; a
        // new one would leave the result elsewhere.
        if (out_umat.handle(cv::ACCESS_READ) != out) {
            std::printf("frame %u: OpenCV replaced the result buffer\n", n);
            return 1;
        }
        // The result is in its dma-buf once the release has run.
        CL_CHECK(clFinish(q));

        // The reference: the same frame through the CPU's own mapping.
        if (synthetic) cpu_sync(f.cpu_fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
        cpu_reference(f.cpu, pitch, reference);
        if (synthetic) cpu_sync(f.cpu_fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
        cv::Mat differs;
        cpu_sync(out_fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
        cv::compare(device_result, reference, differs, cv::CMP_NE);
        cpu_sync(out_fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
        const int bad = cv::countNonZero(differs);
        const bool ok = bad == 0 && cv::countNonZero(reference) > 0;
        good += ok;
        if (synthetic)
            std::printf("frame %u (buffer %u): gray + 3x3 blur on the device, %d of %d pixels differ from the CPU: %s\n",
                        n, index, bad, kWidth * kHeight, ok ? "ok" : "WRONG");
        else
            std::printf("frame %u (buffer %u, sequence %u): gray + 3x3 blur on the device, %d of %d pixels differ "
                        "from the CPU: %s\n", n, index, b.sequence, bad, kWidth * kHeight, ok ? "ok" : "WRONG");
        if (!synthetic && xioctl(cam, VIDIOC_QBUF, &b) != 0) die("VIDIOC_QBUF");
    }

    // ---- teardown: OpenCV's references first, then the application's
    if (!synthetic) xioctl(cam, VIDIOC_STREAMOFF, &type);
    out_umat.release();
    gray_umat.release();
    for (Frame &f : bufs) {
        f.umat.release();             // OpenCV's reference to the import
        clReleaseMemObject(f.mem);    // the application's: the import and its fd go
        munmap(f.cpu, f.length);
        if (f.cpu_fd >= 0) close(f.cpu_fd);
    }
    clReleaseMemObject(out);
    munmap(out_cpu, out_bytes);
    close(out_fd);
    // OpenCV holds the context (with its queue, programs and buffer pool)
    // while an execution context refers to it: the thread's binding too.
    ocv.release();
    cv::ocl::OpenCLExecutionContext::getCurrentRef().release();
    clReleaseContext(ctx);
    if (cam >= 0) close(cam);
    std::printf("opencv: %u/%u frames byte-exact on %s\n", good, frames,
                synthetic ? "synthetic dma-bufs" : "camera dma-bufs");
    return good == frames ? 0 : 1;
}
