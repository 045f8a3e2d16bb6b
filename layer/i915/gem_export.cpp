#include "layer/i915/gem_export.hpp"

#include <fcntl.h>

#include <drm.h>
#include <i915_drm.h>

#include <cerrno>

#include "layer/base/gem_handle.hpp"
#include "layer/base/kernel_ops.hpp"

namespace cldmabuf::i915 {

int export_new_gem(int node_fd, uint64_t bytes, int *dmabuf_fd) {
    if (bytes == 0) return -EINVAL;
    const uint64_t page = 4096;
    if (bytes > UINT64_MAX - page) return -E2BIG;
    drm_i915_gem_create create{};
    create.size = (bytes + page - 1) & ~(page - 1);
    if (kernel_ioctl_retry(node_fd, DRM_IOCTL_I915_GEM_CREATE, &create) != 0) return -errno;
    // The handle's job is done either way when it goes: a successful export
    // keeps the object alive through the dma-buf.
    const GemHandle handle(node_fd, create.handle);
    drm_prime_handle prime{};
    prime.handle = handle.get();
    prime.flags = DRM_CLOEXEC | DRM_RDWR;
    if (kernel_ioctl_retry(node_fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime) != 0) return -errno;
    *dmabuf_fd = prime.fd;
    return 0;
}

}  // namespace cldmabuf::i915
