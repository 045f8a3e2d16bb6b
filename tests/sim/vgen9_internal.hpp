// Internal seam between the libc hooks (vgen9_hooks.cpp) and the device
// model (vgen9_device.cpp and the files it dispatches to, vgen9_model.hpp).
// Not installed, not used by the layer.
#pragma once

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <time.h>

#include <cstdint>
#include <string>

namespace vgen9sim {

// The real libc functions (dlsym(RTLD_NEXT)).  Sim code must only call
// these, never the hooked names, to avoid re-entering the model.
struct Real {
    int (*open)(const char *, int, ...);
    int (*openat)(int, const char *, int, ...);
    int (*close)(int);
    int (*ioctl)(int, unsigned long, ...);
    void *(*mmap)(void *, size_t, int, int, int, off_t);
    // The sim is built with a 32-bit off_t where that is the default (it
    // hooks both forms); mappings go through the 64-bit-offset form, so a
    // GEM fake offset above 4 GiB survives on 32-bit targets.
    void *(*mmap64)(void *, size_t, int, int, int, off64_t);
    int (*munmap)(void *, size_t);
    int (*dup)(int);
    int (*dup2)(int, int);
    int (*dup3)(int, int, int);
    int (*fcntl)(int, int, ...);
    int (*poll)(struct pollfd *, nfds_t, int);
    int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
    off_t (*lseek)(int, off_t, int);
    int (*fstat)(int, struct stat *);
    int (*stat)(const char *, struct stat *);
    int (*fstatfs)(int, struct statfs *);
};
Real &real();

void log_event(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// ---- device model entry points (vgen9_device.cpp; poll: vgen9_poll.cpp) ----
// Is fd one of ours (device, exported dma-buf, sync_file)?  Cheap.
bool is_tracked(int fd);
// Open the fake render node; returns an fd or -1/errno.
int device_open(int flags);
// open("/sys/kernel/debug/sync/sw_sync") where the real one cannot be reached
// (vgen9_sw_sync.cpp): 1 handled (fd or -1/errno in *out), 0 leave it to the kernel.
int sw_sync_open(int flags, int *out);
// Called before the real close(fd).
void on_close(int fd);
// close_range()/closefrom(): forget every tracked fd in [first, last].
void on_close_range(unsigned first, unsigned last);
// Called after a successful dup of oldfd into newfd (newfd may have been a
// tracked fd that the dup implicitly closed: on_close(newfd) first).
void on_dup(int oldfd, int newfd);
// An fd that came in over a Unix socket (SCM_RIGHTS, vgen9_fd_passing.cpp):
// if it is the same open file as a tracked fd (same inode), track it as a dup
// of that one, as the kernel would hand over the same dma-buf.
void on_received(int newfd);
// ioctl on any fd: returns true if the sim handled it (*ret = 0 or -errno).
bool handle_ioctl(int fd, unsigned long request, void *arg, int *ret);
// mmap on a sim fd: returns true if handled (*out = mapping or MAP_FAILED with errno).
bool handle_mmap(void *addr, size_t len, int prot, int flags, int fd, off64_t off, void **out);
void on_munmap(void *addr, size_t len);
// lseek on an exported dma-buf: true if handled.
bool handle_lseek(int fd, off_t off, int whence, off_t *ret);
// fstatfs: true if handled (exported dma-bufs report DMA_BUF_MAGIC).
bool handle_fstatfs(int fd, struct statfs *buf);
// /proc/self/fdinfo/<fd> of a dma-buf the sim exported: true and the text
// the kernel would print (dma_buf_show_fdinfo: size, count, exp_name).
bool dmabuf_fdinfo(int fd, std::string *out);
// fstat of a device fd: true if handled (character device 226:minor).
bool handle_fstat(int fd, struct stat *st);
// poll/ppoll with dma-buf emulation. timeout_ns < 0 = infinite.
int poll_impl(struct pollfd *fds, nfds_t n, int64_t timeout_ns, const sigset_t *mask);
bool poll_needs_sim(const struct pollfd *fds, nfds_t n);
// A poll on the sim's sync_file fds (real eventfds underneath): the same
// real poll, the calling thread counted as a fence waiter meanwhile.
int poll_sync_files(struct pollfd *fds, nfds_t n, int64_t timeout_ns, const sigset_t *mask, bool *handled);
// The threads polling the sim's fences now, and of those the ones whose
// every fence is still pending (their wait cannot end by itself).
void fence_waiters(uint64_t out[2]);

int node_minor();
const std::string &node_path();

}  // namespace vgen9sim
