// PRIME on the virtual Gen9's render node: exporting a GEM object as a
// dma-buf fd (a new open file description of its memfd) and importing a
// dma-buf fd, ours or a real one (then mapped and tracked by inode).
//
// Kernel citations use the tags of /work/shared/reference/gen9-blt-i915.md:
// [K] freebsd/drm-kmod (port of Linux i915), [KB] intel-gpu-i915-backports.
#undef _FILE_OFFSET_BITS
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "vgen9_ioctl_table.hpp"

#ifndef DMA_BUF_MAGIC
#define DMA_BUF_MAGIC 0x444d4142
#endif

namespace vgen9sim {

int ioctl_prime_handle_to_fd(IoctlCall &c) {
    State &s = c.s;
    File &file = *c.file;
    auto *p = static_cast<drm_prime_handle *>(c.arg);
    if (p->flags & ~(DRM_CLOEXEC | DRM_RDWR)) return -EINVAL;
    ObjectP o = lookup(file, p->handle);
    if (!o) return -ENOENT;
    int cloexec = (p->flags & DRM_CLOEXEC) ? O_CLOEXEC : 0;
    int fd;
    if (o->foreign) {  // re-export returns the original dma-buf
        fd = real().fcntl(o->foreign_fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
        if (fd < 0) return -errno;
        p->fd = fd;
        return 0;
    }
    if (o->userptr) {
        log_event("PRIME export of a userptr object not modelled");
        return -ENODEV;
    }
    // A new open file description of the object's memfd, read-only unless
    // DRM_RDWR, like the kernel's dma-buf file f_mode.
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", o->memfd);
    fd = real().open(path, ((p->flags & DRM_RDWR) ? O_RDWR : O_RDONLY) | cloexec);
    if (fd < 0) return -errno;
    s.dmabuf_fds[fd] = o;
    p->fd = fd;
    return 0;
}

int ioctl_prime_fd_to_handle(IoctlCall &c) {
    State &s = c.s;
    File &file = *c.file;
    auto *p = static_cast<drm_prime_handle *>(c.arg);
    auto it = s.dmabuf_fds.find(p->fd);
    ObjectP o;
    if (it != s.dmabuf_fds.end()) {
        o = it->second;
    } else {
        // dma_buf_get(): -EBADF for a closed fd, -EINVAL for a file that
        // is not a dma-buf ([KB] drivers/dma-buf/dma-buf.c, dma_buf_get).
        struct stat st;
        if (real().fstat(p->fd, &st) != 0) return -EBADF;
        auto bi = s.by_inode.find({st.st_dev, st.st_ino});
        if (bi != s.by_inode.end()) o = bi->second.lock();
        if (o && !o->foreign) {
            s.dmabuf_fds[p->fd] = o;  // one of ours that travelled (e.g. SCM_RIGHTS)
        } else if (!o) {
            struct statfs sf;
            if (real().fstatfs(p->fd, &sf) != 0) return -EBADF;
            if ((unsigned long)sf.f_type != DMA_BUF_MAGIC) return -EINVAL;
            off_t size = real().lseek(p->fd, 0, SEEK_END);
            real().lseek(p->fd, 0, SEEK_SET);
            if (size <= 0) return -EINVAL;
            o = std::make_shared<Object>();
            o->foreign = true;
            o->size = (uint64_t)size;
            o->foreign_fd = real().fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
            void *m = real().mmap(nullptr, o->size, PROT_READ | PROT_WRITE, MAP_SHARED,
                                  o->foreign_fd, 0);
            if (m == MAP_FAILED) {
                m = real().mmap(nullptr, o->size, PROT_READ, MAP_SHARED, o->foreign_fd, 0);
                o->readonly = true;
            }
            if (m == MAP_FAILED) {
                log_event("import of a real dma-buf without mmap support not modelled");
                return -EINVAL;
            }
            o->host = (uint8_t *)m;
            o->host_owned = true;
            ++g_stats.mappings;
            o->dev = st.st_dev;
            o->ino = st.st_ino;
            s.by_inode[{o->dev, o->ino}] = o;
            s.any_foreign = true;
            log_event("imported a real dma-buf (%llu bytes)", (unsigned long long)o->size);
        }
    }
    p->handle = file.handle_of(o);
    return 0;
}

}  // namespace vgen9sim
