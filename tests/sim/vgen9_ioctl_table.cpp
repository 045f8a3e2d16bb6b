// Every ioctl the virtual Gen9 models, per kind of fd.  A request missing here
// is answered by the dispatcher's default for that fd (vgen9_device.cpp).
#include <linux/dma-buf.h>
#include <linux/sync_file.h>

#include "vgen9_ioctl_table.hpp"
#include "vgen9_sw_sync_uapi.h"

namespace vgen9sim {
namespace {

#define VGEN9_IOCTL(req, fn) {req, #req, fn}

// i915 render node (struct drm_driver.ioctls of i915 + the DRM core's).
constexpr IoctlEntry kRenderNode[] = {
        VGEN9_IOCTL(DRM_IOCTL_VERSION, ioctl_version),
        VGEN9_IOCTL(DRM_IOCTL_GET_CAP, ioctl_get_cap),
        VGEN9_IOCTL(DRM_IOCTL_I915_GETPARAM, ioctl_i915_getparam),
        VGEN9_IOCTL(DRM_IOCTL_I915_GEM_CREATE, ioctl_gem_create),
        VGEN9_IOCTL(DRM_IOCTL_I915_GEM_CREATE_EXT, ioctl_gem_create_ext),
        VGEN9_IOCTL(DRM_IOCTL_GEM_CLOSE, ioctl_gem_close),
        VGEN9_IOCTL(DRM_IOCTL_I915_GEM_MMAP_GTT, ioctl_gem_mmap_gtt),
        VGEN9_IOCTL(DRM_IOCTL_I915_GEM_MMAP_OFFSET, ioctl_gem_mmap_offset),
        VGEN9_IOCTL(DRM_IOCTL_I915_GEM_USERPTR, ioctl_gem_userptr),
        VGEN9_IOCTL(DRM_IOCTL_I915_GEM_SET_DOMAIN, ioctl_gem_set_domain),
        VGEN9_IOCTL(DRM_IOCTL_I915_GEM_BUSY, ioctl_gem_busy),
        VGEN9_IOCTL(DRM_IOCTL_I915_GEM_WAIT, ioctl_gem_wait),
        VGEN9_IOCTL(DRM_IOCTL_I915_GEM_CONTEXT_CREATE, ioctl_context_create),
        VGEN9_IOCTL(DRM_IOCTL_I915_GEM_CONTEXT_CREATE_EXT, ioctl_context_create_ext),
        VGEN9_IOCTL(DRM_IOCTL_I915_GEM_CONTEXT_DESTROY, ioctl_context_destroy),
        VGEN9_IOCTL(DRM_IOCTL_I915_GEM_CONTEXT_SETPARAM, ioctl_context_setparam),
        VGEN9_IOCTL(DRM_IOCTL_I915_GEM_CONTEXT_GETPARAM, ioctl_context_getparam),
        VGEN9_IOCTL(DRM_IOCTL_PRIME_HANDLE_TO_FD, ioctl_prime_handle_to_fd),
        VGEN9_IOCTL(DRM_IOCTL_PRIME_FD_TO_HANDLE, ioctl_prime_fd_to_handle),
        VGEN9_IOCTL(DRM_IOCTL_I915_GEM_EXECBUFFER2, ioctl_execbuffer2),
        VGEN9_IOCTL(DRM_IOCTL_I915_GEM_EXECBUFFER2_WR, ioctl_execbuffer2_wr),
};

// dma-buf fds (dma_buf_ioctl).
constexpr IoctlEntry kDmabuf[] = {
        VGEN9_IOCTL(DMA_BUF_IOCTL_SYNC, ioctl_dmabuf_sync),
        VGEN9_IOCTL(DMA_BUF_IOCTL_EXPORT_SYNC_FILE, ioctl_dmabuf_export_sync_file),
        VGEN9_IOCTL(DMA_BUF_IOCTL_IMPORT_SYNC_FILE, ioctl_dmabuf_import_sync_file),
        VGEN9_IOCTL(DMA_BUF_SET_NAME_A, ioctl_dmabuf_set_name),
        VGEN9_IOCTL(DMA_BUF_SET_NAME_B, ioctl_dmabuf_set_name),
};

// sync_file fds (sync_file_ioctl).
constexpr IoctlEntry kSyncFile[] = {
        VGEN9_IOCTL(SYNC_IOC_FILE_INFO, ioctl_sync_file_info),
        VGEN9_IOCTL(SYNC_IOC_MERGE, ioctl_sync_merge),
};

// sw_sync timeline fds (sw_sync_ioctl).
constexpr IoctlEntry kSwSync[] = {
        VGEN9_IOCTL(VGEN9_SW_SYNC_IOC_CREATE_FENCE, ioctl_sw_sync_create_fence),
        VGEN9_IOCTL(VGEN9_SW_SYNC_IOC_INC, ioctl_sw_sync_inc),
};

#undef VGEN9_IOCTL

}  // namespace

std::span<const IoctlEntry> render_node_ioctls() { return kRenderNode; }
std::span<const IoctlEntry> dmabuf_ioctls() { return kDmabuf; }
std::span<const IoctlEntry> sync_file_ioctls() { return kSyncFile; }
std::span<const IoctlEntry> sw_sync_ioctls() { return kSwSync; }

const IoctlEntry *find_ioctl(std::span<const IoctlEntry> table, unsigned long req) {
    for (const IoctlEntry &e : table)
        if (e.req == req) return &e;
    return nullptr;
}

}  // namespace vgen9sim
