// In-process fake of an i915 render node for the i915 unit tests, plugged in
// with cldmabuf::set_kernel().  Records every ioctl, keeps GEM objects in host
// memory and, when asked, executes linear XY_SRC_COPY_BLT batches with its
// own small decoder (written for the tests, independent of the encoder).
#pragma once

#include <drm.h>
#include <i915_drm.h>
#include <linux/sync_file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "layer/base/kernel_ops.hpp"

namespace fake {

class FakeI915 : public cldmabuf::KernelOps {
public:
    // ---- configuration ----
    std::string driver = "i915";
    int chipset = 0x1916;  // SKL GT2
    bool has_llc = true, has_blt = true, has_softpin = true, has_fence = true, has_batch_first = true;
    std::vector<std::string> dri = {"card0", "renderD128"};
    std::string pci_path = "/sys/devices/pci0000:00/0000:00:02.0";  // where the node's device link resolves
    bool execute = true;              // run batches on the host copies
    std::deque<int> exec_errors;      // per execbuffer call: 0 ok, else errno
    int busy = 0;                     // GEM_BUSY answer
    std::set<uint32_t> busy_handles;  // ... and these handles busy whatever `busy` says
    size_t gem_waits = 0;             // GEM_WAIT calls
    int fence_status = 1;             // SYNC_IOC_FILE_INFO status
    bool fence_ready = true;          // poll() answer
    static constexpr int kNodeFd = 40;

    // ---- recorded ----
    struct Exec {
        drm_i915_gem_execbuffer2 eb{};
        std::vector<drm_i915_gem_exec_object2> objs;
        std::vector<uint32_t> batch;
        int fence = -1;
    };
    std::vector<unsigned long> ioctls;
    std::vector<Exec> execs;
    std::vector<uint32_t> closed_handles;
    std::vector<std::string> real_paths;  // what real_path() was asked
    std::set<int> live_fences;
    int node_opens = 0, node_closes = 0, creates = 0, mmaps = 0, munmaps = 0;
    uint32_t ctx_created = 0, ctx_destroyed = 0;

    // A dma-buf fd the test hands to import(): host bytes behind a handle.
    int add_dmabuf(size_t size, uint8_t fill = 0) {
        const int fd = next_dmabuf_fd_++;
        const uint32_t h = next_handle_++;
        bos_[h].assign(size, fill);
        dmabuf_handle_[fd] = h;
        return fd;
    }
    std::vector<uint8_t> &bytes_of_fd(int dmabuf_fd) { return bos_[dmabuf_handle_[dmabuf_fd]]; }
    size_t live_handles() const { return bos_.size() - closed_set_.size(); }
    size_t count(unsigned long req) const {
        size_t n = 0;
        for (unsigned long r : ioctls) n += r == req;
        return n;
    }

    // ---- KernelOps ----
    int open(const char *path, int) override {
        if (std::string(path).rfind("/dev/dri/renderD", 0) != 0) return fail(ENOENT);
        ++node_opens;
        return kNodeFd;
    }
    int close(int fd) override {
        if (fd == kNodeFd) { ++node_closes; return 0; }
        if (live_fences.erase(fd)) return 0;
        return 0;
    }
    int dup(int fd) override { return fd; }
    void *mmap(void *, size_t len, int, int, int fd, off_t off) override {
        if (fd != kNodeFd) return fail_map(ENODEV);
        auto it = mmap_offsets_.find(static_cast<uint64_t>(off));
        if (it == mmap_offsets_.end()) return fail_map(EINVAL);
        auto &bo = bos_[it->second];
        if (len > bo.size()) return fail_map(EINVAL);
        ++mmaps;
        return bo.data();
    }
    int munmap(void *, size_t) override { ++munmaps; return 0; }
    int poll(struct pollfd *fds, nfds_t n, int) override {
        for (nfds_t i = 0; i < n; ++i) fds[i].revents = fence_ready ? POLLIN : 0;
        return fence_ready ? static_cast<int>(n) : 0;
    }
    off_t lseek(int fd, off_t off, int whence) override {
        auto it = dmabuf_handle_.find(fd);
        if (it == dmabuf_handle_.end()) return fail(ESPIPE);
        if (whence == SEEK_END && off == 0) return static_cast<off_t>(bos_[it->second].size());
        if (whence == SEEK_SET && off == 0) return 0;
        return fail(EINVAL);
    }
    int fstatfs(int, struct statfs *) override { return fail(ENOSYS); }
    std::vector<std::string> list_dir(const char *path) override {
        return std::string(path) == "/dev/dri" ? dri : std::vector<std::string>{};
    }
    // The node as a character device 226:N (N from its name) and its sysfs
    // link /sys/dev/char/226:N/device resolving to `pci_path`, as on Linux;
    // an empty pci_path is a node whose device is not on PCI (ENOENT).
    int stat(const char *path, struct stat *st) override {
        const std::string p(path);
        const std::string prefix = "/dev/dri/renderD";
        if (p.rfind(prefix, 0) != 0 || std::find(dri.begin(), dri.end(), p.substr(9)) == dri.end())
            return fail(ENOENT);
        *st = {};
        st->st_mode = S_IFCHR | 0666;
        st->st_rdev = makedev(226, std::stoi(p.substr(prefix.size())));
        return 0;
    }
    std::string real_path(const char *path) override {
        real_paths.emplace_back(path);
        if (pci_path.empty() || std::string(path).rfind("/sys/dev/char/226:", 0) != 0) {
            errno = ENOENT;
            return {};
        }
        return pci_path;
    }

