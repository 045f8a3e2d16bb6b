#include "layer/base/kernel_ops.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "layer/base/log.hpp"

namespace cldmabuf {
namespace {

class LibcKernel final : public KernelOps {
public:
    int open(const char *path, int flags) override { return ::open(path, flags | O_CLOEXEC); }
    int close(int fd) override { return ::close(fd); }
    int dup(int fd) override { return ::fcntl(fd, F_DUPFD_CLOEXEC, 0); }
    int ioctl(int fd, unsigned long request, void *arg) override { return ::ioctl(fd, request, arg); }
    void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset) override {
        return ::mmap(addr, len, prot, flags, fd, offset);
    }
    int munmap(void *addr, size_t len) override { return ::munmap(addr, len); }
    int poll(struct pollfd *fds, nfds_t nfds, int timeout_ms) override {
        return ::poll(fds, nfds, timeout_ms);
    }
    off_t lseek(int fd, off_t offset, int whence) override { return ::lseek(fd, offset, whence); }
    int fstatfs(int fd, struct statfs *buf) override { return ::fstatfs(fd, buf); }
    std::vector<std::string> list_dir(const char *path) override {
        std::vector<std::string> names;
        DIR *dir = ::opendir(path);
        if (!dir) return names;
        while (struct dirent *entry = ::readdir(dir)) {
            std::string name = entry->d_name;
            if (name != "." && name != "..") names.push_back(std::move(name));
        }
        ::closedir(dir);
        return names;
    }
    int fstat(int fd, struct stat *buf) override { return ::fstat(fd, buf); }
    int stat(const char *path, struct stat *buf) override { return ::stat(path, buf); }
    std::string real_path(const char *path) override {
        char resolved[PATH_MAX];
        return ::realpath(path, resolved) ? std::string(resolved) : std::string();
    }
    int read_file(const char *path, std::string *out) override {
        const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return -1;
        out->clear();
        char buf[4096];
        for (;;) {
            const ssize_t n = ::read(fd, buf, sizeof buf);
            if (n > 0 && out->size() < (64u << 10)) {
                out->append(buf, static_cast<size_t>(n));
                continue;
            }
            const int err = errno;
            ::close(fd);
            if (n < 0) {
                errno = err;
                return -1;
            }
            return 0;
        }
    }
    int memfd_create(const char *name, unsigned flags) override { return ::memfd_create(name, flags | MFD_CLOEXEC); }
    int ftruncate(int fd, off_t length) override { return ::ftruncate(fd, length); }
    int add_seals(int fd, int seals) override { return ::fcntl(fd, F_ADD_SEALS, seals); }
};

LibcKernel libc_kernel;
std::atomic<KernelOps *> current_ops{&libc_kernel};

}  // namespace

int KernelOps::fstat(int, struct stat *) {
    errno = ENOSYS;
    return -1;
}

int KernelOps::read_file(const char *, std::string *) {
    errno = ENOSYS;
    return -1;
}

int KernelOps::memfd_create(const char *, unsigned) {
    errno = ENOSYS;
    return -1;
}

int KernelOps::ftruncate(int, off_t) {
    errno = ENOSYS;
    return -1;
}

int KernelOps::add_seals(int, int) {
    errno = ENOSYS;
    return -1;
}

KernelOps &kernel() { return *current_ops.load(std::memory_order_acquire); }

void set_kernel(KernelOps *ops) {
    current_ops.store(ops ? ops : &libc_kernel, std::memory_order_release);
}

int kernel_ioctl_retry(int fd, unsigned long request, void *arg) {
    // EINTR is retried at once (a signal landed); EAGAIN (a busy engine or
    // ring) after a short backoff.  Both are bounded: a kernel or a fake that
    // keeps answering them must fail the command, not spin the worker forever.
    int backoff_us = 50;
    for (int attempt = 0;; ++attempt) {
        const int ret = kernel().ioctl(fd, request, arg);
        if (ret != -1 || (errno != EINTR && errno != EAGAIN)) return ret;
        if (attempt >= ioctl_retry_limit) {
            const int err = errno;
            LOG_ERROR("ioctl 0x%lx on fd %d still fails with %s after %d retries", request, fd, std::strerror(err),
                      ioctl_retry_limit);
            errno = err;
            return -1;
        }
        if (errno == EAGAIN) {
            const int err = errno;
            ::usleep(static_cast<useconds_t>(backoff_us));
            backoff_us = backoff_us * 2 > 10000 ? 10000 : backoff_us * 2;
            errno = err;
        }
    }
}

int kernel_poll_bounded(int fd, short events, int timeout_ms, short *revents) {
    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
        pollfd p{fd, events, 0};
        const int n = kernel().poll(&p, 1, left > 0 ? static_cast<int>(left) : 0);
        if (n > 0) {
            *revents = p.revents;
            return 1;
        }
        if (n == 0) return 0;
        if (errno != EINTR && errno != EAGAIN) return -errno;
        if (clock::now() >= deadline) return 0;
    }
}

}  // namespace cldmabuf
