// libc interposition for the virtual Gen9 (LD_PRELOAD), in the manner of
// Mesa's drm-shim ([M] src/drm-shim/drm_shim.c:240-597): a fake render node,
// its sysfs PCI description for drmGetDevice2(), and the fd-level behaviour
// of dma-bufs and sync_files the sim hands out.  Every hook falls through to
// the real function (dlsym(RTLD_NEXT)) for anything that is not ours.
#undef _FILE_OFFSET_BITS
#undef _FORTIFY_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/close_range.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "vgen9_internal.hpp"

#define EXPORT extern "C" __attribute__((visibility("default")))

// The hooks re-define libc functions whose prototypes carry attributes meant
// for callers (a nonnull path, a write_only pollfd array).  A hook has to read
// what the caller passed and tolerate NULL like the kernel does, so those
// caller-side diagnostics do not apply here.
#pragma GCC diagnostic ignored "-Wnonnull-compare"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace vgen9sim {

// ------------------------------------------------------------ real libc
namespace {
Real g_real;
std::once_flag g_real_once;
void resolve_real() {
#define R(name) g_real.name = reinterpret_cast<decltype(g_real.name)>(dlsym(RTLD_NEXT, #name))
    R(open);
    R(openat);
    R(close);
    R(ioctl);
    R(mmap);
    R(mmap64);
    R(munmap);
    R(dup);
    R(dup2);
    R(dup3);
    R(fcntl);
    R(poll);
    R(ppoll);
    R(lseek);
    R(fstat);
    R(stat);
    R(fstatfs);
#undef R
}
}  // namespace

Real &real() {
    std::call_once(g_real_once, resolve_real);
    return g_real;
}

