#include "layer/sync/fence_source.hpp"

#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <sys/ioctl.h>

#include <cstdio>

#include "layer/kernel_ops.hpp"
#include "layer/log.hpp"

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

}  // namespace

bool can_export_sync_fd() {
    static const bool available = [] {
        int fd = kernel().open(sw_sync_path, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            LOG_INFO("semaphores: %s not available (errno %d): no sync_fd export", sw_sync_path, errno);
            return false;
        }
        kernel().close(fd);
        return true;
    }();
    return available;
}

int create_layer_fence(LayerFence *out) {
    *out = LayerFence{};
    int tl = kernel().open(sw_sync_path, O_RDWR | O_CLOEXEC);
    if (tl < 0) return -errno;
    sw_sync_create_fence_data d{};
    d.value = 1;
    std::snprintf(d.name, sizeof d.name, "cldmabuf-semaphore");
    if (kernel_ioctl_retry(tl, CLDMABUF_SW_SYNC_IOC_CREATE_FENCE, &d) != 0) {
        int err = -errno;
        kernel().close(tl);
        return err;
    }
    out->timeline = tl;
    out->fence = d.fence;
    return 0;
}

int signal_layer_fence(LayerFence *f) {
    if (f->timeline < 0) return 0;
    __u32 one = 1;
    int err = kernel_ioctl_retry(f->timeline, CLDMABUF_SW_SYNC_IOC_INC, &one) == 0 ? 0 : -errno;
    kernel().close(f->timeline);  // an unsignalled point is signalled with -ENOENT here
    f->timeline = -1;
    return err;
}

}  // namespace cldmabuf::sync
