// The virtual Gen9's state: the CLDMABUF_SIM_* configuration read at load,
// fault injection, and the object/handle helpers every ioctl handler uses.
#undef _FILE_OFFSET_BITS
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vgen9_model.hpp"

namespace vgen9sim {

std::atomic<bool> g_log{false};
Stats g_stats;
// The exporter name fdinfo reports for the sim's dma-bufs: "i915", like
// i915_gem_prime_export; tests set another to play a foreign exporter.
std::string g_export_name = "i915";  // under S().mu

State &S() {
    static State *s = [] {
        auto *st = new State();  // never destroyed: hooks may run during exit
        const char *e;
        if ((e = getenv("CLDMABUF_SIM_LOG")) && *e && *e != '0') st->env_cfg.log = true;
        if ((e = getenv("CLDMABUF_SIM_DELAY_MS"))) st->env_cfg.delay_ms = (unsigned)atoi(e);
        if ((e = getenv("CLDMABUF_SIM_MANUAL")) && *e && *e != '0') st->env_cfg.manual = true;
        if ((e = getenv("CLDMABUF_SIM_NO_PREEMPTION")) && *e && *e != '0')
            st->env_cfg.no_preemption = true;
        if ((e = getenv("CLDMABUF_SIM_WATCH_SYNCS")) && *e && *e != '0') st->watch_foreign_syncs = true;
        if ((e = getenv("CLDMABUF_SIM_HANG_NEXT"))) st->env_cfg.hang_next = (unsigned)atoi(e);
        if ((e = getenv("CLDMABUF_SIM_NEVER_SIGNAL_NEXT")))
            st->env_cfg.never_next = (unsigned)atoi(e);
        if ((e = getenv("CLDMABUF_SIM_FAIL_IOCTL"))) {
            std::string s(e);
            size_t pos = 0;
            while (pos < s.size()) {
                size_t end = s.find(',', pos);
                std::string item = s.substr(pos, end == std::string::npos ? end : end - pos);
                unsigned long req = 0;
                unsigned nth = 0;
                char name[32] = {0};
                if (sscanf(item.c_str(), "%li:%u:%31s", (long *)&req, &nth, name) == 3) {
                    static const std::pair<const char *, int> names[] = {
                            {"EINTR", EINTR}, {"EAGAIN", EAGAIN}, {"ENOMEM", ENOMEM},
                            {"ENOSPC", ENOSPC}, {"EIO", EIO},     {"EINVAL", EINVAL},
                            {"EBUSY", EBUSY}, {"ENODEV", ENODEV}, {"EFAULT", EFAULT}};
                    int err = atoi(name);
                    for (auto &[n, v] : names)
                        if (!strcmp(n, name)) err = v;
                    if (err > 0) st->env_cfg.fails.push_back({req, nth, err});
                }
                if (end == std::string::npos) break;
                pos = end + 1;
            }
        }
        st->cfg = st->env_cfg;
        g_log = st->cfg.log;
        return st;
    }();
    return *s;
}

int inject(State &s, unsigned long req) {
    std::lock_guard<std::mutex> l(s.mu);
    for (auto it = s.cfg.fails.begin(); it != s.cfg.fails.end(); ++it) {
        if (it->req != req) continue;
        if (it->countdown == 0) return it->err;
        if (--it->countdown == 0) {
            int e = it->err;
            s.cfg.fails.erase(it);
            return e;
        }
    }
    return 0;
}

FenceP new_fence_fd(State &s, FenceP f, int *fd_out) {
    // Caller holds s.mu.  A sync_file fd is a dup of the fence's eventfd, so
    // poll() on it is real (POLLIN when the counter becomes non-zero).
    int fd = real().fcntl(f->efd, F_DUPFD_CLOEXEC, 0);
    *fd_out = fd;
    if (fd >= 0) s.sync_fds[fd] = f;
    return f;
}

ObjectP lookup(File &f, uint32_t h) {
    auto it = f.handles.find(h);
    return it == f.handles.end() ? nullptr : it->second;
}

ObjectP new_native(State &s, uint64_t size, int *err) {
    auto o = std::make_shared<Object>();
    o->size = page_round(size);
    o->memfd = memfd_create("vgen9-gem", MFD_CLOEXEC);
    if (o->memfd < 0) {
        *err = -errno;
        return nullptr;
    }
    ++g_stats.memfds;
    if (ftruncate(o->memfd, (off_t)o->size) != 0) {
        *err = -ENOMEM;
        return nullptr;
    }
    void *p = real().mmap(nullptr, o->size, PROT_READ | PROT_WRITE, MAP_SHARED, o->memfd, 0);
    if (p == MAP_FAILED) {
        *err = -ENOMEM;
        return nullptr;
    }
    o->host = (uint8_t *)p;
    o->host_owned = true;
    ++g_stats.mappings;
    struct stat st;
    if (real().fstat(o->memfd, &st) == 0) {
        o->dev = st.st_dev;
        o->ino = st.st_ino;
        s.by_inode[{o->dev, o->ino}] = o;
    }
    o->mmap_base = s.next_mmap;
    s.next_mmap += o->size + kPage;
    s.mmap_offsets[o->mmap_base] = o;
    return o;
}

ObjectP foreign_by_fd(State &s, int fd) {
    // Caller holds s.mu.  A real dma-buf previously imported (matched by inode).
    if (!s.any_foreign) return nullptr;
    struct stat st;
    if (real().fstat(fd, &st) != 0) return nullptr;
    auto it = s.by_inode.find({st.st_dev, st.st_ino});
    if (it == s.by_inode.end()) return nullptr;
    ObjectP o = it->second.lock();
    return (o && o->foreign) ? o : nullptr;
}

}  // namespace vgen9sim