// ---------------------------------------------------------- fake tree
namespace {

struct Node {
    enum Type { Dir, File, Link, Chr } type;
    std::string data;     // file content or absolute link target
    std::string rel;      // readlink() text for links
};

// The PCI function the node sits on: CLDMABUF_SIM_PCI_SLOT=dddd:bb:dd.f, by
// default 0000:00:02.0 (where every Gen9 iGPU sits), so that tests can put
// the node somewhere else than the OpenCL device they pair it with.
const std::string &pci_slot() {
    static const std::string slot = [] {
        const char *e = getenv("CLDMABUF_SIM_PCI_SLOT");
        if (!e || !*e) return std::string("0000:00:02.0");
        const std::string v(e);
        if (v.size() == 12 && v[4] == ':' && v[7] == ':' && v[10] == '.') return v;
        fprintf(stderr, "vgen9: CLDMABUF_SIM_PCI_SLOT=%s is not dddd:bb:dd.f; using 0000:00:02.0\n", e);
        return std::string("0000:00:02.0");
    }();
    return slot;
}
// The root bus directory (pcidddd:bb) and the function's sysfs directory.
std::string pci_root() { return "pci" + pci_slot().substr(0, 7); }
const std::string &dev_dir() {
    static const std::string d = "/sys/devices/vgen9/" + pci_root() + "/" + pci_slot();
    return d;
}

std::map<std::string, Node> &tree() {
    static std::map<std::string, Node> *t = [] {
        auto *m = new std::map<std::string, Node>();
        int mi = node_minor();
        const std::string dev = dev_dir();
        std::string rn = "renderD" + std::to_string(mi);
        std::string sysc = "/sys/dev/char/226:" + std::to_string(mi);
        auto file = [&](const std::string &p, const std::string &c) { (*m)[p] = {Node::File, c, ""}; };
        auto dir = [&](const std::string &p) { (*m)[p] = {Node::Dir, "", ""}; };
        auto link = [&](const std::string &p, const std::string &t, const std::string &r) {
            (*m)[p] = {Node::Link, t, r};
        };
        (*m)[node_path()] = {Node::Chr, "", ""};
        link(sysc, dev + "/drm/" + rn, "../../devices/vgen9/" + pci_root() + "/" + pci_slot() + "/drm/" + rn);
        dir("/sys/devices/vgen9");
        dir("/sys/devices/vgen9/" + pci_root());
        dir(dev);
        // Skylake GT2, HD Graphics 520 ([K] i915_pciids.h:363-376).
        file(dev + "/vendor", "0x8086\n");
        file(dev + "/device", "0x1916\n");
        file(dev + "/subsystem_vendor", "0x8086\n");
        file(dev + "/subsystem_device", "0x2015\n");
        file(dev + "/revision", "0x07\n");
        file(dev + "/class", "0x030000\n");
        file(dev + "/uevent",
             "DRIVER=i915\nPCI_CLASS=30000\nPCI_ID=8086:1916\nPCI_SUBSYS_ID=8086:2015\n"
             "PCI_SLOT_NAME=" + pci_slot() + "\nMODALIAS=pci:v00008086d00001916sv00008086sd00002015bc03sc00i00\n");
        std::string cfg(256, '\0');
        auto put16 = [&](int off, unsigned v) {
            cfg[off] = (char)(v & 0xff);
            cfg[off + 1] = (char)(v >> 8);
        };
        put16(0x00, 0x8086);
        put16(0x02, 0x1916);
        cfg[0x08] = 0x07;                 // revision
        cfg[0x0b] = 0x03;                 // class: display controller
        put16(0x2c, 0x8086);
        put16(0x2e, 0x2015);
        file(dev + "/config", cfg);
        link(dev + "/subsystem", "/sys/bus/pci", "../../../../bus/pci");
        link(dev + "/driver", "/sys/bus/pci/drivers/i915", "../../../../bus/pci/drivers/i915");
        dir(dev + "/drm");
        dir(dev + "/drm/" + rn);
        file(dev + "/drm/" + rn + "/dev", "226:" + std::to_string(mi) + "\n");
        file(dev + "/drm/" + rn + "/uevent",
             "MAJOR=226\nMINOR=" + std::to_string(mi) + "\nDEVNAME=dri/" + rn + "\nDEVTYPE=drm_minor\n");
        link(dev + "/drm/" + rn + "/device", dev, "../../../" + pci_slot());
        link(dev + "/drm/" + rn + "/subsystem", "/sys/class/drm", "../../../../../../class/drm");
        return m;
    }();
    return *t;
}

bool has_prefix(const char *p, const std::string &pre) {
    size_t n = pre.size();
    return !strncmp(p, pre.c_str(), n) && (p[n] == 0 || p[n] == '/');
}

// Could `path` name something in the fake tree?  Cheap pre-filter.
bool maybe_ours(const char *path) {
    if (!path || path[0] != '/') return false;
    if (strncmp(path, "/dev/dri", 8) && strncmp(path, "/sys/de", 7)) return false;
    static std::string sysc = "/sys/dev/char/226:" + std::to_string(node_minor());
    return has_prefix(path, node_path()) || has_prefix(path, sysc) || has_prefix(path, dev_dir()) ||
           has_prefix(path, "/sys/devices/vgen9");
}

// Lexical resolution inside the fake tree.  Returns the canonical path.
std::string resolve(const char *path, bool follow_last) {
    std::vector<std::string> comps;
    std::string s(path);
    size_t i = 0;
    while (i < s.size()) {
        size_t j = s.find('/', i);
        if (j == std::string::npos) j = s.size();
        std::string c = s.substr(i, j - i);
        if (!c.empty() && c != ".") comps.push_back(c);
        i = j + 1;
    }
    auto &t = tree();
    std::string cur;
    for (int guard = 0; guard < 40; ++guard) {
        cur.clear();
        bool restarted = false;
        for (size_t k = 0; k < comps.size(); ++k) {
            if (comps[k] == "..") {
                size_t sl = cur.rfind('/');
                cur = sl == std::string::npos ? "" : cur.substr(0, sl);
                continue;
            }
            cur += "/" + comps[k];
            auto it = t.find(cur);
            bool last = k + 1 == comps.size();
            if (it != t.end() && it->second.type == Node::Link && (!last || follow_last)) {
                std::vector<std::string> nc;
                std::string tg = it->second.data;
                size_t a = 1;
                while (a < tg.size()) {
                    size_t b = tg.find('/', a);
                    if (b == std::string::npos) b = tg.size();
                    nc.push_back(tg.substr(a, b - a));
                    a = b + 1;
                }
                nc.insert(nc.end(), comps.begin() + (long)k + 1, comps.end());
                comps = nc;
                restarted = true;
                break;
            }
        }
        if (!restarted) break;
    }
    return cur.empty() ? "/" : cur;
}

const Node *find_node(const std::string &canon) {
    auto &t = tree();
    auto it = t.find(canon);
    return it == t.end() ? nullptr : &it->second;
}

void fill_stat(const Node &n, const std::string &canon, struct stat *st) {
    memset(st, 0, sizeof *st);
    st->st_dev = makedev(0, 0x42);
    st->st_ino = std::hash<std::string>()(canon) & 0xffffffff;
    st->st_nlink = 1;
    st->st_blksize = 4096;
    switch (n.type) {
    case Node::Dir: st->st_mode = S_IFDIR | 0755; st->st_nlink = 2; break;
    case Node::File: st->st_mode = S_IFREG | 0444; st->st_size = 4096; break;
    case Node::Link: st->st_mode = S_IFLNK | 0777; st->st_size = (off_t)n.rel.size(); break;
    case Node::Chr:
        st->st_mode = S_IFCHR | 0666;
        st->st_rdev = makedev(226, node_minor());
        st->st_dev = makedev(0, 5);
        break;
    }
}

// 1 handled ok, 0 not ours, -1 handled with errno
int fake_stat(const char *path, struct stat *st, bool follow) {
    if (!path) return 0;
    if (!strcmp(path, "/dev/dri") || !strcmp(path, "/dev/dri/")) {
        if (real().stat("/dev/dri", st) == 0) return 0;
        memset(st, 0, sizeof *st);
        st->st_mode = S_IFDIR | 0755;
        st->st_nlink = 2;
        st->st_ino = 4242;
        return 1;
    }
    if (!maybe_ours(path)) return 0;
    std::string c = resolve(path, follow);
    const Node *n = find_node(c);
    if (!n) {
        if (maybe_ours(c.c_str())) {
            errno = ENOENT;
            return -1;
        }
        return real().stat(c.c_str(), st) == 0 ? 1 : -1;  // e.g. /sys/bus/pci
    }
    fill_stat(*n, c, st);
    return 1;
}

int content_fd(const std::string &data) {
    int fd = memfd_create("vgen9-sysfs", MFD_CLOEXEC);
    if (fd < 0) return -1;
    size_t off = 0;
    while (off < data.size()) {
        ssize_t w = write(fd, data.data() + off, data.size() - off);
        if (w <= 0) break;
        off += (size_t)w;
    }
    real().lseek(fd, 0, SEEK_SET);
    return fd;
}

// /proc/self/fdinfo/N or /proc/<our pid>/fdinfo/N: N, else -1.
int fdinfo_fd(const char *path) {
    if (!path || strncmp(path, "/proc/", 6)) return -1;
    const char *p = path + 6;
    const std::string pid = std::to_string(getpid()) + "/";
    if (!strncmp(p, "self/", 5)) p += 5;
    else if (!strncmp(p, pid.c_str(), pid.size())) p += pid.size();
    else return -1;
    if (strncmp(p, "fdinfo/", 7)) return -1;
    p += 7;
    char *end = nullptr;
    const long fd = strtol(p, &end, 10);
    return end != p && *end == 0 && fd >= 0 && fd < INT_MAX ? (int)fd : -1;
}

// 1 handled (fd in *out or -1/errno), 0 not ours
int fake_open(const char *path, int flags, int *out) {
    if (path && !strcmp(path, "/sys/kernel/debug/sync/sw_sync")) return sw_sync_open(flags, out);
    // A dma-buf's fdinfo names its exporter (dma_buf_show_fdinfo); the
    // sim's exports are memfds underneath, whose real fdinfo has no exp_name.
    if (int fd = fdinfo_fd(path); fd >= 0) {
        std::string text;
        if (!dmabuf_fdinfo(fd, &text)) return 0;
        *out = content_fd(text);
        if (*out >= 0 && !(flags & O_CLOEXEC)) {
            int fl = real().fcntl(*out, F_GETFD);
            real().fcntl(*out, F_SETFD, fl & ~FD_CLOEXEC);
        }
        return 1;
    }
    if (!maybe_ours(path)) return 0;
    std::string c = resolve(path, true);
    if (c == node_path()) {
        *out = device_open(flags);
        return 1;
    }
    const Node *n = find_node(c);
    if (!n) {
        if (!maybe_ours(c.c_str())) return 0;
        errno = ENOENT;
        *out = -1;
        return 1;
    }
    if (n->type != Node::File) {
        errno = n->type == Node::Dir ? EISDIR : ENOENT;
        *out = -1;
        return 1;
    }
    if ((flags & O_ACCMODE) != O_RDONLY) {
        errno = EACCES;
        *out = -1;
        return 1;
    }
    *out = content_fd(n->data);
    if (*out >= 0 && !(flags & O_CLOEXEC)) {
        int fl = real().fcntl(*out, F_GETFD);
        real().fcntl(*out, F_SETFD, fl & ~FD_CLOEXEC);
    }
    return 1;
}

// ------------------------------------------------------ fake directories
struct FakeDir {
    uint64_t magic = 0x76676e3944495221ull;
    std::vector<struct dirent64> ents;
    size_t pos = 0;
};
std::mutex g_dir_mu;
std::set<void *> g_dirs;

void add_ent(FakeDir *d, const std::string &name, unsigned char type) {
    for (auto &e : d->ents)
        if (name == e.d_name) return;
    struct dirent64 e;
    memset(&e, 0, sizeof e);
    e.d_ino = std::hash<std::string>()(name) & 0xffffff;
    e.d_off = (off64_t)d->ents.size() + 1;
    e.d_reclen = sizeof e;
    e.d_type = type;
    snprintf(e.d_name, sizeof e.d_name, "%s", name.c_str());
    d->ents.push_back(e);
}

FakeDir *fake_opendir(const char *path, DIR *(*real_opendir)(const char *),
                      struct dirent64 *(*real_readdir)(DIR *), int (*real_closedir)(DIR *)) {
    if (!path) return nullptr;
    bool devdri = !strcmp(path, "/dev/dri") || !strcmp(path, "/dev/dri/");
    std::string c;
    if (!devdri) {
        if (!maybe_ours(path)) return nullptr;
        c = resolve(path, true);
        const Node *n = find_node(c);
        if (!n || n->type != Node::Dir) return nullptr;
    }
    auto *d = new FakeDir();
    add_ent(d, ".", DT_DIR);
    add_ent(d, "..", DT_DIR);
    if (devdri) {
        if (DIR *r = real_opendir("/dev/dri")) {  // merge the real listing
            while (struct dirent64 *e = real_readdir(r))
                add_ent(d, e->d_name, e->d_type);
            real_closedir(r);
        }
        add_ent(d, node_path().substr(9), DT_CHR);
    } else {
        std::string pre = c + "/";
        for (auto &[p, n] : tree()) {
            if (p.compare(0, pre.size(), pre) || p.find('/', pre.size()) != std::string::npos)
                continue;
            unsigned char t = n.type == Node::Dir ? DT_DIR : n.type == Node::Link ? DT_LNK
                                                                                     : DT_REG;
            add_ent(d, p.substr(pre.size()), t);
        }
    }
    std::lock_guard<std::mutex> l(g_dir_mu);
    g_dirs.insert(d);
    return d;
}

FakeDir *as_fake(void *dir) {
    std::lock_guard<std::mutex> l(g_dir_mu);
    return g_dirs.count(dir) ? static_cast<FakeDir *>(dir) : nullptr;
}

template <typename F>
F next_sym(const char *name) {
    return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

}  // namespace
}  // namespace vgen9sim

