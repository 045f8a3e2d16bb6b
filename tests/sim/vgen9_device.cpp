// The virtual Gen9 device: which fds are its own (render node, exported
// dma-bufs, sync_files), the dispatch of an ioctl on one of them through the
// tables of vgen9_ioctl_table.cpp (fault injection first), and the other
// file operations the libc hooks forward (mmap, lseek, fstatfs, fstat,
// /proc/self/fdinfo).  Test instrument; see docs/virtual-gen9.md for what is
// and is not modelled, with citations.
//
// Kernel citations use the tags of /work/shared/reference/gen9-blt-i915.md:
// [K] freebsd/drm-kmod (port of Linux i915), [KB] intel-gpu-i915-backports.
#undef _FILE_OFFSET_BITS
#include <errno.h>
#include <fcntl.h>
#include <linux/ioctl.h>  // _IOWR behind the DMA_BUF_IOCTL_* numbers (issue #29)
#include <linux/dma-buf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "vgen9_ioctl_table.hpp"

#ifndef DMA_BUF_MAGIC
#define DMA_BUF_MAGIC 0x444d4142
#endif

namespace vgen9sim {
namespace {

// Plain data, constant-initialised: a hook can run before this library's own
// constructors (another library's constructor that stats or opens a file, as
// FFmpeg's libraries do), and a std::string here would be reset by its
// constructor after that first call had filled it in.
int g_minor = -1;
char g_node[32];

// The answer of a tracked fd's kind when the table has no entry for `req`.
int unmodelled(IoctlCall &c) {
    if (c.file) {
        log_event("ioctl 0x%lx on the render node not modelled -> -EINVAL", c.req);
        return -EINVAL;
    }
    if (c.obj && c.obj->foreign) {
        c.passthrough = true;
        return 0;
    }
    return -ENOTTY;
}

}  // namespace

// ==================================================================== API
void log_event(const char *fmt, ...) {
    if (!g_log.load(std::memory_order_relaxed)) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "vgen9: %s\n", buf);
}

int node_minor() {
    if (g_minor < 0) {
        // The first render minor whose node and sysfs entry do not exist for
        // real (a Debian 13 VM may have vgem at renderD128).
        int m = 128;
        for (; m < 192; ++m) {
            char p[64], q[64];
            struct stat st;
            snprintf(p, sizeof p, "/dev/dri/renderD%d", m);
            snprintf(q, sizeof q, "/sys/dev/char/226:%d", m);
            if (real().stat(p, &st) != 0 && real().stat(q, &st) != 0) break;
        }
        snprintf(g_node, sizeof g_node, "/dev/dri/renderD%d", m);
        g_minor = m;
    }
    return g_minor;
}
const std::string &node_path() {
    static const std::string path = (node_minor(), std::string(g_node));
    return path;
}

bool is_tracked(int fd) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    return s.dev_fds.count(fd) || s.dmabuf_fds.count(fd) || s.sync_fds.count(fd) || s.sw_sync_fds.count(fd);
}

int device_open(int flags) {
    State &s = S();
    int fd = memfd_create("vgen9-render-node", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
    if (fd < 0) return -1;
    std::lock_guard<std::mutex> l(s.mu);
    s.dev_fds[fd] = std::make_shared<File>();
    log_event("open %s -> fd %d", node_path().c_str(), fd);
    return fd;
}

void on_close(int fd) {
    State &s = S();
    FileP f;
    ObjectP o;
    FenceP fe;
    TimelineP tl;
    {
        std::lock_guard<std::mutex> l(s.mu);
        if (auto it = s.dev_fds.find(fd); it != s.dev_fds.end()) {
            f = std::move(it->second);
            s.dev_fds.erase(it);
        }
        if (auto it = s.dmabuf_fds.find(fd); it != s.dmabuf_fds.end()) {
            o = std::move(it->second);
            s.dmabuf_fds.erase(it);
            // Signalled fences go with a closing fd (the kernel drops them
            // lazily; invisible but for the eventfd each holds here): a
            // release's fence in a buffer another fd keeps open is no fd leak.
            o->prune();
        }
        if (auto it = s.sync_fds.find(fd); it != s.sync_fds.end()) {
            fe = std::move(it->second);
            s.sync_fds.erase(it);
        }
        if (auto it = s.sw_sync_fds.find(fd); it != s.sw_sync_fds.end()) {
            tl = std::move(it->second);
            s.sw_sync_fds.erase(it);
        }
    }
    // f/o/fe released here, outside the lock (may destroy objects).
}

void on_close_range(unsigned first, unsigned last) {
    State &s = S();
    std::vector<int> fds;
    {
        std::lock_guard<std::mutex> l(s.mu);
        auto collect = [&](auto &m) {
            for (auto it = m.lower_bound((int)std::min<unsigned>(first, INT32_MAX));
                 it != m.end() && (unsigned)it->first <= last; ++it)
                fds.push_back(it->first);
        };
        collect(s.dev_fds);
        collect(s.dmabuf_fds);
        collect(s.sync_fds);
        collect(s.sw_sync_fds);
    }
    for (int fd : fds) on_close(fd);
}

void on_dup(int oldfd, int newfd) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    if (auto it = s.dev_fds.find(oldfd); it != s.dev_fds.end()) s.dev_fds[newfd] = it->second;
    if (auto it = s.dmabuf_fds.find(oldfd); it != s.dmabuf_fds.end())
        s.dmabuf_fds[newfd] = it->second;
    if (auto it = s.sync_fds.find(oldfd); it != s.sync_fds.end()) s.sync_fds[newfd] = it->second;
    if (auto it = s.sw_sync_fds.find(oldfd); it != s.sw_sync_fds.end()) s.sw_sync_fds[newfd] = it->second;
}

