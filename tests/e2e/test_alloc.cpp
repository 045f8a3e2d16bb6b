// The allocator (CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, layer/alloc/, docs/allocator.md):
// the layer allocates a buffer or a linear 2D image as a dma-buf, the object is
// an import like any other, and CL_MEM_DMA_BUF_FD_CLDMABUF hands out fds of it.
// Tagged [alloc]; meson runs them on their own on the virtual Gen9
// (e2e-sim-alloc, the i915 GEM exporter) and with the exporters forbidden
// (e2e-sim-alloc-none: every allocation refused).  In the VM lane the same
// cases run on the system dma-heap and udmabuf.
#include <catch2/catch_test_macros.hpp>

#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <drm.h>
#include <i915_drm.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "cl_fixture.hpp"
#include "layer_probe.hpp"
#include "test_env.hpp"
#include "vgen9_control.hpp"

using namespace e2e;
using cldmabuf::test::env_is;
using cldmabuf::test::vgen9;

namespace {

bool allowed(const char *name) {
    const char *forced = std::getenv("CLDMABUF_ALLOC_EXPORTER");
    return !forced || !*forced || !std::strcmp(forced, "auto") || !std::strcmp(forced, name);
}

// The exporter the layer must pick for a context of `env.device`, from what
// this machine has: the Gen9 node when the virtual Gen9 is preloaded, the
// blitter is on and the node serves the device (PoCL's CPU device, an Intel
// GPU), else the system dma-heap, else udmabuf; 0 when none is there.
cl_uint expected_exporter(const ClEnv &env) {
    cl_device_type type = 0;
    cl_uint vendor = 0;
    clGetDeviceInfo(env.device, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
    clGetDeviceInfo(env.device, CL_DEVICE_VENDOR_ID, sizeof vendor, &vendor, nullptr);
    if (allowed("i915") && vgen9().loaded && !env_is("CLDMABUF_BLT", "off") &&
        ((type & CL_DEVICE_TYPE_CPU) || vendor == 0x8086))
        return CL_DMA_BUF_EXPORTER_I915_GEM_CLDMABUF;
    if (allowed("dma-heap") && access("/dev/dma_heap/system", R_OK) == 0) return CL_DMA_BUF_EXPORTER_DMA_HEAP_CLDMABUF;
    if (allowed("udmabuf") && access("/dev/udmabuf", R_OK | W_OK) == 0) return CL_DMA_BUF_EXPORTER_UDMABUF_CLDMABUF;
    return 0;
}

#define REQUIRE_EXPORTER(env)                                                                \
    do {                                                                                     \
        if (!expected_exporter(env)) SKIP("no exporter the allocator may use here");         \
    } while (0)

cl_mem alloc_buffer(const ClEnv &env, size_t size, cl_int *err, cl_uint exporter = CL_DMA_BUF_EXPORTER_ANY_CLDMABUF,
                    cl_mem_flags flags = CL_MEM_READ_WRITE) {
    const cl_mem_properties props[] = {CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, exporter, 0};
    return clCreateBufferWithProperties(env.context, props, flags, size, nullptr, err);
}

cl_uint exporter_of(cl_mem mem) {
    cl_uint e = 0;
    REQUIRE(clGetMemObjectInfo(mem, CL_MEM_DMA_BUF_EXPORTER_CLDMABUF, sizeof e, &e, nullptr) == CL_SUCCESS);
    return e;
}

int fd_of(cl_mem mem) {
    cl_int fd = -1;
    REQUIRE(clGetMemObjectInfo(mem, CL_MEM_DMA_BUF_FD_CLDMABUF, sizeof fd, &fd, nullptr) == CL_SUCCESS);
    REQUIRE(fd >= 0);
    return fd;
}

// What stays for the process after the first allocation (the blitter's
// render-node fd, the zero-copy verdict, the blitter probe's copy), made
// before a test counts anything.
void warm_up(const ClEnv &env) {
    static const bool warm = [&] {
        layer_takes_blitter();
        cl_int err = CL_SUCCESS;
        if (cl_mem mem = alloc_buffer(env, 4096, &err)) clReleaseMemObject(mem);
        return true;
    }();
    (void)warm;
}

// A refused allocation: the error, and nothing left behind (fds, mappings,
// the virtual Gen9's objects and exported dma-bufs).
struct LeakCheck {
    explicit LeakCheck(const ClEnv &env) {
        warm_up(env);
        fds = settled_fds();
        maps = settled_mappings();
        sim = vgen9().now();
    }
    int fds = 0;
    int maps = 0;
    struct vgen9_stats sim {};
    void check() const {
        CHECK(settled_fds() == fds);
        CHECK(settled_mappings() == maps);
        const struct vgen9_stats now = vgen9().now();
        CHECK(now.live_objects == sim.live_objects);
        CHECK(now.live_dmabuf_fds == sim.live_dmabuf_fds);
    }
};

}  // namespace

TEST_CASE("allocation: the exporter this machine has, or CL_INVALID_OPERATION", "[alloc]") {
    ClEnv env;
    const cl_uint expected = expected_exporter(env);
    LeakCheck leaks(env);
    cl_int err = CL_SUCCESS;
    cl_mem mem = alloc_buffer(env, 4096, &err);
    if (!expected) {
        CHECK(mem == nullptr);
        CHECK(err == CL_INVALID_OPERATION);
        leaks.check();
        return;
    }
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(mem);
    CHECK(exporter_of(mem) == expected);
    if (expected == CL_DMA_BUF_EXPORTER_I915_GEM_CLDMABUF) CHECK(vgen9().now().live_objects == leaks.sim.live_objects + 1);
    clReleaseMemObject(mem);
    leaks.check();
}

TEST_CASE("allocation: the contract, 1024 elements through map, copy, handoff and the exported fd", "[alloc]") {
    ClEnv env;
    REQUIRE_EXPORTER(env);
    constexpr size_t n = 1024, bytes = n * sizeof(uint32_t);
    cl_int err = CL_SUCCESS;
    cl_mem src = alloc_buffer(env, bytes, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem dst = alloc_buffer(env, bytes, &err);
    REQUIRE(err == CL_SUCCESS);
    warm_up(env);  // the blitter probe's own copy is counted before `before`
    const LayerStats before = layer_stats(env.platform);

    cl_mem both[] = {src, dst};
    REQUIRE(env.acquire(env.queue, 2, both, 0, nullptr, nullptr) == CL_SUCCESS);
    auto *p = static_cast<uint32_t *>(
        clEnqueueMapBuffer(env.queue, src, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, bytes, 0, nullptr, nullptr, &err));
    REQUIRE(err == CL_SUCCESS);
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint32_t>(i * 2654435761u);
    REQUIRE(clEnqueueUnmapMemObject(env.queue, src, p, 0, nullptr, nullptr) == CL_SUCCESS);
    cl_event copied = nullptr;
    REQUIRE(clEnqueueCopyBuffer(env.queue, src, dst, 0, 0, bytes, 0, nullptr, &copied) == CL_SUCCESS);
    REQUIRE(clWaitForEvents(1, &copied) == CL_SUCCESS);
    clReleaseEvent(copied);
    cl_event released = nullptr;
    REQUIRE(env.release(env.queue, 2, both, 0, nullptr, &released) == CL_SUCCESS);
    REQUIRE(clWaitForEvents(1, &released) == CL_SUCCESS);
    clReleaseEvent(released);

    // Another consumer: the exported fd, mapped by the CPU.
    const int fd = fd_of(dst);
    struct statfs sf {};
    REQUIRE(fstatfs(fd, &sf) == 0);
    CHECK(static_cast<unsigned long>(sf.f_type) == 0x444d4142ul);  // DMA_BUF_MAGIC
    CHECK(lseek(fd, 0, SEEK_END) >= static_cast<off_t>(bytes));
    void *m = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
    REQUIRE(m != MAP_FAILED);
    size_t correct = 0;
    for (size_t i = 0; i < n; ++i) correct += static_cast<const uint32_t *>(m)[i] == static_cast<uint32_t>(i * 2654435761u);
    CHECK(correct == n);
    munmap(m, bytes);
    close(fd);

    // The i915 exporter is chosen only where the Gen9 node serves every device
    // of the context with the blitter on (docs/allocator.md), so its buffers
    // are the blitter's wherever they are imported in place, whatever the
    // test's own dma-buf source (the VM lane's heap buffers are not the
    // blitter's: layer_takes_blitter() would say no there).
    const bool blitter = exporter_of(dst) == CL_DMA_BUF_EXPORTER_I915_GEM_CLDMABUF && layer_imports_in_place();
    const LayerStats after = layer_stats(env.platform);
    CHECK(after[CL_STATS_BLT_COPIES_CLDMABUF] - before[CL_STATS_BLT_COPIES_CLDMABUF] == (blitter ? 1u : 0u));
    clReleaseMemObject(src);
    clReleaseMemObject(dst);
}

TEST_CASE("allocation: CL_MEM_DMA_BUF_FD_CLDMABUF hands out new fds the caller owns", "[alloc]") {
    ClEnv env;
    REQUIRE_EXPORTER(env);
    cl_int err = CL_SUCCESS;
    cl_mem mem = alloc_buffer(env, 8192, &err);
    REQUIRE(err == CL_SUCCESS);
    const int fds = count_open_fds();
    size_t size = 0;
    CHECK(clGetMemObjectInfo(mem, CL_MEM_DMA_BUF_FD_CLDMABUF, 0, nullptr, &size) == CL_SUCCESS);
    CHECK(size == sizeof(cl_int));
    cl_int small = 0;
    CHECK(clGetMemObjectInfo(mem, CL_MEM_DMA_BUF_FD_CLDMABUF, 1, &small, nullptr) == CL_INVALID_VALUE);
    CHECK(count_open_fds() == fds);  // neither made an fd

    const int a = fd_of(mem), b = fd_of(mem);
    CHECK(a != b);
    CHECK(count_open_fds() == fds + 2);
    // The same dma-buf: a write through one fd is seen through the other.
    auto *wa = static_cast<uint8_t *>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, a, 0));
    auto *rb = static_cast<uint8_t *>(mmap(nullptr, 4096, PROT_READ, MAP_SHARED, b, 0));
    REQUIRE(wa != MAP_FAILED);
    REQUIRE(rb != MAP_FAILED);
    wa[17] = 0xa5;
    CHECK(rb[17] == 0xa5);
    munmap(wa, 4096);
    munmap(rb, 4096);
    close(a);
    // The caller's fd outlives the object.
    clReleaseMemObject(mem);
    CHECK(fd_is_open(b));
    CHECK(lseek(b, 0, SEEK_END) >= 8192);
    close(b);

