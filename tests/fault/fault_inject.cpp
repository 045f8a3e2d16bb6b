// The fault injector: an LD_PRELOAD test instrument that fails one chosen libc
// call made FROM libcldmabuf.so with a chosen errno (tests/e2e/test_fault_sweep.cpp).
//
// Why a preload and not the in-process fake KernelOps: the layer is dlopen'ed
// by the ICD loader, so a fake seam reaches unit tests only.  The seam's libc
// implementation (layer/base/kernel_ops.cpp) calls exactly the functions wrapped
// here, so failing them at the libc boundary fails the seam on every path
// without a layer change.  Calls from anything else (the ICD, the loader, the
// test, the virtual Gen9) pass through untouched: the caller's address is
// looked up with dladdr and only libcldmabuf.so's calls are counted.
//
// Preload order: libcldmabuf-fault.so first, then libvgen9.so, so a call that
// is not failed reaches the virtual Gen9 (dlsym(RTLD_NEXT)) as before.
//
// Semantics of an injected failure follow the kernel's:
//   close   the fd is closed, then -1/errno (Linux releases the fd even when
//           close reports EINTR or EIO);
//   munmap  counted, never failed (it fails only for invalid arguments, a
//           layer bug, and then leaves nothing a caller could do);
//   GEM_CLOSE, I915_GEM_CONTEXT_DESTROY ioctls: performed, then -1/errno (the
//           kernel fails them only for a handle that does not exist, so a
//           failure never leaves an object behind);
//   others  not performed, -1 (MAP_FAILED) with errno.
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <atomic>
#include <drm.h>
#include <i915_drm.h>

#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <mutex>

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

std::atomic<bool> g_counting{false};
std::atomic<long> g_calls{0};     // layer calls since the last arm/record
std::atomic<long> g_nth{-1};      // the call to fail (-1: none)
std::atomic<int> g_errno{0};
std::atomic<int> g_fired{0};      // injected failures since the last arm
std::atomic<bool> g_recording{false};
// What the last injected failure hit: a run's Nth call is not always the
// recording run's Nth (a worker's timing, a lazy probe).
std::atomic<const char *> g_fired_name{nullptr};
std::atomic<unsigned long> g_fired_request{0};

// The recording pass remembers which function each call index was.
constexpr long kMaxRecorded = 4096;
const char *g_names[kMaxRecorded];
unsigned long g_requests[kMaxRecorded];  // an ioctl's request, 0 for other calls
std::atomic<const void *> g_layer_base{nullptr};

bool from_layer(const void *ret) {
    Dl_info info{};
    if (!dladdr(ret, &info) || !info.dli_fname) return false;
    const void *base = g_layer_base.load(std::memory_order_relaxed);
    if (base) return info.dli_fbase == base;
    const char *slash = std::strrchr(info.dli_fname, '/');
    const char *name = slash ? slash + 1 : info.dli_fname;
    if (std::strcmp(name, "libcldmabuf.so") != 0) return false;
    g_layer_base.store(info.dli_fbase, std::memory_order_relaxed);
    return true;
}

// Counts a layer call; true when this one is to fail (errno is then set).
bool inject(const char *fn, const void *ret, bool may_fail = true, unsigned long request = 0) {
    if (!g_counting.load(std::memory_order_acquire) || !from_layer(ret)) return false;
    const long index = g_calls.fetch_add(1);
    if (g_recording.load(std::memory_order_relaxed) && index < kMaxRecorded) {
        g_names[index] = fn;
        g_requests[index] = request;
    }
    if (!may_fail || index != g_nth.load()) return false;
    g_fired_name = fn;
    g_fired_request = request;
    g_fired.fetch_add(1);
    errno = g_errno.load();
    return true;
}

template <typename F>
F next(const char *name) {
    return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

#define CALLER __builtin_return_address(0)

}  // namespace

// ---- control (looked up with dlsym by tests/support/fault_control.hpp) ---------

// Count the layer's calls and remember their functions; fail none.
EXPORT void cldmabuf_fault_record(void) {
    g_nth = -1;
    g_calls = 0;
    g_fired = 0;
    g_recording = true;
    g_counting.store(true, std::memory_order_release);
}

// Fail the layer's call number `nth` (0-based, counted from now) with `err`.
EXPORT void cldmabuf_fault_arm(long nth, int err) {
    g_recording = false;
    g_calls = 0;
    g_fired = 0;
    g_fired_name = nullptr;
    g_fired_request = 0;
    g_errno = err;
    g_nth = nth;
    g_counting.store(true, std::memory_order_release);
}

