// bench-v4l2-frames: what a camera pipeline pays per frame to get each frame
// into an OpenCL kernel, zero-copy against the copy an application writes
// without dma-buf import, alternating frame by frame in one run.
//
// Per frame, after VIDIOC_DQBUF (the time and the process's CPU time of these
// steps only; the camera's own pace is left out):
//   import       the pool's dma-bufs (VIDIOC_EXPBUF), each imported once as a
//                buffer (as GStreamer's dma-buf pool and examples/gst_camera_to_cl.cpp
//                do): acquire, the luma kernel, release, clFinish;
//   reimport     the frame's dma-buf imported again every frame (an application
//                that does not keep its imports): clCreateBufferWithProperties,
//                acquire, kernel, release, clFinish, clReleaseMemObject;
//   copy         the V4L2 mmap + clEnqueueWriteBuffer into a device buffer,
//                then the kernel and clFinish;
//   pinned       the copy a discrete GPU's application writes: the frame
//                memcpy'd into a pinned staging buffer (CL_MEM_ALLOC_HOST_PTR,
//                mapped once) and written to the device buffer from there.
// Each frame's row sums are checked against the CPU's read of the mapping.
//
//   bench-v4l2-frames [--device /dev/videoN] [--size WxH] [--frames N] [--csv FILE]
//   bench-v4l2-frames --synthetic [--size WxH] [--frames N] [--csv FILE]
//
// The camera is the kernel's vivid (the VM lane; YUYV, whatever size of those
// asked it grants).  --synthetic: a pool of 4 dma-bufs of the same exporter the
// tests use (CLDMABUF_TEST_DMABUF; the virtual Gen9 with LD_PRELOAD=libvgen9.so
// on the host), the CPU writing each frame before it is handed over, for a
// machine without a camera.  Needs the layer (OPENCL_LAYERS).
//
// Prints per variant the median [min-max] microseconds and CPU microseconds per
// frame and `RATIO v4l2-frame/<WxH>/copy:import = t_copy / t_import` (> 1:
// zero-copy is faster).  --csv appends `size,variant,frame,us_per_frame,cpu_us_per_frame`.
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <linux/dma-buf.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../examples/yuyv_luma.hpp"
#include "cl_fixture.hpp"
#include "test_dmabufs.hpp"

