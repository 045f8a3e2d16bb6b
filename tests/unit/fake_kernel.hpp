// A scripted KernelOps for unit tests of the layer's kernel calls.
#pragma once

#include <cerrno>
#include <deque>
#include <functional>
#include <map>
#include <mutex>

#include "layer/base/kernel_ops.hpp"

namespace unit {

struct FakeKernel : cldmabuf::KernelOps {
    std::map<int, long> fs_magic;                 // fd -> f_type; missing = EBADF
    std::map<int, off_t> sizes;                   // fd -> dma-buf size
    std::deque<int> ioctl_errnos;                 // errno for the next ioctls (0 = success)
    std::vector<std::pair<unsigned long, uint64_t>> ioctls;  // request, first u64 of the argument
    std::vector<int> ioctl_fds;                   // the fd of each of them
    // Runs inside ioctl (after it was recorded, outside the fake's lock): a
    // test parks a call there (a SYNC START that waits in the kernel).
    std::function<void(int fd, unsigned long request, uint64_t first)> on_ioctl;
    std::mutex mutex;  // the records above: the layer calls in from several threads
    std::function<int(struct pollfd *, int)> on_poll = [](struct pollfd *p, int) { p->revents = p->events; return 1; };
    int polls = 0;

    int open(const char *, int) override { errno = ENOENT; return -1; }
    int close(int) override { return 0; }
    int dup(int fd) override { return fd + 100; }
    int ioctl(int fd, unsigned long request, void *arg) override {
        const uint64_t first = *static_cast<uint64_t *>(arg);
        int e = 0;
        {
            std::lock_guard lock(mutex);
            ioctls.emplace_back(request, first);
            ioctl_fds.push_back(fd);
            if (!ioctl_errnos.empty()) {
                e = ioctl_errnos.front();
                ioctl_errnos.pop_front();
            }
        }
        if (on_ioctl) on_ioctl(fd, request, first);
        if (e) { errno = e; return -1; }
        return 0;
    }
    void *mmap(void *, size_t, int, int, int, off_t) override { errno = ENODEV; return reinterpret_cast<void *>(-1); }
    int munmap(void *, size_t) override { return 0; }
    int poll(struct pollfd *fds, nfds_t, int timeout_ms) override {
        {
            std::lock_guard lock(mutex);
            ++polls;
        }
        return on_poll(fds, timeout_ms);
    }
    off_t lseek(int fd, off_t off, int whence) override {
        auto it = sizes.find(fd);
        if (it == sizes.end()) { errno = ESPIPE; return -1; }
        return whence == SEEK_END ? it->second : off;
    }
    int fstatfs(int fd, struct statfs *st) override {
        auto it = fs_magic.find(fd);
        if (it == fs_magic.end()) { errno = EBADF; return -1; }
        st->f_type = it->second;
        return 0;
    }
    std::vector<std::string> list_dir(const char *) override { return {}; }
    int stat(const char *, struct stat *) override { errno = ENOENT; return -1; }
    std::string real_path(const char *) override { errno = ENOENT; return {}; }
};

// Installs a fake for one test's scope.
struct ScopedKernel {
    explicit ScopedKernel(cldmabuf::KernelOps *k) { cldmabuf::set_kernel(k); }
    ~ScopedKernel() { cldmabuf::set_kernel(nullptr); }
};

}  // namespace unit
