// The one seam between the layer and the kernel.
//
// Every syscall the layer makes on a dma-buf, a DRM node or a sync_file goes
// through this interface, so the same code runs on a real kernel (the default,
// which calls libc and is therefore also what the LD_PRELOAD virtual Gen9
// intercepts) and on in-process fakes in unit tests.  Functions follow libc
// conventions: -1 (or MAP_FAILED) with errno set on failure.
#pragma once

#include <poll.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace cldmabuf {

class KernelOps {
public:
    virtual ~KernelOps() = default;
    virtual int open(const char *path, int flags) = 0;
    virtual int close(int fd) = 0;
    virtual int dup(int fd) = 0;  // always close-on-exec
    virtual int ioctl(int fd, unsigned long request, void *arg) = 0;
    virtual void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset) = 0;
    virtual int munmap(void *addr, size_t len) = 0;
    virtual int poll(struct pollfd *fds, nfds_t nfds, int timeout_ms) = 0;
    virtual off_t lseek(int fd, off_t offset, int whence) = 0;
    virtual int fstatfs(int fd, struct statfs *buf) = 0;
    // Names in a directory (for /dev/dri discovery); empty on error.
    virtual std::vector<std::string> list_dir(const char *path) = 0;
    // fstat(2): a dma-buf's inode identifies the buffer whatever fd names it
    // (layer/dmabuf/mapping_cache).  Fakes that do not answer it disable that cache.
    virtual int fstat(int fd, struct stat *buf);
    // stat(2) of a path (a DRM node's major:minor for its sysfs entry).
    virtual int stat(const char *path, struct stat *buf) = 0;
    // realpath(3): the canonical path with every symlink resolved (sysfs
    // device links name the PCI function); empty with errno on failure.
    virtual std::string real_path(const char *path) = 0;
    // The whole of a small text file (/proc/self/fdinfo/N: a dma-buf's
    // exp_name, layer/dmabuf/exporter.cpp).  0 or -1 with errno.  Fakes that do
    // not answer it leave every exporter unknown.
    virtual int read_file(const char *path, std::string *out);
    // The allocator's udmabuf exporter (layer/alloc/exporters.cpp): a sealed
    // memfd is what UDMABUF_CREATE turns into a dma-buf.  memfd_create(2)
    // (always close-on-exec), ftruncate(2), fcntl(F_ADD_SEALS).  Fakes that do
    // not answer them have no udmabuf exporter.
    virtual int memfd_create(const char *name, unsigned flags);
    virtual int ftruncate(int fd, off_t length);
    virtual int add_seals(int fd, int seals);
};

// The process-wide seam.  Defaults to the libc implementation.
KernelOps &kernel();
// Tests swap in a fake; pass nullptr to restore libc.  Not thread-safe
// against concurrent layer calls: swap before use.
void set_kernel(KernelOps *ops);

// ioctl retried on EINTR/EAGAIN, as libdrm's drmIoctl does, but at most
// ioctl_retry_limit times (EAGAIN with a backoff of 50 us doubling to 10 ms:
// under 0.6 s in all, within the default 1 s fence timeout).  Exhausted: -1 with
// the last errno (EINTR or EAGAIN) and one log line.
inline constexpr int ioctl_retry_limit = 64;
int kernel_ioctl_retry(int fd, unsigned long request, void *arg);

// The one bounded wait on an fd (fences, dma-bufs): poll for `events` until
// the fd is ready or `timeout_ms` has passed (0: look once), retrying
// EINTR/EAGAIN with the time that is left.  1 when ready (*revents set), 0 on
// timeout, -errno on error.  A negative timeout is taken as 0: no wait in the
// layer is unbounded.
int kernel_poll_bounded(int fd, short events, int timeout_ms, short *revents);

}  // namespace cldmabuf