    cl_mem plain = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 64, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_int fd = -1;
    CHECK(clGetMemObjectInfo(plain, CL_MEM_DMA_BUF_FD_CLDMABUF, sizeof fd, &fd, nullptr) == CL_INVALID_VALUE);
    cl_uint e = 0;
    CHECK(clGetMemObjectInfo(plain, CL_MEM_DMA_BUF_EXPORTER_CLDMABUF, sizeof e, &e, nullptr) == CL_INVALID_VALUE);
    clReleaseMemObject(plain);
}

TEST_CASE("allocation: CL_MEM_PROPERTIES answers the caller's list", "[alloc]") {
    ClEnv env;
    REQUIRE_EXPORTER(env);
    const cl_mem_properties props[] = {CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, CL_DMA_BUF_EXPORTER_ANY_CLDMABUF, 0};
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_ONLY, 4096, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem_properties got[8] = {};
    size_t size = 0;
    REQUIRE(clGetMemObjectInfo(mem, CL_MEM_PROPERTIES, sizeof got, got, &size) == CL_SUCCESS);
    REQUIRE(size == sizeof props);
    CHECK(std::memcmp(got, props, sizeof props) == 0);
    cl_mem_flags flags = 0;
    REQUIRE(clGetMemObjectInfo(mem, CL_MEM_FLAGS, sizeof flags, &flags, nullptr) == CL_SUCCESS);
    CHECK(flags == CL_MEM_READ_ONLY);
    clReleaseMemObject(mem);
}