namespace {

using Clock = std::chrono::steady_clock;

void check(cl_int err, const char *what) {
    if (err != CL_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(err));
}

double cpu_us() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

// A producer of YUYV frames in a fixed pool of dma-bufs.
struct Source {
    uint32_t width = 0, height = 0, pitch = 0, size = 0;
    struct Slot {
        const uint8_t *cpu = nullptr;  // the producer's mapping (the reference, and the copy variant's source)
        int fd = -1;                   // a dma-buf fd of the slot (owned by the source)
    };
    std::vector<Slot> slots;
    virtual ~Source() = default;
    virtual unsigned next() = 0;          // a filled slot
    virtual void give_back(unsigned) = 0;  // the consumer is done with it
};

class Camera : public Source {
public:
    Camera(const std::string &node, uint32_t w, uint32_t h) {
        fd_ = open(node.c_str(), O_RDWR | O_CLOEXEC);
        if (fd_ < 0) throw std::runtime_error("cannot open " + node);
        std::string driver;
        if (!yuyv::is_capture(fd_, &driver)) throw std::runtime_error(node + " is not a streaming capture node");
        v4l2_format fmt{};
        fmt.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        fmt.fmt.pix.width = w;
        fmt.fmt.pix.height = h;
        fmt.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
        fmt.fmt.pix.field = V4L2_FIELD_NONE;
        if (yuyv::xioctl(fd_, VIDIOC_S_FMT, &fmt) != 0 || fmt.fmt.pix.pixelformat != V4L2_PIX_FMT_YUYV)
            throw std::runtime_error(node + " does not capture YUYV");
        width = fmt.fmt.pix.width;
        height = fmt.fmt.pix.height;
        pitch = fmt.fmt.pix.bytesperline;
        size = fmt.fmt.pix.sizeimage;
        std::printf("camera: %s (%s), YUYV %ux%u (asked %ux%u), bytesperline %u\n", node.c_str(), driver.c_str(), width,
                    height, w, h, pitch);
        v4l2_requestbuffers req{};
        req.count = 4;
        req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        req.memory = V4L2_MEMORY_MMAP;
        if (yuyv::xioctl(fd_, VIDIOC_REQBUFS, &req) != 0 || req.count == 0) throw std::runtime_error("VIDIOC_REQBUFS");
        for (unsigned i = 0; i < req.count; ++i) {
            v4l2_buffer b = buf(i);
            if (yuyv::xioctl(fd_, VIDIOC_QUERYBUF, &b) != 0) throw std::runtime_error("VIDIOC_QUERYBUF");
            void *p = mmap(nullptr, b.length, PROT_READ, MAP_SHARED, fd_, b.m.offset);
            if (p == MAP_FAILED) throw std::runtime_error("mmap of a V4L2 buffer");
            lengths_.push_back(b.length);
            v4l2_exportbuffer exp{};
            exp.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
            exp.index = i;
            exp.flags = O_RDWR | O_CLOEXEC;
            if (yuyv::xioctl(fd_, VIDIOC_EXPBUF, &exp) != 0) throw std::runtime_error("VIDIOC_EXPBUF");
            slots.push_back({static_cast<const uint8_t *>(p), exp.fd});
            if (yuyv::xioctl(fd_, VIDIOC_QBUF, &b) != 0) throw std::runtime_error("VIDIOC_QBUF");
        }
        v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        if (yuyv::xioctl(fd_, VIDIOC_STREAMON, &type) != 0) throw std::runtime_error("VIDIOC_STREAMON");
    }
    ~Camera() override {
        v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        yuyv::xioctl(fd_, VIDIOC_STREAMOFF, &type);
        for (size_t i = 0; i < slots.size(); ++i) {
            munmap(const_cast<uint8_t *>(slots[i].cpu), lengths_[i]);
            close(slots[i].fd);
        }
        close(fd_);
    }
    unsigned next() override {
        pollfd p{fd_, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0) throw std::runtime_error("no frame within 5 s");
        v4l2_buffer b = buf(0);
        if (yuyv::xioctl(fd_, VIDIOC_DQBUF, &b) != 0) throw std::runtime_error("VIDIOC_DQBUF");
        return b.index;
    }
    void give_back(unsigned i) override {
        v4l2_buffer b = buf(i);
        if (yuyv::xioctl(fd_, VIDIOC_QBUF, &b) != 0) throw std::runtime_error("VIDIOC_QBUF");
    }

private:
    static v4l2_buffer buf(unsigned i) {
        v4l2_buffer b{};
        b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        b.memory = V4L2_MEMORY_MMAP;
        b.index = i;
        return b;
    }
    int fd_ = -1;
    std::vector<size_t> lengths_;
};

// Frames the CPU writes into the test exporter's dma-bufs (DMA_BUF_IOCTL_SYNC
// around the write, as a producer with a CPU mapping does).
class Synthetic : public Source {
public:
    Synthetic(uint32_t w, uint32_t h) {
        width = w;
        height = h;
        pitch = 2 * w;
        size = pitch * h;
        for (unsigned i = 0; i < 4; ++i) {
            bufs_.push_back(e2e::make_dmabuf(size));
            void *p = mmap(nullptr, bufs_.back().size, PROT_READ | PROT_WRITE, MAP_SHARED, bufs_.back().fd, 0);
            if (p == MAP_FAILED) throw std::runtime_error("mmap of a dma-buf");
            slots.push_back({static_cast<const uint8_t *>(p), bufs_.back().fd});
        }
        std::printf("synthetic camera: 4 %s dma-bufs, YUYV %ux%u\n", e2e::dmabuf_source().c_str(), w, h);
    }
    ~Synthetic() override {
        for (size_t i = 0; i < slots.size(); ++i) munmap(const_cast<uint8_t *>(slots[i].cpu), bufs_[i].size);
    }
    unsigned next() override {
        const unsigned i = n_++ % slots.size();
        auto *p = const_cast<uint8_t *>(slots[i].cpu);
        cldmabuf::test::sync(slots[i].fd, DMA_BUF_SYNC_WRITE | DMA_BUF_SYNC_START);
        for (uint32_t y = 0; y < height; ++y) std::memset(p + size_t(y) * pitch, int((y + n_) & 0xff), pitch);
        cldmabuf::test::sync(slots[i].fd, DMA_BUF_SYNC_WRITE | DMA_BUF_SYNC_END);
        return i;
    }
    void give_back(unsigned) override {}

private:
    std::vector<e2e::Dmabuf> bufs_;
    unsigned n_ = 0;
};

struct Stats {
    std::vector<double> us, cpu;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

cl_mem import(const e2e::ClEnv &env, int fd, size_t size) {
    const int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(dup), 0};
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_ONLY, size, nullptr, &err);
    if (!m) close(dup);
    check(err, "clCreateBufferWithProperties(dma-buf)");
    return m;
}

}  // namespace