using namespace vgen9sim;

// ================================================================ hooks
namespace {
int get_mode(int flags, va_list ap) {
    return (flags & (O_CREAT | __O_TMPFILE)) ? va_arg(ap, int) : 0;
}
int do_open(const char *path, int flags, int mode) {
    int fd;
    if (fake_open(path, flags, &fd)) return fd;
    return real().open(path, flags, mode);
}
int do_openat(int dirfd, const char *path, int flags, int mode) {
    int fd;
    if (path && path[0] == '/' && fake_open(path, flags, &fd)) return fd;
    return real().openat(dirfd, path, flags, mode);
}
}  // namespace

EXPORT int open(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    int mode = get_mode(flags, ap);
    va_end(ap);
    return do_open(path, flags, mode);
}
EXPORT int open64(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    int mode = get_mode(flags, ap);
    va_end(ap);
    return do_open(path, flags | O_LARGEFILE, mode);
}
EXPORT int __open_2(const char *path, int flags) { return do_open(path, flags, 0); }
EXPORT int __open64_2(const char *path, int flags) { return do_open(path, flags | O_LARGEFILE, 0); }
EXPORT int openat(int dirfd, const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    int mode = get_mode(flags, ap);
    va_end(ap);
    return do_openat(dirfd, path, flags, mode);
}
EXPORT int openat64(int dirfd, const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    int mode = get_mode(flags, ap);
    va_end(ap);
    return do_openat(dirfd, path, flags | O_LARGEFILE, mode);
}
EXPORT int __openat_2(int dirfd, const char *path, int flags) { return do_openat(dirfd, path, flags, 0); }
EXPORT int __openat64_2(int dirfd, const char *path, int flags) {
    return do_openat(dirfd, path, flags | O_LARGEFILE, 0);
}

