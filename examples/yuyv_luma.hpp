// What the two camera examples (v4l2_camera.cpp: V4L2 by hand,
// gst_camera_to_cl.cpp: a GStreamer pipeline) share and is not about
// dma-bufs: finding the test camera, picking an OpenCL device that imports
// dma-bufs, the per-row luma kernels and their CPU reference.  Header-only so
// that each example stays one file plus this one to copy.
#pragma once

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace yuyv {

inline int xioctl(int fd, unsigned long request, void *arg) {
    int r;
    do r = ioctl(fd, request, arg);
    while (r < 0 && errno == EINTR);
    return r;
}

// Whether `fd` is a single-planar streaming capture node; its driver's name.
inline bool is_capture(int fd, std::string *driver) {
    v4l2_capability cap{};
    if (xioctl(fd, VIDIOC_QUERYCAP, &cap) != 0) return false;
    const uint32_t caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
    *driver = reinterpret_cast<const char *>(cap.driver);
    return (caps & V4L2_CAP_VIDEO_CAPTURE) && (caps & V4L2_CAP_STREAMING);
}

// The first vivid capture node, else the first capture node at all.
inline std::string find_camera() {
    std::vector<std::string> nodes;
    if (DIR *d = opendir("/dev")) {
        while (dirent *e = readdir(d))
            if (!std::strncmp(e->d_name, "video", 5)) nodes.push_back(std::string("/dev/") + e->d_name);
        closedir(d);
    }
    std::sort(nodes.begin(), nodes.end());
    std::string any;
    for (const std::string &n : nodes) {
        const int fd = open(n.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) continue;
        std::string driver;
        const bool capture = is_capture(fd, &driver);
        close(fd);
        if (!capture) continue;
        if (driver == "vivid") return n;
        if (any.empty()) any = n;
    }
    return any;
}

struct ClDevice {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
};

// The first device (of the platform CL_EXAMPLE_PLATFORM names, if set) that
// lists cl_khr_external_memory_dma_buf; says which, or why none.
inline ClDevice pick_dmabuf_device(const char *tag) {
    cl_uint nplat = 0;
    if (clGetPlatformIDs(0, nullptr, &nplat) != CL_SUCCESS) nplat = 0;
    std::vector<cl_platform_id> plats(nplat);
    if (nplat) clGetPlatformIDs(nplat, plats.data(), nullptr);
    const char *want = std::getenv("CL_EXAMPLE_PLATFORM");
    for (cl_platform_id p : plats) {
        char name[256] = {}, exts[16384] = {};
        clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
        if (want && !std::strstr(name, want)) continue;
        cl_device_id d = nullptr;
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, nullptr) != CL_SUCCESS) continue;
        clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, sizeof exts, exts, nullptr);
        if (!std::strstr(exts, "cl_khr_external_memory_dma_buf")) continue;
        std::printf("platform: %s\n", name);
        return {p, d};
    }
    std::printf("%s: no OpenCL device with cl_khr_external_memory_dma_buf (run with "
                "OPENCL_LAYERS=libcldmabuf.so)\n", tag);
    return {};
}

// YUYV: bytes Y0 U Y1 V per pixel pair; luma is every even byte.
inline const char *const kLumaKernels = R"CL(
kernel void luma_rows_buffer(global const uchar *frame, uint pitch, uint width, global uint *sums) {
    uint y = get_global_id(0);
    global const uchar *row = frame + (size_t)y * pitch;
    uint s = 0;
    for (uint x = 0; x < width; ++x) s += row[2 * x];
    sums[y] = s;
}
// The same rows through the image: one RGBA8UI texel = (Y0, U, Y1, V).
kernel void luma_rows_image(read_only image2d_t frame, global uint *sums) {
    int y = get_global_id(0);
    uint s = 0;
    for (int x = 0; x < get_image_width(frame); ++x) {
        uint4 t = read_imageui(frame, (int2)(x, y));
        s += t.x + t.z;
    }
    sums[y] = s;
}
)CL";

struct LumaKernels {
    cl_program program = nullptr;
    cl_kernel rows_buffer = nullptr, rows_image = nullptr;
};

inline LumaKernels build_luma_kernels(cl_context ctx, cl_device_id device, const char *tag) {
    LumaKernels k;
    cl_int err;
    const char *src = kLumaKernels;
    k.program = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
    if (err == CL_SUCCESS) err = clBuildProgram(k.program, 1, &device, nullptr, nullptr, nullptr);
    if (err == CL_SUCCESS) k.rows_buffer = clCreateKernel(k.program, "luma_rows_buffer", &err);
    if (err == CL_SUCCESS) k.rows_image = clCreateKernel(k.program, "luma_rows_image", &err);
    if (err != CL_SUCCESS) {
        std::fprintf(stderr, "%s: building the luma kernels failed: %d\n", tag, err);
        std::exit(1);
    }
    return k;
}

inline void release_luma_kernels(LumaKernels &k) {
    clReleaseKernel(k.rows_buffer);
    clReleaseKernel(k.rows_image);
    clReleaseProgram(k.program);
}

// The CPU's answer: each row's luma sum into `sums`; the frame's total.
inline uint64_t luma_rows(const uint8_t *px, uint32_t pitch, uint32_t width, uint32_t height, cl_uint *sums) {
    uint64_t total = 0;
    for (uint32_t y = 0; y < height; ++y) {
        cl_uint s = 0;
        for (uint32_t x = 0; x < width; ++x) s += px[static_cast<size_t>(y) * pitch + 2 * x];
        sums[y] = s;
        total += s;
    }
    return total;
}

}  // namespace yuyv
