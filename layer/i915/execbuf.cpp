#include "layer/i915/execbuf.hpp"

#include <drm.h>
#include <i915_drm.h>

#include <cerrno>
#include <cstring>

#include "layer/i915/gem.hpp"
#include "layer/base/kernel_ops.hpp"

namespace cldmabuf::i915 {

int exec_blt(int drm_fd, uint32_t ctx_id, const ExecObject *objects, unsigned count,
             uint32_t batch_len_bytes, int *out_fence, int in_fence) {
    if (count == 0 || count > kMaxExecObjects || (batch_len_bytes & 7) || !out_fence)
        return -EINVAL;
    drm_i915_gem_exec_object2 obj[kMaxExecObjects];
    std::memset(obj, 0, sizeof(obj));
    for (unsigned i = 0; i < count; ++i) {
        obj[i].handle = objects[i].handle;
        obj[i].offset = canonical_address(objects[i].gpu_addr);
        obj[i].flags = EXEC_OBJECT_PINNED | EXEC_OBJECT_SUPPORTS_48B_ADDRESS;
        if (objects[i].write && i != 0) obj[i].flags |= EXEC_OBJECT_WRITE;
    }
    drm_i915_gem_execbuffer2 eb;
    std::memset(&eb, 0, sizeof(eb));
    eb.buffers_ptr = reinterpret_cast<uintptr_t>(obj);
    eb.buffer_count = count;
    eb.batch_start_offset = 0;
    eb.batch_len = batch_len_bytes;
    eb.flags = I915_EXEC_BLT | I915_EXEC_NO_RELOC | I915_EXEC_HANDLE_LUT |
               I915_EXEC_BATCH_FIRST | I915_EXEC_FENCE_OUT;
    eb.rsvd1 = ctx_id;  // i915_execbuffer2_set_context_id
    eb.rsvd2 = 0;
    if (in_fence >= 0) {
        eb.flags |= I915_EXEC_FENCE_IN;
        eb.rsvd2 = static_cast<uint32_t>(in_fence);  // lower 32 bits in, upper 32 bits out
    }
    if (kernel_ioctl_retry(drm_fd, DRM_IOCTL_I915_GEM_EXECBUFFER2_WR, &eb) != 0) return -errno;
    *out_fence = static_cast<int>(eb.rsvd2 >> 32);
    return 0;
}

}  // namespace cldmabuf::i915