int main(int argc, char **argv) {
    std::string node, csv_path;
    bool synthetic = false;
    unsigned w = 1920, h = 1080, frames = 90;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--synthetic") synthetic = true;
        else if (a == "--device" && i + 1 < argc) node = argv[++i];
        else if (a == "--size" && i + 1 < argc) {
            if (std::sscanf(argv[++i], "%ux%u", &w, &h) != 2 || !w || !h || w % 2) {
                std::fprintf(stderr, "bench-v4l2-frames: --size wants an even WxH\n");
                return 2;
            }
        } else if (a == "--frames" && i + 1 < argc) frames = static_cast<unsigned>(std::atoi(argv[++i]));
        else if (a == "--csv" && i + 1 < argc) csv_path = argv[++i];
        else {
            std::fprintf(stderr, "usage: bench-v4l2-frames [--synthetic | --device /dev/videoN] [--size WxH] "
                                 "[--frames N] [--csv FILE]\n");
            return 2;
        }
    }
    if (frames < 12) frames = 12;
    try {
        std::unique_ptr<Source> src;
        if (synthetic) src = std::make_unique<Synthetic>(w, h);
        else {
            if (node.empty()) node = yuyv::find_camera();
            if (node.empty()) {
                std::printf("SKIP bench-v4l2-frames: no capture node (the VM lane has vivid; --synthetic here)\n");
                return 0;
            }
            src = std::make_unique<Camera>(node, w, h);
        }
        e2e::ClEnv env;
        if (!env.acquire) throw std::runtime_error("no cl_khr_external_memory (OPENCL_LAYERS=libcldmabuf.so?)");
        yuyv::LumaKernels k = yuyv::build_luma_kernels(env.context, env.device, "bench-v4l2-frames");
        cl_int err = CL_SUCCESS;
        cl_mem sums = clCreateBuffer(env.context, CL_MEM_WRITE_ONLY, src->height * sizeof(cl_uint), nullptr, &err);
        check(err, "clCreateBuffer(sums)");
        cl_mem device_copy = clCreateBuffer(env.context, CL_MEM_READ_ONLY, src->size, nullptr, &err);
        check(err, "clCreateBuffer(copy)");
        std::vector<cl_mem> pool;
        for (const auto &s : src->slots) pool.push_back(import(env, s.fd, src->size));

        // The pinned staging buffer, mapped for the whole run.
        cl_mem staging = clCreateBuffer(env.context, CL_MEM_READ_ONLY | CL_MEM_ALLOC_HOST_PTR, src->size, nullptr, &err);
        check(err, "clCreateBuffer(ALLOC_HOST_PTR)");
        void *pinned = clEnqueueMapBuffer(env.queue, staging, CL_TRUE, CL_MAP_WRITE, 0, src->size, 0, nullptr, nullptr,
                                          &err);
        check(err, "clEnqueueMapBuffer(staging)");
        const char *names[] = {"import", "reimport", "copy", "pinned"};
        constexpr unsigned kVariants = 4;
        Stats stats[kVariants];
        std::vector<cl_uint> got(src->height), want(src->height);
        unsigned wrong = 0;
        FILE *csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "a");
        if (!csv_path.empty() && !csv) throw std::runtime_error("cannot open " + csv_path);
        if (csv && std::ftell(csv) == 0) std::fprintf(csv, "size,variant,frame,us_per_frame,cpu_us_per_frame\n");
        const std::string size_name = std::to_string(src->width) + "x" + std::to_string(src->height);
        const size_t rows = src->height;
        const cl_uint pitch = src->pitch, width = src->width;
        auto run_kernel = [&](cl_mem frame) {
            check(clSetKernelArg(k.rows_buffer, 0, sizeof frame, &frame), "clSetKernelArg");
            check(clSetKernelArg(k.rows_buffer, 1, sizeof pitch, &pitch), "clSetKernelArg");
            check(clSetKernelArg(k.rows_buffer, 2, sizeof width, &width), "clSetKernelArg");
            check(clSetKernelArg(k.rows_buffer, 3, sizeof sums, &sums), "clSetKernelArg");
            check(clEnqueueNDRangeKernel(env.queue, k.rows_buffer, 1, nullptr, &rows, nullptr, 0, nullptr, nullptr),
                  "clEnqueueNDRangeKernel");
        };
        for (unsigned n = 0; n < frames + kVariants; ++n) {
            const unsigned slot = src->next(), v = n % kVariants;
            const auto t0 = Clock::now();
            const double c0 = cpu_us();
            if (v == 0 || v == 1) {
                cl_mem m = v == 0 ? pool[slot] : import(env, src->slots[slot].fd, src->size);
                check(env.acquire(env.queue, 1, &m, 0, nullptr, nullptr), "acquire");
                run_kernel(m);
                check(env.release(env.queue, 1, &m, 0, nullptr, nullptr), "release");
                check(clFinish(env.queue), "clFinish");
                if (v == 1) clReleaseMemObject(m);
            } else {
                const void *from = src->slots[slot].cpu;
                if (v == 3) {
                    std::memcpy(pinned, from, src->size);
                    from = pinned;
                }
                check(clEnqueueWriteBuffer(env.queue, device_copy, CL_FALSE, 0, src->size, from, 0, nullptr, nullptr),
                      "clEnqueueWriteBuffer");
                run_kernel(device_copy);
                check(clFinish(env.queue), "clFinish");
            }
            const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
            const double cpu = cpu_us() - c0;
            check(clEnqueueReadBuffer(env.queue, sums, CL_TRUE, 0, rows * sizeof(cl_uint), got.data(), 0, nullptr,
                                      nullptr),
                  "clEnqueueReadBuffer");
            yuyv::luma_rows(src->slots[slot].cpu, pitch, width, src->height, want.data());
            if (got != want) ++wrong;
            src->give_back(slot);
            if (n < kVariants) continue;  // one warm-up frame per variant
            stats[v].us.push_back(us);
            stats[v].cpu.push_back(cpu);
            if (csv) std::fprintf(csv, "%s,%s,%u,%.1f,%.1f\n", size_name.c_str(), names[v], n - kVariants, us, cpu);
        }
        if (csv) std::fclose(csv);
        check(clEnqueueUnmapMemObject(env.queue, staging, pinned, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
        check(clFinish(env.queue), "clFinish");
        clReleaseMemObject(staging);
        for (cl_mem m : pool) clReleaseMemObject(m);
        clReleaseMemObject(device_copy);
        clReleaseMemObject(sums);
        yuyv::release_luma_kernels(k);

        std::printf("%s, %u frames alternating (%zu per variant), %s\n", size_name.c_str(), frames,
                    stats[0].us.size(), env.platform_name.c_str());
        for (unsigned v = 0; v < kVariants; ++v) {
            const auto &s = stats[v];
            std::printf("  %-9s %9.1f us/frame [%.1f-%.1f], CPU %9.1f us/frame\n", names[v], median(s.us),
                        *std::min_element(s.us.begin(), s.us.end()), *std::max_element(s.us.begin(), s.us.end()),
                        median(s.cpu));
        }
        const double imp = median(stats[0].us), re = median(stats[1].us), cp = median(stats[2].us),
                     pin = median(stats[3].us);
        std::printf("RATIO v4l2-frame/%s/copy:import = %.2f (time per frame, mmap + clEnqueueWriteBuffer / the pool's "
                    "imports; > 1: zero-copy is faster)\n", size_name.c_str(), imp > 0 ? cp / imp : 0);
        std::printf("RATIO v4l2-frame/%s/copy:reimport = %.2f (the same against importing every frame again)\n",
                    size_name.c_str(), re > 0 ? cp / re : 0);
        std::printf("RATIO v4l2-frame/%s/pinned:import = %.2f (memcpy into pinned staging + clEnqueueWriteBuffer / "
                    "the pool's imports)\n", size_name.c_str(), imp > 0 ? pin / imp : 0);
        const double cimp = median(stats[0].cpu), ccp = median(stats[2].cpu);
        std::printf("RATIO v4l2-cpu/%s/copy:import = %.2f (CPU time per frame, all threads, the same two)\n",
                    size_name.c_str(), cimp > 0 ? ccp / cimp : 0);
        if (wrong) {
            std::printf("bench-v4l2-frames: %u frames' row sums differ from the CPU's\n", wrong);
            return 1;
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench-v4l2-frames: %s\n", e.what());
        return 1;
    }
    return 0;
}
