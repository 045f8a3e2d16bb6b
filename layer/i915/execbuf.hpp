// One GEM_EXECBUFFER2_WR on the blitter ring with softpinned objects.
//
// Flags: I915_EXEC_BLT | NO_RELOC | HANDLE_LUT | BATCH_FIRST | FENCE_OUT, and
// FENCE_IN when the batch is to wait for a sync_file on the GPU (a semaphore
// wait, layer/blit/fence_chain.hpp): the kernel holds the request until that
// fence signalled and skips its payload when the fence failed.
// objects[0] is the batch; every object is EXEC_OBJECT_PINNED |
// SUPPORTS_48B_ADDRESS at its canonical address; `write` adds
// EXEC_OBJECT_WRITE (destination only, so the kernel installs the exclusive
// fence on the shared dma-buf reservation object).  EINTR/EAGAIN are retried
// by kernel_ioctl_retry.
#pragma once

#include <cstdint>

namespace cldmabuf::i915 {

struct ExecObject {
    uint32_t handle = 0;
    uint64_t gpu_addr = 0;
    bool write = false;
};

inline constexpr unsigned kMaxExecObjects = 3;

// 0 and *out_fence = sync_file fd, or -errno.  batch_len_bytes must be a
// multiple of 8.  in_fence: a sync_file fd (stays the caller's) or -1.
int exec_blt(int drm_fd, uint32_t ctx_id, const ExecObject *objects, unsigned count,
             uint32_t batch_len_bytes, int *out_fence, int in_fence = -1);

}  // namespace cldmabuf::i915
