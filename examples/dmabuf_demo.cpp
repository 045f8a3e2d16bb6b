// cldmabuf demo: import a dma-buf into OpenCL, run a kernel on it in place,
// then copy between two imported dma-bufs (on the blitter when an i915 Gen9
// node is present — here, the virtual Gen9 loaded by scripts/demo).
//
// The program is ordinary OpenCL 3.0 + cl_khr_external_memory_dma_buf; the
// layer (OPENCL_LAYERS=libcldmabuf.so) is what makes the extension exist.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <drm.h>
#include <i915_drm.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "vgen9.h"

#define CHECK(call)                                                                   \
    do {                                                                              \
        cl_int e_ = (call);                                                           \
        if (e_ != CL_SUCCESS) {                                                       \
            std::fprintf(stderr, "demo: %s failed: %d\n", #call, e_);                 \
            std::exit(1);                                                             \
        }                                                                             \
    } while (0)

namespace {

std::string exporter;

// A dma-buf made of a sealed memfd's pages by /dev/udmabuf: the exporter
// of a kernel without a system heap (Debian's arm64 kernel, the arm64 VM).
int make_udmabuf(size_t size) {
    int dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
    if (dev < 0) return -1;
    int mem = memfd_create("cldmabuf-demo", MFD_ALLOW_SEALING | MFD_CLOEXEC);
    int fd = -1;
    if (mem >= 0 && ftruncate(mem, static_cast<off_t>(size)) == 0 &&
        fcntl(mem, F_ADD_SEALS, F_SEAL_SHRINK) == 0) {
        udmabuf_create create{};
        create.memfd = static_cast<__u32>(mem);
        create.flags = UDMABUF_FLAGS_CLOEXEC;
        create.size = size;
        fd = ioctl(dev, UDMABUF_CREATE, &create);
        if (fd >= 0) exporter = "udmabuf (a sealed memfd's pages)";
    }
    if (mem >= 0) close(mem);
    close(dev);
    return fd;
}

// A dma-buf from the system heap when the kernel has one, else from the
// (virtual) i915 render node through PRIME, else from udmabuf.
int make_dmabuf(size_t size) {
    int heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
    if (heap >= 0) {
        dma_heap_allocation_data alloc{};
        alloc.len = size;
        alloc.fd_flags = O_RDWR | O_CLOEXEC;
        int rc = ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &alloc);
        close(heap);
        if (rc == 0) {
            exporter = "the system dma-heap";
            return static_cast<int>(alloc.fd);
        }
    }
    int node = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    if (node < 0) return make_udmabuf(size);
    drm_i915_gem_create create{};
    create.size = size;
    drm_prime_handle prime{};
    if (ioctl(node, DRM_IOCTL_I915_GEM_CREATE, &create) == 0) {
        prime.handle = create.handle;
        prime.flags = DRM_CLOEXEC | DRM_RDWR;
        if (ioctl(node, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime) != 0) prime.fd = -1;
        drm_gem_close gem_close{};
        gem_close.handle = create.handle;
        ioctl(node, DRM_IOCTL_GEM_CLOSE, &gem_close);
        exporter = "an i915 GEM object (PRIME export)";
    } else {
        prime.fd = -1;
    }
    close(node);
    return prime.fd >= 0 ? prime.fd : make_udmabuf(size);  // a render node, not i915's (vgem)
}

void cpu_sync(int fd, uint64_t flags) {
    dma_buf_sync sync{flags};
    ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync);
}

uint64_t blitter_batches() {
    auto stats = reinterpret_cast<void (*)(struct vgen9_stats *)>(dlsym(RTLD_DEFAULT, "vgen9_stats"));
    if (!stats) return 0;
    struct vgen9_stats s{};
    stats(&s);
    return s.batches_executed;
}

}  // namespace