EXPORT int close(int fd) {
    if (fd >= 0 && is_tracked(fd)) on_close(fd);
    return real().close(fd);
}

EXPORT int close_range(unsigned int first, unsigned int last, int flags) noexcept {
    static auto f = next_sym<int (*)(unsigned int, unsigned int, int)>("close_range");
    int r = f(first, last, flags);
    if (r == 0 && !(flags & CLOSE_RANGE_CLOEXEC)) on_close_range(first, last);
    return r;
}
EXPORT void closefrom(int lowfd) noexcept {
    on_close_range((unsigned)std::max(lowfd, 0), ~0u);
    static auto f = next_sym<void (*)(int)>("closefrom");
    f(lowfd);
}

EXPORT int ioctl(int fd, unsigned long request, ...) noexcept {
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    int ret;
    if (fd >= 0 && handle_ioctl(fd, request, arg, &ret)) {
        if (ret < 0) {
            errno = -ret;
            return -1;
        }
        return ret;
    }
    return real().ioctl(fd, request, arg);
}

// mmap and mmap64 differ only where off_t is 32 bits (i386, armhf): there a
// caller built with 64-bit offsets calls mmap64, and a GEM fake offset
// (above 4 GiB) must reach handle_mmap whole.
EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off) noexcept {
    void *out;
    // MAP_FIXED replaces whatever was mapped there, as a munmap would (the
    // layer detaches an import's mapping that way after a failed acquire).
    if ((flags & MAP_FIXED) && addr) on_munmap(addr, len);
    if (fd >= 0 && !(flags & MAP_ANONYMOUS) && handle_mmap(addr, len, prot, flags, fd, off, &out))
        return out;
    return real().mmap64(addr, len, prot, flags, fd, off);
}
EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) noexcept {
    return mmap64(addr, len, prot, flags, fd, off);
}
EXPORT int munmap(void *addr, size_t len) noexcept {
    on_munmap(addr, len);
    return real().munmap(addr, len);
}