// Stop counting and failing.
EXPORT void cldmabuf_fault_off(void) {
    g_counting.store(false, std::memory_order_release);
    g_nth = -1;
}

EXPORT long cldmabuf_fault_calls(void) { return g_calls.load(); }
// The function ("ioctl", ...) and ioctl request of the call the last armed
// run failed (NULL and 0 before any).
EXPORT const char *cldmabuf_fault_fired_name(void) { return g_fired_name.load(); }
EXPORT unsigned long cldmabuf_fault_fired_request(void) { return g_fired_request.load(); }
EXPORT int cldmabuf_fault_fired(void) { return g_fired.load(); }
// The function of recorded call `i` ("open64", "ioctl", ...), or NULL.
EXPORT const char *cldmabuf_fault_call_name(long i) {
    return i >= 0 && i < kMaxRecorded && i < g_calls.load() ? g_names[i] : nullptr;
}
// The request of recorded call `i` when it was an ioctl, else 0.
EXPORT unsigned long cldmabuf_fault_call_request(long i) {
    return i >= 0 && i < kMaxRecorded && i < g_calls.load() ? g_requests[i] : 0;
}

// ---- the wrapped calls --------------------------------------------------------

EXPORT int open64(const char *path, int flags, ...) {
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = static_cast<mode_t>(va_arg(ap, int));
        va_end(ap);
    }
    if (inject("open", CALLER)) return -1;
    return next<int (*)(const char *, int, ...)>("open64")(path, flags, mode);
}

EXPORT int close(int fd) {
    const bool fail = inject("close", CALLER);
    const int ret = next<int (*)(int)>("close")(fd);
    if (!fail) return ret;
    return -1;  // errno set by inject(); the fd is gone either way, as on Linux
}

EXPORT int fcntl64(int fd, int cmd, ...) {
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    if (inject("fcntl", CALLER)) return -1;
    return next<int (*)(int, int, ...)>("fcntl64")(fd, cmd, arg);
}

EXPORT int ioctl(int fd, unsigned long request, ...) noexcept {
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    auto real = next<int (*)(int, unsigned long, ...)>("ioctl");
    const bool releases = request == DRM_IOCTL_GEM_CLOSE || request == DRM_IOCTL_I915_GEM_CONTEXT_DESTROY;
    if (!inject("ioctl", CALLER, true, request)) return real(fd, request, arg);
    if (!releases) return -1;
    const int err = errno;
    real(fd, request, arg);
    errno = err;
    return -1;
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off) noexcept {
    if (inject("mmap", CALLER)) return MAP_FAILED;
    return next<void *(*)(void *, size_t, int, int, int, off64_t)>("mmap64")(addr, len, prot, flags, fd, off);
}

EXPORT int munmap(void *addr, size_t len) noexcept {
    inject("munmap", CALLER, /*may_fail=*/false);
    return next<int (*)(void *, size_t)>("munmap")(addr, len);
}

EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout) {
    if (inject("poll", CALLER)) return -1;
    return next<int (*)(struct pollfd *, nfds_t, int)>("poll")(fds, n, timeout);
}

EXPORT off64_t lseek64(int fd, off64_t off, int whence) noexcept {
    if (inject("lseek", CALLER)) return -1;
    return next<off64_t (*)(int, off64_t, int)>("lseek64")(fd, off, whence);
}

EXPORT int fstatfs64(int fd, struct statfs64 *buf) noexcept {
    if (inject("fstatfs", CALLER)) return -1;
    return next<int (*)(int, struct statfs64 *)>("fstatfs64")(fd, buf);
}

EXPORT int fstat64(int fd, struct stat64 *buf) noexcept {
    if (inject("fstat", CALLER)) return -1;
    return next<int (*)(int, struct stat64 *)>("fstat64")(fd, buf);
}

EXPORT int stat64(const char *path, struct stat64 *buf) noexcept {
    if (inject("stat", CALLER)) return -1;
    return next<int (*)(const char *, struct stat64 *)>("stat64")(path, buf);
}

EXPORT ssize_t read(int fd, void *buf, size_t n) {
    if (inject("read", CALLER)) return -1;
    return next<ssize_t (*)(int, void *, size_t)>("read")(fd, buf, n);
}