int main() {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // interleave with the layer's stderr lines
    const size_t count = 1 << 20, bytes = count * sizeof(uint32_t);
    cl_platform_id platform;
    cl_device_id device;
    CHECK(clGetPlatformIDs(1, &platform, nullptr));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr));
    char name[256] = {}, exts[8192] = {};
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof exts, exts, nullptr);
    std::printf("platform: %s\n", name);
    if (!std::strstr(exts, "cl_khr_external_memory_dma_buf")) {
        std::printf("cl_khr_external_memory_dma_buf is missing: run with OPENCL_LAYERS=libcldmabuf.so\n");
        return 1;
    }
    auto acquire = reinterpret_cast<clEnqueueAcquireExternalMemObjectsKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(platform, "clEnqueueAcquireExternalMemObjectsKHR"));
    auto release = reinterpret_cast<clEnqueueReleaseExternalMemObjectsKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(platform, "clEnqueueReleaseExternalMemObjectsKHR"));

    cl_int err;
    cl_context ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, nullptr, &err);
    CHECK(err);

    // 1. A producer's dma-buf, filled by the CPU through its own mapping.
    int fd_a = make_dmabuf(bytes), fd_b = make_dmabuf(bytes);
    if (fd_a < 0 || fd_b < 0) {
        std::printf("no dma-buf exporter here (no dma-heap, no i915 render node, no udmabuf)\n");
        return 1;
    }
    std::printf("dma-bufs: 2 x %zu KiB from %s\n", bytes / 1024, exporter.c_str());
    auto *cpu_a = static_cast<uint32_t *>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_a, 0));
    auto *cpu_b = static_cast<uint32_t *>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_b, 0));
    cpu_sync(fd_a, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
    for (size_t i = 0; i < count; ++i) cpu_a[i] = static_cast<uint32_t>(i);
    cpu_sync(fd_a, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);

    // 2. Import both; the import owns the fds from here on.
    cl_mem_properties props_a[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, (cl_mem_properties)fd_a, 0};
    cl_mem_properties props_b[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, (cl_mem_properties)fd_b, 0};
    cl_mem a = clCreateBufferWithProperties(ctx, props_a, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    CHECK(err);
    cl_mem b = clCreateBufferWithProperties(ctx, props_b, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    CHECK(err);
    std::printf("imported: fd %d -> cl_mem %p, fd %d -> cl_mem %p\n", fd_a, (void *)a, fd_b, (void *)b);

    // 3. A kernel doubles every element in place.
    const char *src = "kernel void twice(global uint *v) { size_t i = get_global_id(0); v[i] *= 2; }";
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &device, nullptr, nullptr, nullptr));
    cl_kernel k = clCreateKernel(prog, "twice", &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof a, &a));
    cl_mem both[] = {a, b};
    CHECK(acquire(q, 2, both, 0, nullptr, nullptr));
    CHECK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &count, nullptr, 0, nullptr, nullptr));

    // 4. Copy a -> b: serviced by a blitter batch when an i915 Gen9 node is there.
    const uint64_t batches_before = blitter_batches();
    CHECK(clEnqueueCopyBuffer(q, a, b, 0, 0, bytes, 0, nullptr, nullptr));
    CHECK(release(q, 2, both, 0, nullptr, nullptr));
    CHECK(clFinish(q));
    const uint64_t batches = blitter_batches() - batches_before;

    // 5. The CPU reads both dma-bufs directly: no clEnqueueReadBuffer.
    size_t bad_a = 0, bad_b = 0;
    cpu_sync(fd_a, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
    cpu_sync(fd_b, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
    for (size_t i = 0; i < count; ++i) {
        bad_a += cpu_a[i] != 2 * i;
        bad_b += cpu_b[i] != 2 * i;
    }
    std::printf("kernel on the import, read back through the dma-buf: %zu/%zu correct\n", count - bad_a, count);
    std::printf("copy a -> b: %zu/%zu correct, %s\n", count - bad_b, count,
                batches ? "serviced by the blitter (XY_SRC_COPY_BLT batch on the virtual Gen9)"
                        : "serviced by the OpenCL implementation (no Gen9 blitter here)");
    munmap(cpu_a, bytes);
    munmap(cpu_b, bytes);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return bad_a == 0 && bad_b == 0 ? 0 : 1;
}