EXPORT int dup(int fd) noexcept {
    int r = real().dup(fd);
    if (r >= 0 && is_tracked(fd)) on_dup(fd, r);
    return r;
}
EXPORT int dup2(int fd, int fd2) noexcept {
    if (fd != fd2 && fd2 >= 0 && is_tracked(fd2)) on_close(fd2);
    int r = real().dup2(fd, fd2);
    if (r >= 0 && fd != fd2 && is_tracked(fd)) on_dup(fd, r);
    return r;
}
EXPORT int dup3(int fd, int fd2, int flags) noexcept {
    if (fd != fd2 && fd2 >= 0 && is_tracked(fd2)) on_close(fd2);
    int r = real().dup3(fd, fd2, flags);
    if (r >= 0 && is_tracked(fd)) on_dup(fd, r);
    return r;
}
namespace {
int do_fcntl(int fd, int cmd, va_list ap) {
    void *arg = va_arg(ap, void *);
    int r = real().fcntl(fd, cmd, arg);
    if ((cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && r >= 0 && is_tracked(fd)) on_dup(fd, r);
    return r;
}
}  // namespace
EXPORT int fcntl(int fd, int cmd, ...) {
    va_list ap;
    va_start(ap, cmd);
    int r = do_fcntl(fd, cmd, ap);
    va_end(ap);
    return r;
}
EXPORT int fcntl64(int fd, int cmd, ...) {
    va_list ap;
    va_start(ap, cmd);
    int r = do_fcntl(fd, cmd, ap);
    va_end(ap);
    return r;
}

EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout) {
    const int64_t timeout_ns = timeout < 0 ? -1 : (int64_t)timeout * 1000000;
    if (poll_needs_sim(fds, n)) return poll_impl(fds, n, timeout_ns, nullptr);
    bool handled = false;
    const int r = poll_sync_files(fds, n, timeout_ns, nullptr, &handled);
    return handled ? r : real().poll(fds, n, timeout);
}
EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t) { return poll(fds, n, timeout); }
EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask) {
    const int64_t timeout_ns = ts ? (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec : -1;
    if (poll_needs_sim(fds, n)) return poll_impl(fds, n, timeout_ns, mask);
    bool handled = false;
    const int r = poll_sync_files(fds, n, timeout_ns, mask, &handled);
    return handled ? r : real().ppoll(fds, n, ts, mask);
}
EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask,
                       size_t) {
    return ppoll(fds, n, ts, mask);
}

