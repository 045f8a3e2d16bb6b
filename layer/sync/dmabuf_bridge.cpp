#include "layer/sync/dmabuf_bridge.hpp"

#include <errno.h>

#include "layer/dmabuf/explicit_fences.hpp"
#include "layer/kernel_ops.hpp"
#include "layer/log.hpp"
#include "layer/sync/sync_file.hpp"

namespace cldmabuf::sync {

cl_int wait_dmabuf_fences(int dmabuf_fd, bool write, int timeout_ms, bool *exported) {
    int fd = -1;
    int err = export_dmabuf_fences(dmabuf_fd, write, &fd);
    *exported = err == 0;
    if (err) {
        LOG_DEBUG("DMA_BUF_IOCTL_EXPORT_SYNC_FILE on fd %d: errno %d", dmabuf_fd, -err);
        return CL_OUT_OF_RESOURCES;
    }
    cl_int result = wait_sync_file(fd, timeout_ms);
    kernel().close(fd);
    return result;
}

DmabufSignal::~DmabufSignal() {
    // Never left pending: closing an unsignalled layer fence's timeline signals it
    // with -ENOENT, so the dma-buf's consumers are not blocked by a release
    // that never ran.
    if (fence_.timeline >= 0) kernel().close(fence_.timeline);
    if (fence_.fence >= 0) kernel().close(fence_.fence);
}

int DmabufSignal::attach(int dmabuf_fd) {
    if (int err = create_layer_fence(&fence_); err < 0) return err;
    if (int err = import_fence_into_dmabuf(dmabuf_fd, fence_.fence, /*write=*/true); err < 0) {
        kernel().close(fence_.timeline);
        kernel().close(fence_.fence);
        fence_ = LayerFence{};
        return err;
    }
    return 0;
}

void DmabufSignal::signal() {
    if (int err = signal_layer_fence(&fence_); err < 0)
        LOG_ERROR("release fence: signalling the layer fence failed (errno %d)", -err);
}

}  // namespace cldmabuf::sync
