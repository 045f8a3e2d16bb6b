#include "layer/i915/gem_export.hpp"

#include <fcntl.h>

#include <drm.h>
#include <i915_drm.h>

#include <cerrno>

#include "layer/base/kernel_ops.hpp"

namespace cldmabuf::i915 {

int export_new_gem(int node_fd, uint64_t bytes, int *dmabuf_fd) {
    if (bytes == 0) return -EINVAL;
    const uint64_t page = 4096;
    if (bytes > UINT64_MAX - page) return -E2BIG;
    drm_i915_gem_create create{};
    create.size = (bytes + page - 1) & ~(page - 1);
    if (kernel_ioctl_retry(node_fd, DRM_IOCTL_I915_GEM_CREATE, &create) != 0) return -errno;
    drm_prime_handle prime{};
    prime.handle = create.handle;
    prime.flags = DRM_CLOEXEC | DRM_RDWR;
    const int exported = kernel_ioctl_retry(node_fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime);
    const int err = exported == 0 ? 0 : -errno;
    // The handle's job is done either way: a successful export keeps the
    // object alive through the dma-buf.
    drm_gem_close close_arg{};
    close_arg.handle = create.handle;
    kernel_ioctl_retry(node_fd, DRM_IOCTL_GEM_CLOSE, &close_arg);
    if (err != 0) return err;
    *dmabuf_fd = prime.fd;
    return 0;
}

}  // namespace cldmabuf::i915
