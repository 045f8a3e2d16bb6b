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

// A sw_sync timeline: fences that signal when the test says so.
class Timeline {
public:
    Timeline()
        : fd_(open("/sys/kernel/debug/sync/sw_sync", O_RDWR | O_CLOEXEC))
    {}
    ~Timeline()
    {
        if (fd_ >= 0) close(fd_); // signals every point still pending
    }
    Timeline(const Timeline &) = delete;
    Timeline &operator=(const Timeline &) = delete;
    bool ok() const { return fd_ >= 0; }
    // A sync_file that signals at point `value`, or -1.
    int fence(unsigned value)
    {
        sw_sync_create_fence_data_abi d = {};
        d.value = value;
        std::strncpy(d.name, "cts-producer", sizeof(d.name) - 1);
        return ioctl(fd_, SW_SYNC_IOC_CREATE_FENCE_ABI, &d) == 0 ? d.fence
                                                                 : -1;
    }
    bool advance(unsigned by = 1)
    {
        __u32 n = by;
        return ioctl(fd_, SW_SYNC_IOC_INC_ABI, &n) == 0;
    }

private:
    int fd_;
};

#define REQUIRE_SW_SYNC(timeline)                                              \
    dma_buf_test::Timeline timeline;                                           \
    if (!timeline.ok())                                                        \
    {                                                                          \
        log_info("no sw_sync here (CONFIG_SW_SYNC and debugfs at "             \
                 "/sys/kernel/debug): skipped\n");                             \
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