EXPORT off_t lseek(int fd, off_t off, int whence) noexcept {
    off_t r;
    if (fd >= 0 && handle_lseek(fd, off, whence, &r)) return r;
    return real().lseek(fd, off, whence);
}
EXPORT off64_t lseek64(int fd, off64_t off, int whence) noexcept {
    return lseek(fd, (off_t)off, whence);
}

EXPORT int fstatfs(int fd, struct statfs *buf) noexcept {
    if (fd >= 0 && handle_fstatfs(fd, buf)) return 0;
    return real().fstatfs(fd, buf);
}
EXPORT int fstatfs64(int fd, struct statfs64 *buf) noexcept {
    return fstatfs(fd, reinterpret_cast<struct statfs *>(buf));
}

// ---- stat family (glibc >= 2.33 exports stat & co; older binaries use __xstat)
namespace {
int do_stat(const char *path, struct stat *st, bool follow) {
    int r = fake_stat(path, st, follow);
    if (r == 1) return 0;
    if (r == -1) return -1;
    static auto rlstat = next_sym<int (*)(const char *, struct stat *)>("lstat");
    return follow ? real().stat(path, st) : rlstat(path, st);
}
int do_fstat(int fd, struct stat *st) {
    if (fd >= 0 && handle_fstat(fd, st)) return 0;
    return real().fstat(fd, st);
}
int do_fstatat(int dirfd, const char *path, struct stat *st, int flags) {
    if (path && !path[0] && (flags & AT_EMPTY_PATH)) return do_fstat(dirfd, st);
    if (path && path[0] == '/') {
        int r = fake_stat(path, st, !(flags & AT_SYMLINK_NOFOLLOW));
        if (r == 1) return 0;
        if (r == -1) return -1;
    }
    static auto rfstatat = next_sym<int (*)(int, const char *, struct stat *, int)>("fstatat");
    return rfstatat(dirfd, path, st, flags);
}
}  // namespace