void on_received(int newfd) {
    struct stat in{};
    if (real().fstat(newfd, &in) != 0) return;
    int same = -1;
    {
        State &s = S();
        std::lock_guard<std::mutex> l(s.mu);
        auto find = [&](auto &m) {
            for (auto &[fd, obj] : m) {
                struct stat st{};
                if (same < 0 && fd != newfd && real().fstat(fd, &st) == 0 && st.st_dev == in.st_dev &&
                    st.st_ino == in.st_ino)
                    same = fd;
            }
        };
        find(s.dmabuf_fds);
        find(s.sync_fds);
        find(s.dev_fds);
    }
    if (same >= 0) on_dup(same, newfd);
}

namespace {

// CLDMABUF_SIM_WATCH_SYNCS (State::watch_foreign_syncs): a real dma-buf's
// SYNC, counted as the sim's own are (before the kernel's answer: END's
// cache maintenance returns at once on the exporters the VM has), failed
// when a failure is armed for it, else left to the kernel.
bool watched_foreign_sync(State &s, std::unique_lock<std::mutex> &l, unsigned long req, void *arg, int *ret) {
    l.unlock();
    if (const int e = inject(s, req)) {
        log_event("ioctl 0x%lx on a real dma-buf: injected failure %s", req, strerror(e));
        *ret = -e;
        return true;
    }
    const auto *sy = static_cast<const dma_buf_sync *>(arg);
    ++((sy->flags & DMA_BUF_SYNC_END) ? g_stats.sync_ends : g_stats.sync_starts);
    return false;
}

}  // namespace

bool handle_ioctl(int fd, unsigned long req, void *arg, int *ret) {
    State &s = S();
    std::unique_lock<std::mutex> l(s.mu);
    IoctlCall c{s, l, req, arg, nullptr, nullptr, nullptr, false, nullptr};
    FileP f;  // keeps c.file alive across a handler that drops the lock
    std::span<const IoctlEntry> table;
    if (auto it = s.dev_fds.find(fd); it != s.dev_fds.end()) {
        f = it->second;
        c.file = f.get();
        table = render_node_ioctls();
    } else if (auto it2 = s.dmabuf_fds.find(fd); it2 != s.dmabuf_fds.end()) {
        c.obj = it2->second;
        table = dmabuf_ioctls();
    } else if (auto it3 = s.sync_fds.find(fd); it3 != s.sync_fds.end()) {
        c.fence = it3->second;
        table = sync_file_ioctls();
    } else if (auto it4 = s.sw_sync_fds.find(fd); it4 != s.sw_sync_fds.end()) {
        c.timeline = it4->second;
        table = sw_sync_ioctls();
    } else if (req == DMA_BUF_IOCTL_SYNC) {
        c.obj = foreign_by_fd(s, fd);
        if (!c.obj && s.watch_foreign_syncs) return watched_foreign_sync(s, l, req, arg, ret);
        table = dmabuf_ioctls();
    }
    if (!c.file && !c.obj && !c.fence && !c.timeline) return false;
    if (!c.obj || !c.obj->foreign) {
        l.unlock();
        int e = inject(s, req);
        l.lock();
        if (e) {
            log_event("ioctl 0x%lx: injected failure %s", req, strerror(e));
            *ret = -e;
            return true;
        }
    }
    const IoctlEntry *entry = find_ioctl(table, req);
    *ret = entry ? entry->fn(c) : unmodelled(c);
    // A real dma-buf's call goes on to the kernel unless the sim failed it.
    return !c.passthrough || *ret != 0;
}

