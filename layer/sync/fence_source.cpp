#include "layer/sync/fence_source.hpp"

#include <drm.h>
#include <drm_mode.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <sys/ioctl.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "layer/dmabuf/explicit_fences.hpp"
#include "layer/base/gem_handle.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"

namespace cldmabuf::sync {
namespace {

// drivers/dma-buf/sw_sync.c (not in the exported uapi headers).
struct sw_sync_create_fence_data {
    __u32 value;
    char name[32];
    __s32 fence;
};
#define CLDMABUF_SW_SYNC_IOC_CREATE_FENCE _IOWR('W', 0, struct sw_sync_create_fence_data)
#define CLDMABUF_SW_SYNC_IOC_INC _IOW('W', 1, __u32)

// include/uapi/drm/vgem_drm.h (shipped by neither libdrm nor linux-libc-dev;
// unchanged since Linux 4.10).
struct vgem_fence_attach {
    __u32 handle;
    __u32 flags;
    __u32 out_fence;
    __u32 pad;
};
struct vgem_fence_signal {
    __u32 fence;
    __u32 flags;
};
constexpr __u32 vgem_fence_write = 0x1;
constexpr unsigned long vgem_ioctl_fence_attach = DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct vgem_fence_attach);
constexpr unsigned long vgem_ioctl_fence_signal = DRM_IOW(DRM_COMMAND_BASE + 0x2, struct vgem_fence_signal);
static_assert(vgem_ioctl_fence_attach == 0xC0106441UL);
static_assert(vgem_ioctl_fence_signal == 0x40086442UL);

bool node_is_vgem(int fd) {
    char name[16] = {};
    drm_version v{};
    v.name = name;
    v.name_len = sizeof name - 1;
    if (kernel_ioctl_retry(fd, DRM_IOCTL_VERSION, &v) != 0) return false;
    return v.name_len == 4 && std::memcmp(name, "vgem", 4) == 0;
}

// vgem's primary node: dumb buffers are refused on render nodes.  Empty if none.
std::string find_vgem_node() {
    for (const std::string &name : kernel().list_dir("/dev/dri")) {
        if (name.rfind("card", 0) != 0) continue;
        const std::string path = "/dev/dri/" + name;
        const OwnedFd fd(kernel().open(path.c_str(), O_RDWR | O_CLOEXEC));
        if (fd && node_is_vgem(fd.get())) return path;
    }
    return {};
}

const std::string &vgem_node() {
    static const std::string path = find_vgem_node();
    return path;
}

int create_sw_sync_fence(LayerFence *out) {
    OwnedFd tl(kernel().open(sw_sync_path, O_RDWR | O_CLOEXEC));
    if (!tl) return -errno;
    sw_sync_create_fence_data d{};
    d.value = 1;
    std::snprintf(d.name, sizeof d.name, "cldmabuf-semaphore");
    if (kernel_ioctl_retry(tl.get(), CLDMABUF_SW_SYNC_IOC_CREATE_FENCE, &d) != 0) return -errno;
    out->timeline = std::move(tl);
    out->fence = OwnedFd(d.fence);
    return 0;
}

// One vgem file per fence; the buffer and its dma-buf are only the way to the
// sync_file and are closed at once (the sync_file holds the fence).
int create_vgem_fence(LayerFence *out) {
    OwnedFd file(kernel().open(vgem_node().c_str(), O_RDWR | O_CLOEXEC));
    if (!file) return -errno;
    drm_mode_create_dumb dumb{};
    dumb.width = 1024, dumb.height = 1, dumb.bpp = 32;  // one page
    if (kernel_ioctl_retry(file.get(), DRM_IOCTL_MODE_CREATE_DUMB, &dumb) != 0) return -errno;
    // Closed before `file` (declared after it): an error closes the file,
    // which signals an attached fence.
    const GemHandle buffer(file.get(), dumb.handle);
    vgem_fence_attach attach{};
    attach.handle = buffer.get();
    attach.flags = vgem_fence_write;
    drm_prime_handle prime{};
    prime.handle = buffer.get();
    prime.flags = DRM_CLOEXEC | DRM_RDWR;
    if (kernel_ioctl_retry(file.get(), vgem_ioctl_fence_attach, &attach) != 0 ||
        kernel_ioctl_retry(file.get(), DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime) != 0)
        return -errno;
    const OwnedFd dmabuf(prime.fd);
    int sync_fd = -1;
    if (int err = export_dmabuf_fences(dmabuf.get(), /*write=*/true, &sync_fd); err != 0) return err;
    out->timeline = std::move(file);
    out->fence = OwnedFd(sync_fd);
    out->vgem_fence = attach.out_fence;
    return 0;
}

FenceSource probe() {
    if (const OwnedFd fd(kernel().open(sw_sync_path, O_RDWR | O_CLOEXEC)); fd) {
        LOG_INFO("semaphores: sync_fd export through sw_sync (%s)", sw_sync_path);
        return FenceSource::sw_sync;
    }
    const int sw_errno = errno;
    if (!vgem_node().empty()) {
        // A whole fence once: vgem without DMA_BUF_IOCTL_EXPORT_SYNC_FILE (Linux < 6.0) is no source.
        LayerFence f;
        if (int err = create_vgem_fence(&f); err == 0) {
            signal_layer_fence(&f);
            LOG_INFO("semaphores: sync_fd export through vgem (%s; no sw_sync: errno %d)", vgem_node().c_str(),
                     sw_errno);
            return FenceSource::vgem;
        } else {
            LOG_INFO("semaphores: vgem (%s) cannot make a sync_file (errno %d)", vgem_node().c_str(), -err);
        }
    }
    LOG_INFO("semaphores: no sw_sync (%s: errno %d) and no usable vgem: no sync_fd export", sw_sync_path, sw_errno);
    return FenceSource::none;
}

}  // namespace

FenceSource fence_source() {
    static const FenceSource source = probe();
    return source;
}

int create_layer_fence(LayerFence *out) {
    *out = LayerFence{};  // what it held goes
    switch (fence_source()) {
    case FenceSource::sw_sync: return create_sw_sync_fence(out);
    case FenceSource::vgem: return create_vgem_fence(out);
    case FenceSource::none: break;
    }
    return -ENODEV;
}

int signal_layer_fence(LayerFence *f) {
    if (!f->timeline) return 0;
    int err = 0;
    if (f->vgem_fence != 0) {
        vgem_fence_signal s{};
        s.fence = f->vgem_fence;
        err = kernel_ioctl_retry(f->timeline.get(), vgem_ioctl_fence_signal, &s) == 0 ? 0 : -errno;
    } else {
        __u32 one = 1;
        err = kernel_ioctl_retry(f->timeline.get(), CLDMABUF_SW_SYNC_IOC_INC, &one) == 0 ? 0 : -errno;
    }
    f->timeline.reset();  // an unsignalled fence is signalled here
    f->vgem_fence = 0;
    return err;
}

}  // namespace cldmabuf::sync