EXPORT int stat(const char *path, struct stat *st) noexcept { return do_stat(path, st, true); }
EXPORT int stat64(const char *path, struct stat64 *st) noexcept {
    return do_stat(path, reinterpret_cast<struct stat *>(st), true);
}
EXPORT int lstat(const char *path, struct stat *st) noexcept { return do_stat(path, st, false); }
EXPORT int lstat64(const char *path, struct stat64 *st) noexcept {
    return do_stat(path, reinterpret_cast<struct stat *>(st), false);
}
EXPORT int fstat(int fd, struct stat *st) noexcept { return do_fstat(fd, st); }
EXPORT int fstat64(int fd, struct stat64 *st) noexcept {
    return do_fstat(fd, reinterpret_cast<struct stat *>(st));
}
EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags) noexcept {
    return do_fstatat(dirfd, path, st, flags);
}
EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags) noexcept {
    return do_fstatat(dirfd, path, reinterpret_cast<struct stat *>(st), flags);
}
EXPORT int __xstat(int, const char *path, struct stat *st) { return do_stat(path, st, true); }
EXPORT int __xstat64(int, const char *path, struct stat64 *st) {
    return do_stat(path, reinterpret_cast<struct stat *>(st), true);
}
EXPORT int __lxstat(int, const char *path, struct stat *st) { return do_stat(path, st, false); }
EXPORT int __lxstat64(int, const char *path, struct stat64 *st) {
    return do_stat(path, reinterpret_cast<struct stat *>(st), false);
}
EXPORT int __fxstat(int, int fd, struct stat *st) { return do_fstat(fd, st); }
EXPORT int __fxstat64(int, int fd, struct stat64 *st) {
    return do_fstat(fd, reinterpret_cast<struct stat *>(st));
}
EXPORT int __fxstatat(int, int dirfd, const char *path, struct stat *st, int flags) {
    return do_fstatat(dirfd, path, st, flags);
}
EXPORT int __fxstatat64(int, int dirfd, const char *path, struct stat64 *st, int flags) {
    return do_fstatat(dirfd, path, reinterpret_cast<struct stat *>(st), flags);
}

EXPORT int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *stx) noexcept {
    struct stat st;
    bool have = false;
    if (path && !path[0] && (flags & AT_EMPTY_PATH) && dirfd >= 0 && handle_fstat(dirfd, &st))
        have = true;
    else if (path && path[0] == '/') {
        int r = fake_stat(path, &st, !(flags & AT_SYMLINK_NOFOLLOW));
        if (r == -1) return -1;
        have = r == 1;
    }
    if (have) {
        memset(stx, 0, sizeof *stx);
        stx->stx_mask = STATX_BASIC_STATS;
        stx->stx_mode = (uint16_t)st.st_mode;
        stx->stx_nlink = (uint32_t)st.st_nlink;
        stx->stx_ino = st.st_ino;
        stx->stx_size = (uint64_t)st.st_size;
        stx->stx_blksize = (uint32_t)st.st_blksize;
        stx->stx_rdev_major = major(st.st_rdev);
        stx->stx_rdev_minor = minor(st.st_rdev);
        stx->stx_dev_major = major(st.st_dev);
        stx->stx_dev_minor = minor(st.st_dev);
        return 0;
    }
    static auto rstatx =
            next_sym<int (*)(int, const char *, int, unsigned int, struct statx *)>("statx");
    return rstatx(dirfd, path, flags, mask, stx);
}

EXPORT int access(const char *path, int mode) noexcept {
    struct stat st;
    int r = fake_stat(path, &st, true);
    if (r == 1) {
        if ((mode & W_OK) && S_ISREG(st.st_mode)) {
            errno = EACCES;
            return -1;
        }
        return 0;
    }
    if (r == -1) return -1;
    static auto raccess = next_sym<int (*)(const char *, int)>("access");
    return raccess(path, mode);
}

EXPORT ssize_t readlink(const char *path, char *buf, size_t size) noexcept {
    if (maybe_ours(path)) {
        std::string c = resolve(path, false);
        const Node *n = find_node(c);
        if (n) {
            if (n->type != Node::Link) {
                errno = EINVAL;
                return -1;
            }
            size_t k = std::min(size, n->rel.size());
            memcpy(buf, n->rel.data(), k);
            return (ssize_t)k;
        }
    }
    static auto rreadlink = next_sym<ssize_t (*)(const char *, char *, size_t)>("readlink");
    return rreadlink(path, buf, size);
}