TEST_CASE("allocation: every request that cannot be honoured is refused and leaves nothing", "[alloc]") {
    ClEnv env;
    const cl_uint expected = expected_exporter(env);
    cl_int err = CL_SUCCESS;
    uint8_t host[64] = {};
    LeakCheck leaks(env);
    SECTION("a host pointer") {
        const cl_mem_properties props[] = {CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, CL_DMA_BUF_EXPORTER_ANY_CLDMABUF, 0};
        CHECK(!clCreateBufferWithProperties(env.context, props, CL_MEM_USE_HOST_PTR, 64, host, &err));
        CHECK(err == CL_INVALID_HOST_PTR);
        CHECK(!clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, 64, host, &err));
        CHECK(err == CL_INVALID_HOST_PTR);
        CHECK(!clCreateBufferWithProperties(env.context, props, CL_MEM_ALLOC_HOST_PTR, 64, nullptr, &err));
        CHECK(err == CL_INVALID_VALUE);
    }
    SECTION("a value that names no exporter") {
        for (cl_mem_properties v : {0ull, 5ull, 0x10C0Aull}) {
            const cl_mem_properties props[] = {CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, v, 0};
            CHECK(!clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, 64, nullptr, &err));
            CHECK(err == CL_INVALID_PROPERTY);
        }
    }
    SECTION("repeated, or with a dma-buf handle") {
        const cl_mem_properties twice[] = {CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, 1, CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, 1, 0};
        CHECK(!clCreateBufferWithProperties(env.context, twice, CL_MEM_READ_WRITE, 64, nullptr, &err));
        CHECK(err == CL_INVALID_PROPERTY);
        const cl_mem_properties handle[] = {CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, 1, CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                            0, 0};
        CHECK(!clCreateBufferWithProperties(env.context, handle, CL_MEM_READ_WRITE, 64, nullptr, &err));
        CHECK(err == CL_INVALID_PROPERTY);
    }
    SECTION("size 0") {
        CHECK(!alloc_buffer(env, 0, &err));
        CHECK(err == CL_INVALID_BUFFER_SIZE);
    }
    SECTION("a size above every device's CL_DEVICE_MAX_MEM_ALLOC_SIZE") {
        // Refused before any exporter is asked (a real system heap would
        // allocate until the OOM killer ends the process).
        const uint64_t before = vgen9().loaded ? vgen9().now().live_objects : 0;
        CHECK(!alloc_buffer(env, size_t{1} << 50, &err));
        CHECK(err == CL_INVALID_BUFFER_SIZE);
        if (vgen9().loaded) CHECK(vgen9().now().live_objects == before);
    }
    SECTION("an exporter that is missing") {
        if (access("/dev/udmabuf", F_OK) == 0) SKIP("udmabuf exists here");
        CHECK(!alloc_buffer(env, 4096, &err, CL_DMA_BUF_EXPORTER_UDMABUF_CLDMABUF));
        CHECK(err == CL_INVALID_OPERATION);
    }
    SECTION("the exporter runs out of memory (virtual Gen9)") {
        if (expected != CL_DMA_BUF_EXPORTER_I915_GEM_CLDMABUF) SKIP("not on the virtual Gen9's exporter");
        REQUIRE(vgen9().fail_ioctl(DRM_IOCTL_I915_GEM_CREATE, 1, ENOMEM) == 0);
        CHECK(!alloc_buffer(env, 4096, &err, CL_DMA_BUF_EXPORTER_I915_GEM_CLDMABUF));
        CHECK(err == CL_MEM_OBJECT_ALLOCATION_FAILURE);
        vgen9().reset();
    }
    SECTION("the export fails after the GEM object was made (virtual Gen9)") {
        if (expected != CL_DMA_BUF_EXPORTER_I915_GEM_CLDMABUF) SKIP("not on the virtual Gen9's exporter");
        REQUIRE(vgen9().fail_ioctl(DRM_IOCTL_PRIME_HANDLE_TO_FD, 1, ENOMEM) == 0);
        CHECK(!alloc_buffer(env, 4096, &err, CL_DMA_BUF_EXPORTER_I915_GEM_CLDMABUF));
        CHECK(err == CL_MEM_OBJECT_ALLOCATION_FAILURE);
        vgen9().reset();
    }
    SECTION("the import refuses after the allocation (a flag the import rejects)") {
        if (!expected) SKIP("no exporter here");
        // CL_MEM_READ_WRITE | CL_MEM_READ_ONLY: the spec's CL_INVALID_VALUE, found by the import.
        CHECK(!alloc_buffer(env, 4096, &err, CL_DMA_BUF_EXPORTER_ANY_CLDMABUF, CL_MEM_READ_WRITE | CL_MEM_READ_ONLY));
        CHECK(err == CL_INVALID_VALUE);
    }
    leaks.check();
}