    int ioctl(int fd, unsigned long req, void *arg) override {
        ioctls.push_back(req);
        if (req == SYNC_IOC_FILE_INFO) {
            if (!live_fences.count(fd)) return fail(EBADF);
            static_cast<sync_file_info *>(arg)->status = fence_status;
            return 0;
        }
        if (fd != kNodeFd) return fail(ENOTTY);
        switch (req) {
        case DRM_IOCTL_VERSION: {
            auto *v = static_cast<drm_version *>(arg);
            const size_t n = std::min(v->name_len, driver.size());
            if (v->name) std::memcpy(v->name, driver.data(), n);
            v->name_len = driver.size();
            return 0;
        }
        case DRM_IOCTL_I915_GETPARAM: {
            auto *gp = static_cast<drm_i915_getparam *>(arg);
            int val = 0;
            switch (gp->param) {
            case I915_PARAM_CHIPSET_ID: val = chipset; break;
            case I915_PARAM_HAS_BLT: val = has_blt; break;
            case I915_PARAM_HAS_LLC: val = has_llc; break;
            case I915_PARAM_HAS_EXEC_SOFTPIN: val = has_softpin; break;
            case I915_PARAM_HAS_EXEC_FENCE: val = has_fence; break;
            case I915_PARAM_HAS_EXEC_BATCH_FIRST: val = has_batch_first; break;
            default: return fail(EINVAL);
            }
            *gp->value = val;
            return 0;
        }
        case DRM_IOCTL_I915_GEM_CONTEXT_CREATE:
            static_cast<drm_i915_gem_context_create *>(arg)->ctx_id = ctx_created = 7;
            return 0;
        case DRM_IOCTL_I915_GEM_CONTEXT_DESTROY:
            ctx_destroyed = static_cast<drm_i915_gem_context_destroy *>(arg)->ctx_id;
            return 0;
        case DRM_IOCTL_PRIME_FD_TO_HANDLE: {
            auto *ph = static_cast<drm_prime_handle *>(arg);
            auto it = dmabuf_handle_.find(ph->fd);
            if (it == dmabuf_handle_.end()) return fail(EBADF);
            ph->handle = it->second;
            closed_set_.erase(it->second);
            return 0;
        }
        case DRM_IOCTL_GEM_CLOSE: {
            const uint32_t h = static_cast<drm_gem_close *>(arg)->handle;
            closed_handles.push_back(h);
            closed_set_.insert(h);
            return 0;
        }
        case DRM_IOCTL_I915_GEM_CREATE: {
            auto *c = static_cast<drm_i915_gem_create *>(arg);
            const uint32_t h = next_handle_++;
            bos_[h].assign(c->size, 0);
            c->handle = h;
            ++creates;
            return 0;
        }
        case DRM_IOCTL_I915_GEM_MMAP_OFFSET: {
            auto *m = static_cast<drm_i915_gem_mmap_offset *>(arg);
            last_mmap_flags = m->flags;
            m->offset = (uint64_t{m->handle} << 20);
            mmap_offsets_[m->offset] = m->handle;
            return 0;
        }
        case DRM_IOCTL_I915_GEM_BUSY:
            static_cast<drm_i915_gem_busy *>(arg)->busy =
                busy_handles.count(static_cast<drm_i915_gem_busy *>(arg)->handle) ? 1 : busy;
            return 0;
        case DRM_IOCTL_I915_GEM_WAIT:
            ++gem_waits;
            return 0;
        case DRM_IOCTL_I915_GEM_EXECBUFFER2_WR:
            return execbuf(static_cast<drm_i915_gem_execbuffer2 *>(arg));
        default:
            return fail(ENOTTY);
        }
    }

