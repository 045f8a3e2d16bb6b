//
// Helpers shared by the cl_khr_external_memory(_dma_buf) tests of this
// module: the extension's entry points, imports, CPU access to a dma-buf
// (mmap and DMA_BUF_IOCTL_SYNC), fd checks.  Only the CTS harness API
// (harness/*.h), OpenCL and Linux, so the same files build inside the CTS and
// against the stand-in (conformance/cts/README.md).
//
#ifndef EXTERNAL_MEMORY_DMA_BUF_COMMON_H
#define EXTERNAL_MEMORY_DMA_BUF_COMMON_H

#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <linux/types.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "harness/alloc.h"
#include "harness/testHarness.h"
#include "harness/typeWrappers.h"

// The names of cl_khr_external_memory 1.0.1, for headers that predate them.
#ifndef CL_MEM_DEVICE_HANDLE_LIST_KHR
#define CL_MEM_DEVICE_HANDLE_LIST_KHR 0x2051
#define CL_MEM_DEVICE_HANDLE_LIST_END_KHR 0
#endif
#ifndef CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR
#define CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR 0x2052
#endif

namespace dma_buf_test {

struct ExternalMemoryFunctions
{
    clEnqueueAcquireExternalMemObjectsKHR_fn acquire = nullptr;
    clEnqueueReleaseExternalMemObjectsKHR_fn release = nullptr;
};

inline cl_platform_id platform_of(cl_device_id device)
{
    cl_platform_id platform = nullptr;
    clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof(platform), &platform,
                    nullptr);
    return platform;
}

// The two commands, through clGetExtensionFunctionAddressForPlatform (the
// only way an application reaches an extension's functions).
inline ExternalMemoryFunctions external_memory_functions(cl_device_id device)
{
    ExternalMemoryFunctions f;
    cl_platform_id platform = platform_of(device);
    f.acquire = reinterpret_cast<clEnqueueAcquireExternalMemObjectsKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(
            platform, "clEnqueueAcquireExternalMemObjectsKHR"));
    f.release = reinterpret_cast<clEnqueueReleaseExternalMemObjectsKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(
            platform, "clEnqueueReleaseExternalMemObjectsKHR"));
    return f;
}

// Every test of the module starts here: the device must report both
// extensions (else the test skips, as the CTS's own dma-buf test does) and
// hand out both commands.
#define REQUIRE_DMA_BUF_IMPORT(fns)                                            \
    REQUIRE_EXTENSION("cl_khr_external_memory");                               \
    REQUIRE_EXTENSION("cl_khr_external_memory_dma_buf");                       \
    const dma_buf_test::ExternalMemoryFunctions fns =                          \
        dma_buf_test::external_memory_functions(device);                       \
    test_assert_error(fns.acquire != nullptr && fns.release != nullptr,        \
                      "the device reports cl_khr_external_memory but "         \
                      "clEnqueue{Acquire,Release}ExternalMemObjectsKHR are "   \
                      "not handed out")

// A dma-buf of `size` bytes; TEST_SKIPPED_ITSELF or -1 are passed on.
#define ALLOCATE_DMA_BUF(fd, size)                                             \
    int fd = allocate_dma_buf(size);                                           \
    if (fd == TEST_SKIPPED_ITSELF) return TEST_SKIPPED_ITSELF;                 \
    test_assert_error(fd >= 0, "allocate_dma_buf failed")

// A linear 2D image of `format` over the dma-buf `fd` at row pitch `pitch`
// (the import owns the fd on success).
inline cl_mem import_image_2d(cl_context context, int fd,
                              const cl_image_format &format, size_t width,
                              size_t height, size_t pitch, cl_int *err)
{
    const cl_mem_properties props[] = {
        CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
        static_cast<cl_mem_properties>(fd), 0
    };
    cl_image_desc desc = {};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = width;
    desc.image_height = height;
    desc.image_row_pitch = pitch;
    return clCreateImageWithProperties(context, props, CL_MEM_READ_WRITE,
                                       &format, &desc, nullptr, err);
}

inline cl_mem import_buffer(cl_context context, int fd, size_t size,
                            cl_int *err,
                            cl_mem_flags flags = CL_MEM_READ_WRITE)
{
    const cl_mem_properties props[] = {
        CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
        static_cast<cl_mem_properties>(fd), 0
    };
    return clCreateBufferWithProperties(context, props, flags, size, nullptr,
                                        err);
}