EXPORT char *realpath(const char *path, char *resolved) noexcept {
    if (maybe_ours(path)) {
        std::string c = resolve(path, true);
        // A link leaving the fake tree (subsystem -> /sys/bus/pci) resolves
        // to its target even where that sysfs directory is absent (containers).
        if (!find_node(c) && maybe_ours(c.c_str())) {
            errno = ENOENT;
            return nullptr;
        }
        if (c.size() >= PATH_MAX) {
            errno = ENAMETOOLONG;
            return nullptr;
        }
        if (!resolved) resolved = static_cast<char *>(malloc(PATH_MAX));
        if (!resolved) return nullptr;
        memcpy(resolved, c.c_str(), c.size() + 1);
        return resolved;
    }
    static auto rrealpath = next_sym<char *(*)(const char *, char *)>("realpath");
    return rrealpath(path, resolved);
}
EXPORT char *__realpath_chk(const char *path, char *resolved, size_t) { return realpath(path, resolved); }

namespace {
FILE *do_fopen(const char *path, const char *mode, const char *sym) {
    if (maybe_ours(path)) {
        int flags = (mode[0] == 'r' && !strchr(mode, '+')) ? O_RDONLY : O_RDWR;
        int fd;
        if (fake_open(path, flags | O_CLOEXEC, &fd)) {
            if (fd < 0) return nullptr;
            return fdopen(fd, "r");
        }
    }
    auto rf = reinterpret_cast<FILE *(*)(const char *, const char *)>(dlsym(RTLD_NEXT, sym));
    return rf(path, mode);
}
}  // namespace
EXPORT FILE *fopen(const char *path, const char *mode) { return do_fopen(path, mode, "fopen"); }
EXPORT FILE *fopen64(const char *path, const char *mode) { return do_fopen(path, mode, "fopen64"); }

// ---- directories
namespace {
using opendir_t = DIR *(*)(const char *);
using readdir64_t = struct dirent64 *(*)(DIR *);
using closedir_t = int (*)(DIR *);
opendir_t r_opendir() {
    static auto f = next_sym<opendir_t>("opendir");
    return f;
}
readdir64_t r_readdir64() {
    static auto f = next_sym<readdir64_t>("readdir64");
    return f;
}
closedir_t r_closedir() {
    static auto f = next_sym<closedir_t>("closedir");
    return f;
}
}  // namespace

EXPORT DIR *opendir(const char *path) {
    if (FakeDir *d = fake_opendir(path, r_opendir(), r_readdir64(), r_closedir()))
        return reinterpret_cast<DIR *>(d);
    return r_opendir()(path);
}
EXPORT struct dirent64 *readdir64(DIR *dir) {
    if (FakeDir *d = as_fake(dir)) {
        if (d->pos >= d->ents.size()) return nullptr;
        return &d->ents[d->pos++];
    }
    return r_readdir64()(dir);
}
EXPORT struct dirent *readdir(DIR *dir) {
    if (as_fake(dir)) return reinterpret_cast<struct dirent *>(readdir64(dir));
    static auto f = next_sym<struct dirent *(*)(DIR *)>("readdir");
    return f(dir);
}
EXPORT int closedir(DIR *dir) {
    if (FakeDir *d = as_fake(dir)) {
        {
            std::lock_guard<std::mutex> l(g_dir_mu);
            g_dirs.erase(dir);
        }
        delete d;
        return 0;
    }
    return r_closedir()(dir);
}
EXPORT void rewinddir(DIR *dir) noexcept {
    if (FakeDir *d = as_fake(dir)) {
        d->pos = 0;
        return;
    }
    static auto f = next_sym<void (*)(DIR *)>("rewinddir");
    f(dir);
}
EXPORT int dirfd(DIR *dir) noexcept {
    if (as_fake(dir)) {
        errno = ENOTSUP;
        return -1;
    }
    static auto f = next_sym<int (*)(DIR *)>("dirfd");
    return f(dir);
}
