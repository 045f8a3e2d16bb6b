// A new GEM object of a Gen9 node, handed out as a dma-buf (the layer's
// allocator, layer/alloc/): DRM_IOCTL_I915_GEM_CREATE, then
// DRM_IOCTL_PRIME_HANDLE_TO_FD, then the handle is closed again: the dma-buf
// holds its own reference to the object, and the blitter PRIME-imports the fd
// like any other (it sees its own node's export, so no foreign-exporter gate).
#pragma once

#include <cstdint>

namespace cldmabuf::i915 {

// On the open render node `node_fd`: a page-rounded GEM object of at least
// `bytes`, exported read-write and close-on-exec.  0 and *dmabuf_fd, or
// -errno (GEM_CREATE's -EINVAL/-E2BIG/-ENOMEM for a size the node refuses);
// nothing is left behind on failure (no handle, no fd).
int export_new_gem(int node_fd, uint64_t bytes, int *dmabuf_fd);

}  // namespace cldmabuf::i915