bool handle_mmap(void *addr, size_t len, int prot, int flags, int fd, off64_t off, void **out) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    int target = -1;
    off64_t toff = off;
    if (s.dev_fds.count(fd)) {
        auto it = s.mmap_offsets.upper_bound((uint64_t)off);
        ObjectP o;
        if (it != s.mmap_offsets.begin()) o = std::prev(it)->second.lock();
        if (!o || (uint64_t)off < o->mmap_base || (uint64_t)off - o->mmap_base + len > o->size) {
            errno = EINVAL;
            *out = MAP_FAILED;
            return true;
        }
        target = o->memfd;
        toff = off - (off64_t)o->mmap_base;
    } else if (s.dmabuf_fds.count(fd)) {
        target = fd;
        if ((uint64_t)off + len > page_round(s.dmabuf_fds[fd]->size)) {
            errno = EINVAL;  // dma_buf_mmap_internal: beyond the buffer
            *out = MAP_FAILED;
            return true;
        }
    } else {
        return false;
    }
    void *p = real().mmap64(addr, len, prot, flags, target, toff);
    if (p != MAP_FAILED) {
        s.user_maps[(uintptr_t)p] = len;
        ++g_stats.mappings;
    }
    *out = p;
    return true;
}

void on_munmap(void *addr, size_t) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    auto it = s.user_maps.find((uintptr_t)addr);
    if (it != s.user_maps.end()) {
        s.user_maps.erase(it);
        --g_stats.mappings;
    }
}

bool handle_lseek(int fd, off_t off, int whence, off_t *ret) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    auto it = s.dmabuf_fds.find(fd);
    if (it == s.dmabuf_fds.end()) return false;
    // [KB] dma-buf.c dma_buf_llseek: only (0, SEEK_END) and (0, SEEK_SET).
    if ((whence != SEEK_END && whence != SEEK_SET) || off != 0) {
        errno = EINVAL;
        *ret = -1;
        return true;
    }
    *ret = whence == SEEK_END ? (off_t)it->second->size : 0;
    return true;
}

bool handle_fstatfs(int fd, struct statfs *buf) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    if (!s.dmabuf_fds.count(fd)) return false;
    memset(buf, 0, sizeof *buf);
    buf->f_type = DMA_BUF_MAGIC;
    buf->f_bsize = kPage;
    buf->f_namelen = 255;
    return true;
}

bool dmabuf_fdinfo(int fd, std::string *out) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    auto it = s.dmabuf_fds.find(fd);
    if (it == s.dmabuf_fds.end() || it->second->foreign) return false;  // a real dma-buf: the kernel answers
    // count: the dma-buf file's references as i915 has them: one per fd, one
    // while a GEM handle names the object (the exporter's cached dma_buf and
    // the PRIME handle lookup hold it); mappings none (i915's dma-buf mmap
    // points the VMA at the object's shmem file).
    long count = 0;
    for (auto &[f, o] : s.dmabuf_fds) count += o == it->second;
    bool handle = false;
    for (auto &[f, file] : s.dev_fds)
        for (auto &[h, o] : file->handles) handle |= o == it->second;
    char text[256];
    snprintf(text, sizeof text, "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t%lu\nsize:\t%llu\ncount:\t%ld\n"
             "exp_name:\t%s\nname:\t\n",
             (unsigned long)it->second->ino, (unsigned long long)it->second->size, count + (handle ? 1 : 0),
             g_export_name.c_str());
    *out = text;
    return true;
}

bool handle_fstat(int fd, struct stat *st) {
    State &s = S();
    std::lock_guard<std::mutex> l(s.mu);
    if (!s.dev_fds.count(fd)) return false;
    memset(st, 0, sizeof *st);
    st->st_mode = S_IFCHR | 0666;
    st->st_rdev = makedev(226, node_minor());
    st->st_dev = makedev(0, 5);
    st->st_ino = 1000 + node_minor();
    st->st_nlink = 1;
    st->st_blksize = 4096;
    return true;
}

}  // namespace vgen9sim