TEST_CASE("allocation: a linear 2D image, written by the device and read through the fd", "[alloc]") {
    ClEnv env;
    REQUIRE_EXPORTER(env);
    if (!device_has_images(env)) SKIP("no image support");
    const cl_image_format format{CL_RGBA, CL_UNSIGNED_INT8};
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = 64;
    desc.image_height = 16;
    const cl_mem_properties props[] = {CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, CL_DMA_BUF_EXPORTER_ANY_CLDMABUF, 0};
    cl_int err = CL_SUCCESS;
    cl_mem image = clCreateImageWithProperties(env.context, props, CL_MEM_READ_WRITE, &format, &desc, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(exporter_of(image) == expected_exporter(env));
    std::vector<uint8_t> pixels(64 * 16 * 4);
    for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 7 + 3);
    cl_mem list[] = {image};
    REQUIRE(env.acquire(env.queue, 1, list, 0, nullptr, nullptr) == CL_SUCCESS);
    const size_t origin[3] = {0, 0, 0}, region[3] = {64, 16, 1};
    REQUIRE(clEnqueueWriteImage(env.queue, image, CL_TRUE, origin, region, 0, 0, pixels.data(), 0, nullptr, nullptr) ==
            CL_SUCCESS);
    REQUIRE(env.release(env.queue, 1, list, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    const int fd = fd_of(image);
    void *m = mmap(nullptr, pixels.size(), PROT_READ, MAP_SHARED, fd, 0);
    REQUIRE(m != MAP_FAILED);
    CHECK(std::memcmp(m, pixels.data(), pixels.size()) == 0);
    munmap(m, pixels.size());
    close(fd);
    clReleaseMemObject(image);

    desc.image_type = CL_MEM_OBJECT_IMAGE3D;
    desc.image_depth = 2;
    CHECK(!clCreateImageWithProperties(env.context, props, CL_MEM_READ_WRITE, &format, &desc, nullptr, &err));
    CHECK(err == CL_INVALID_IMAGE_DESCRIPTOR);
}

namespace {

// A second OpenCL context for the consumer side: on another platform where
// there is one (rusticl <-> PoCL in the VM lane), else a second context of
// the same platform (the host).
struct Peer {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    clEnqueueAcquireExternalMemObjectsKHR_fn acquire = nullptr;
    clEnqueueReleaseExternalMemObjectsKHR_fn release = nullptr;
    std::string name;

    explicit Peer(const ClEnv &env) {
        cl_uint n = 0;
        clGetPlatformIDs(0, nullptr, &n);
        std::vector<cl_platform_id> platforms(n);
        clGetPlatformIDs(n, platforms.data(), nullptr);
        for (cl_platform_id p : platforms) {
            cl_device_id d = nullptr;
            if (p != env.platform && clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, nullptr) == CL_SUCCESS) {
                platform = p;
                device = d;
                break;
            }
        }
        if (!platform) {
            platform = env.platform;
            device = env.device;
        }
        name = platform_string(platform, CL_PLATFORM_NAME);
        cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform), 0};
        cl_int err = CL_SUCCESS;
        context = clCreateContext(props, 1, &device, nullptr, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        queue = clCreateCommandQueueWithProperties(context, device, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        acquire = reinterpret_cast<clEnqueueAcquireExternalMemObjectsKHR_fn>(
            clGetExtensionFunctionAddressForPlatform(platform, "clEnqueueAcquireExternalMemObjectsKHR"));
        release = reinterpret_cast<clEnqueueReleaseExternalMemObjectsKHR_fn>(
            clGetExtensionFunctionAddressForPlatform(platform, "clEnqueueReleaseExternalMemObjectsKHR"));
        REQUIRE(acquire);
        REQUIRE(release);
    }
    ~Peer() {
        clReleaseCommandQueue(queue);
        clReleaseContext(context);
    }
};

// Under acquire ... release on `queue`: checks that `mem` holds `expect`
// (when given) and writes `write` over it.
void read_then_write(cl_command_queue queue, clEnqueueAcquireExternalMemObjectsKHR_fn acquire,
                     clEnqueueReleaseExternalMemObjectsKHR_fn release, cl_mem mem, size_t n, uint32_t expect,
                     bool check_expect, uint32_t write, size_t *correct) {
    REQUIRE(acquire(queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    cl_int err = CL_SUCCESS;
    auto *p = static_cast<uint32_t *>(clEnqueueMapBuffer(queue, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                                         n * sizeof(uint32_t), 0, nullptr, nullptr, &err));
    REQUIRE(err == CL_SUCCESS);
    *correct = 0;
    for (size_t i = 0; i < n; ++i) {
        if (check_expect) *correct += p[i] == (expect ^ static_cast<uint32_t>(i));
        p[i] = write ^ static_cast<uint32_t>(i);
    }
    REQUIRE(clEnqueueUnmapMemObject(queue, mem, p, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(release(queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(queue) == CL_SUCCESS);
}

}  // namespace

TEST_CASE("allocation: exported into another context or platform and back, bit-exact", "[alloc]") {
    ClEnv env;
    REQUIRE_EXPORTER(env);
    Peer peer(env);
    INFO("consumer: " << peer.name << (peer.platform == env.platform ? " (a second context)" : " (another platform)"));
    constexpr size_t n = 16384;
    cl_int err = CL_SUCCESS;
    cl_mem mem = alloc_buffer(env, n * sizeof(uint32_t), &err);
    REQUIRE(err == CL_SUCCESS);
    size_t correct = 0;
    read_then_write(env.queue, env.acquire, env.release, mem, n, 0, false, 0xA11CE000u, &correct);

    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                       static_cast<cl_mem_properties>(fd_of(mem)), 0};
    cl_mem imported = clCreateBufferWithProperties(peer.context, props, CL_MEM_READ_WRITE, n * sizeof(uint32_t),
                                                   nullptr, &err);
    REQUIRE(err == CL_SUCCESS);  // the import owns the fd now
    read_then_write(peer.queue, peer.acquire, peer.release, imported, n, 0xA11CE000u, true, 0xB0B00000u, &correct);
    CHECK(correct == n);
    read_then_write(env.queue, env.acquire, env.release, mem, n, 0xB0B00000u, true, 0, &correct);
    CHECK(correct == n);
    clReleaseMemObject(imported);
    clReleaseMemObject(mem);
}