    uint64_t last_mmap_flags = 0;

private:
    static int fail(int e) { errno = e; return -1; }
    static void *fail_map(int e) { errno = e; return MAP_FAILED; }

    int execbuf(drm_i915_gem_execbuffer2 *eb) {
        if (!exec_errors.empty()) {
            const int e = exec_errors.front();
            exec_errors.pop_front();
            if (e) return fail(e);
        }
        Exec x;
        x.eb = *eb;
        auto *objs = reinterpret_cast<drm_i915_gem_exec_object2 *>(static_cast<uintptr_t>(eb->buffers_ptr));
        x.objs.assign(objs, objs + eb->buffer_count);
        auto &batch_bo = bos_[x.objs[0].handle];
        x.batch.resize(eb->batch_len / 4);
        std::memcpy(x.batch.data(), batch_bo.data(), eb->batch_len);
        if (execute && !run(x)) return fail(EINVAL);
        x.fence = next_fence_++;
        live_fences.insert(x.fence);
        eb->rsvd2 = uint64_t(uint32_t(x.fence)) << 32;
        execs.push_back(std::move(x));
        return 0;
    }

    uint8_t *translate(const Exec &x, uint64_t addr, uint64_t len) {
        for (const auto &o : x.objs) {
            const uint64_t base = o.offset & ((uint64_t{1} << 48) - 1);
            auto &bo = bos_[o.handle];
            if (addr >= base && addr + len <= base + bo.size()) return bo.data() + (addr - base);
        }
        return nullptr;
    }

    // Executes MI_NOOP/MI_FLUSH_DW/LRI/BBE and linear XY_SRC_COPY_BLT.
    bool run(const Exec &x) {
        const auto &b = x.batch;
        for (size_t i = 0; i < b.size();) {
            const uint32_t dw0 = b[i];
            const uint32_t client = dw0 >> 29, mi_op = (dw0 >> 23) & 0x3F;
            if (dw0 == 0) { ++i; continue; }
            if (client == 0 && mi_op == 0x0A) return true;
            if (client == 0) { i += (dw0 & 0x3F) + 2; continue; }
            if (client != 2 || ((dw0 >> 22) & 0x7F) != 0x53) return false;
            if (i + 10 > b.size() || (dw0 & 0xFF) != 8) return false;
            if (dw0 & ((1u << 15) | (1u << 11))) { i += 10; continue; }  // tiled: not modelled
            const uint32_t br13 = b[i + 1];
            const uint32_t depth = (br13 >> 24) & 7;
            const uint32_t cpp = depth == 0 ? 1 : depth == 3 ? 4 : 2;
            const uint32_t dpitch = br13 & 0xFFFF, spitch = b[i + 7] & 0xFFFF;
            const int x1 = b[i + 2] & 0xFFFF, y1 = b[i + 2] >> 16;
            const int x2 = b[i + 3] & 0xFFFF, y2 = b[i + 3] >> 16;
            const uint64_t da = b[i + 4] | uint64_t(b[i + 5] & 0xFFFF) << 32;
            const int sx = b[i + 6] & 0xFFFF, sy = b[i + 6] >> 16;
            const uint64_t sa = b[i + 8] | uint64_t(b[i + 9] & 0xFFFF) << 32;
            for (int y = y1; y < y2; ++y) {
                const uint64_t row = uint64_t(x2 - x1) * cpp;
                uint8_t *d = translate(x, da + uint64_t(y) * dpitch + uint64_t(x1) * cpp, row);
                uint8_t *s = translate(x, sa + uint64_t(sy + y - y1) * spitch + uint64_t(sx) * cpp, row);
                if (!d || !s) return false;
                std::memmove(d, s, row);
            }
            i += 10;
        }
        return false;  // no MI_BATCH_BUFFER_END
    }

    std::map<uint32_t, std::vector<uint8_t>> bos_;
    std::map<int, uint32_t> dmabuf_handle_;
    std::map<uint64_t, uint32_t> mmap_offsets_;
    std::set<uint32_t> closed_set_;
    uint32_t next_handle_ = 1;
    int next_dmabuf_fd_ = 100;
    int next_fence_ = 1000;
};

// Installs a fake for one scope.
struct ScopedKernel {
    explicit ScopedKernel(cldmabuf::KernelOps *k) { cldmabuf::set_kernel(k); }
    ~ScopedKernel() { cldmabuf::set_kernel(nullptr); }
};

}  // namespace fake