// CPU access to a dma-buf, bracketed by DMA_BUF_IOCTL_SYNC as the kernel's
// dma-buf documentation requires of a CPU user.
class CpuView {
public:
    CpuView(int fd, size_t size): fd_(fd), size_(size)
    {
        void *p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        bytes_ = p == MAP_FAILED ? nullptr : static_cast<uint8_t *>(p);
    }
    ~CpuView()
    {
        if (bytes_) munmap(bytes_, size_);
    }
    CpuView(const CpuView &) = delete;
    CpuView &operator=(const CpuView &) = delete;
    bool ok() const { return bytes_ != nullptr; }
    void fill(uint32_t seed)
    {
        sync(DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
        for (size_t i = 0; i < size_; ++i) bytes_[i] = pattern(i, seed);
        sync(DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
    }
    // The first index where the contents differ from pattern(seed), or
    // SIZE_MAX.
    size_t first_mismatch(uint32_t seed, size_t from = 0,
                          size_t count = SIZE_MAX)
    {
        sync(DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
        size_t bad = SIZE_MAX;
        const size_t end = count == SIZE_MAX ? size_ : from + count;
        for (size_t i = from; i < end && bad == SIZE_MAX; ++i)
            if (bytes_[i] != pattern(i, seed)) bad = i;
        sync(DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
        return bad;
    }
    // A producer under its own fence writes without SYNC_START/END (which
    // would wait for that very fence).
    void raw_write(const std::vector<uint8_t> &bytes)
    {
        std::memcpy(bytes_, bytes.data(), std::min(size_, bytes.size()));
    }
    // A copy of every byte, read between SYNC_START and SYNC_END.
    std::vector<uint8_t> contents()
    {
        sync(DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
        std::vector<uint8_t> out(bytes_, bytes_ + size_);
        sync(DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
        return out;
    }
    static uint8_t pattern(size_t i, uint32_t seed)
    {
        return static_cast<uint8_t>((i * 131u + seed * 7u + (i >> 8)) & 0xff);
    }

private:
    void sync(uint64_t flags)
    {
        dma_buf_sync s = { flags };
        ioctl(fd_, DMA_BUF_IOCTL_SYNC, &s);
    }
    int fd_;
    size_t size_;
    uint8_t *bytes_ = nullptr;
};

inline std::vector<uint8_t> expected_pattern(size_t n, uint32_t seed,
                                             size_t from = 0)
{
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = CpuView::pattern(from + i, seed);
    return v;
}

// CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR
// lists DMA_BUF: the device reads an image import as linear rows at the
// given pitch (the image tests check pixels at known offsets only then).
inline bool assumes_linear_dma_buf(cl_device_id device)
{
    size_t bytes = 0;
    if (clGetDeviceInfo(
            device,
            CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR,
            0, nullptr, &bytes)
        != CL_SUCCESS)
        return false;
    std::vector<cl_external_memory_handle_type_khr> types(
        bytes / sizeof(cl_external_memory_handle_type_khr));
    if (bytes
        && clGetDeviceInfo(
               device,
               CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR,
               bytes, types.data(), nullptr)
            != CL_SUCCESS)
        return false;
    return std::find(types.begin(), types.end(),
                     CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR)
        != types.end();
}

inline bool fd_is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

// True once `fd` is closed, polling for at most five seconds: an
// implementation may close it from a worker thread after the object is gone.
inline bool fd_closes_soon(int fd)
{
    for (int i = 0; i < 500; ++i)
    {
        if (!fd_is_open(fd)) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

inline cl_int event_status(cl_event e)
{
    cl_int s = CL_COMPLETE;
    clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(s), &s,
                   nullptr);
    return s;
}

// ---- sync_files (the sync-file and sync_fd semaphore tests) -------------

// drivers/dma-buf/sw_sync.c's ioctls: not in the exported UAPI headers,
// written from the kernel's ABI.
struct sw_sync_create_fence_data_abi
{
    __u32 value;
    char name[32];
    __s32 fence;
};
#define SW_SYNC_IOC_CREATE_FENCE_ABI                                           \
    _IOWR('W', 0, struct sw_sync_create_fence_data_abi)
#define SW_SYNC_IOC_INC_ABI _IOW('W', 1, __u32)

// The DRM ioctls a vgem producer fence needs (include/uapi/drm/drm.h,
// drm_mode.h, vgem_drm.h): written from the kernel's ABI, because the C
// library's kernel headers ship no drm/ on Debian and vgem_drm.h is in no
// package; the numbers are checked below against the kernel's.
struct drm_version_abi
{
    int version_major, version_minor, version_patchlevel;
    size_t name_len;
    char *name;
    size_t date_len;
    char *date;
    size_t desc_len;
    char *desc;
};
struct drm_mode_create_dumb_abi
{
    __u32 height, width, bpp, flags;
    __u32 handle, pitch;
    __u64 size;
};
struct drm_prime_handle_abi
{
    __u32 handle;
    __u32 flags;
    __s32 fd;
};
struct drm_gem_close_abi
{
    __u32 handle;
    __u32 pad;
};
struct vgem_fence_attach_abi
{
    __u32 handle;
    __u32 flags;
    __u32 out_fence;
    __u32 pad;
};
struct vgem_fence_signal_abi
{
    __u32 fence;
    __u32 flags;
};
#define DRM_IOCTL_VERSION_ABI _IOWR('d', 0x00, struct drm_version_abi)
#define DRM_IOCTL_GEM_CLOSE_ABI _IOW('d', 0x09, struct drm_gem_close_abi)
#define DRM_IOCTL_PRIME_HANDLE_TO_FD_ABI                                       \
    _IOWR('d', 0x2d, struct drm_prime_handle_abi)
#define DRM_IOCTL_MODE_CREATE_DUMB_ABI                                         \
    _IOWR('d', 0xB2, struct drm_mode_create_dumb_abi)
#define VGEM_IOCTL_FENCE_ATTACH_ABI                                            \
    _IOWR('d', 0x41, struct vgem_fence_attach_abi)
#define VGEM_IOCTL_FENCE_SIGNAL_ABI _IOW('d', 0x42, struct vgem_fence_signal_abi)
#define VGEM_FENCE_WRITE_ABI 0x1
static_assert(DRM_IOCTL_GEM_CLOSE_ABI == 0x40086409UL, "DRM_IOCTL_GEM_CLOSE");
static_assert(DRM_IOCTL_PRIME_HANDLE_TO_FD_ABI == 0xC00C642DUL,
              "DRM_IOCTL_PRIME_HANDLE_TO_FD");
static_assert(DRM_IOCTL_MODE_CREATE_DUMB_ABI == 0xC02064B2UL,
              "DRM_IOCTL_MODE_CREATE_DUMB");
static_assert(VGEM_IOCTL_FENCE_ATTACH_ABI == 0xC0106441UL,
              "DRM_IOCTL_VGEM_FENCE_ATTACH");
static_assert(VGEM_IOCTL_FENCE_SIGNAL_ABI == 0x40086442UL,
              "DRM_IOCTL_VGEM_FENCE_SIGNAL");

// A producer's timeline: sync_files that signal when the test says so.
// sw_sync where the kernel has it (CONFIG_SW_SYNC, debugfs mounted), else
// vgem (Debian's kernels build it, not sw_sync): each point is a fence
// attached to a scratch vgem buffer and taken out as a sync_file with
// DMA_BUF_IOCTL_EXPORT_SYNC_FILE (Linux 6.0), which is how a producer's
// write looks to a consumer that syncs implicitly.  vgem signals a fence
// left pending after ten seconds, and when its file closes.
class Timeline {
public:
    Timeline()
        : fd_(open("/sys/kernel/debug/sync/sw_sync", O_RDWR | O_CLOEXEC))
    {
        if (fd_ < 0) open_vgem();
    }
    ~Timeline()
    {
        if (fd_ >= 0) close(fd_); // signals every point still pending
    }
    Timeline(const Timeline &) = delete;
    Timeline &operator=(const Timeline &) = delete;
    bool ok() const { return fd_ >= 0; }
    const char *source() const { return vgem_ ? "vgem" : "sw_sync"; }
    // A sync_file that signals at point `value`, or -1.
    int fence(unsigned value)
    {
        if (vgem_) return vgem_fence(value);
        sw_sync_create_fence_data_abi d = {};
        d.value = value;
        std::strncpy(d.name, "cts-producer", sizeof(d.name) - 1);
        return ioctl(fd_, SW_SYNC_IOC_CREATE_FENCE_ABI, &d) == 0 ? d.fence
                                                                 : -1;
    }
    // Moves the timeline on; every point at or below it signals.
    bool advance(unsigned by = 1)
    {
        if (!vgem_)
        {
            __u32 n = by;
            return ioctl(fd_, SW_SYNC_IOC_INC_ABI, &n) == 0;
        }
        now_ += by;
        bool ok = true;
        for (auto p = pending_.begin(); p != pending_.end();)
        {
            if (p->value > now_)
            {
                ++p;
                continue;
            }
            vgem_fence_signal_abi s = {};
            s.fence = p->fence;
            ok = ioctl(fd_, VGEM_IOCTL_FENCE_SIGNAL_ABI, &s) == 0 && ok;
            p = pending_.erase(p);
        }
        return ok;
    }

private:
    struct Point
    {
        unsigned value;
        __u32 fence;
    };

    // vgem's primary node (dumb buffers are refused on render nodes).
    void open_vgem()
    {
        for (int minor = 0; minor < 16 && fd_ < 0; ++minor)
        {
            const std::string path = "/dev/dri/card" + std::to_string(minor);
            const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
            if (fd < 0) continue;
            char name[8] = {};
            drm_version_abi v = {};
            v.name = name;
            v.name_len = sizeof(name) - 1;
            if (ioctl(fd, DRM_IOCTL_VERSION_ABI, &v) == 0 && v.name_len == 4
                && std::memcmp(name, "vgem", 4) == 0)
            {
                fd_ = fd;
                vgem_ = true;
            }
            else
                close(fd);
        }
    }

    int vgem_fence(unsigned value)
    {
        drm_mode_create_dumb_abi dumb = {};
        dumb.width = 1024, dumb.height = 1, dumb.bpp = 32; // one page
        if (ioctl(fd_, DRM_IOCTL_MODE_CREATE_DUMB_ABI, &dumb) != 0) return -1;
        vgem_fence_attach_abi attach = {};
        attach.handle = dumb.handle;
        attach.flags = VGEM_FENCE_WRITE_ABI;
        drm_prime_handle_abi prime = {};
        prime.handle = dumb.handle;
        prime.flags = O_CLOEXEC | O_RDWR;
        int sync_file = -1;
        if (ioctl(fd_, VGEM_IOCTL_FENCE_ATTACH_ABI, &attach) == 0)
        {
            pending_.push_back({ value, attach.out_fence });
            if (ioctl(fd_, DRM_IOCTL_PRIME_HANDLE_TO_FD_ABI, &prime) == 0)
            {
                dma_buf_export_sync_file e = {};
                e.flags = DMA_BUF_SYNC_WRITE; // every fence: the writer's too
                if (ioctl(prime.fd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &e) == 0)
                    sync_file = e.fd;
                close(prime.fd);
            }
        }
        // The sync_file holds the fence; the buffer was only the way to it.
        drm_gem_close_abi gem_close = {};
        gem_close.handle = dumb.handle;
        ioctl(fd_, DRM_IOCTL_GEM_CLOSE_ABI, &gem_close);
        return sync_file;
    }

    int fd_;
    bool vgem_ = false;
    unsigned now_ = 0;
    std::vector<Point> pending_;
};

#define REQUIRE_PRODUCER_FENCES(timeline)                                      \
    dma_buf_test::Timeline timeline;                                           \
    if (!timeline.ok())                                                        \
    {                                                                          \
        log_info("no producer fences here: neither sw_sync (CONFIG_SW_SYNC, "  \
                 "debugfs at /sys/kernel/debug) nor vgem: skipped\n");         \
        return TEST_SKIPPED_ITSELF;                                            \
    }

inline bool signalled_within(int sync_file, int ms)
{
    pollfd p = { sync_file, POLLIN, 0 };
    return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

// The event's status once it reached CL_COMPLETE (or an error), or its
// status after `ms` milliseconds: a bounded clWaitForEvents.
inline cl_int status_within(cl_event e, int ms)
{
    cl_int s = event_status(e);
    for (int i = 0; i < ms && s > CL_COMPLETE; ++i)
    {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        s = event_status(e);
    }
    return s;
}

} // namespace dma_buf_test

#endif // EXTERNAL_MEMORY_DMA_BUF_COMMON_H
