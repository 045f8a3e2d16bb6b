#include "layer/handoff/cpu_access.hpp"

#include <cerrno>
#include <cstring>

#include "layer/dmabuf/explicit_fences.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/handoff/dmabuf_state.hpp"
#include "layer/base/log.hpp"
#include "layer/base/stats.hpp"

namespace cldmabuf {

cl_int begin_cpu_access(const Import &import, uint64_t access, const char *what) {
    // SYNC START itself waits for fences without a bound on a real kernel
    // (dma_buf_begin_cpu_access), so wait with poll first: a fence that never
    // signals must fail the command, not hang it.
    stats().fence_waits++;
    const int wait = dmabuf_wait_idle(import.fd, (access & DMABUF_SYNC_WRITE) != 0, fence_timeout_ms());
    if (cl_int err = fence_wait_status(wait, import, what); err != CL_SUCCESS) return err;
    return sync_start(import, access, what);
}

cl_int fence_wait_status(int wait, const Import &import, const char *what) {
    if (wait == -ETIME) {
        stats().fence_timeouts++;
        LOG_ERROR("%s: dma-buf fd %d still has pending fences after %d ms (CLDMABUF_FENCE_TIMEOUT_MS)", what,
                  import.fd, fence_timeout_ms());
        return CL_OUT_OF_RESOURCES;
    }
    if (wait < 0) {
        LOG_ERROR("%s: waiting for the fences of dma-buf fd %d failed: %s", what, import.fd, std::strerror(-wait));
        return CL_OUT_OF_RESOURCES;
    }
    return CL_SUCCESS;
}

bool fences_signalled_now(const Import &import, uint64_t access) {
    return dmabuf_wait_idle(import.fd, (access & DMABUF_SYNC_WRITE) != 0, 0) == 0;
}

cl_int sync_start(const Import &import, uint64_t access, const char *what) {
    stats().syncs++;
    if (int err = dmabuf_sync(import.fd, DMABUF_SYNC_START | access); err < 0) {
        LOG_ERROR("%s: DMA_BUF_IOCTL_SYNC START on fd %d failed: %s", what, import.fd, std::strerror(-err));
        return CL_OUT_OF_RESOURCES;
    }
    return CL_SUCCESS;
}

cl_int end_cpu_access(const Import &import, uint64_t access, const char *what) {
    stats().syncs++;
    if (int err = dmabuf_sync(import.fd, DMABUF_SYNC_END | access); err < 0) {
        LOG_ERROR("%s: DMA_BUF_IOCTL_SYNC END on fd %d failed: %s", what, import.fd, std::strerror(-err));
        return CL_OUT_OF_RESOURCES;
    }
    return CL_SUCCESS;
}

// Acquire's fence wait: an exported sync_file, or the poll; the way is the
// dma-buf's (layer/handoff/dmabuf_state.hpp), learned at its first wait.
FenceWaitRoute fence_wait_route(const Import &import) {
    auto record = dmabuf_record(import);
    std::lock_guard lock(record->mutex);
    return record->state.fence_wait;
}

namespace {

FenceWaitRoute learn_fence_wait(const Import &import, bool exported) {
    auto record = dmabuf_record(import);
    std::lock_guard lock(record->mutex);
    record->apply(DmabufEvent{.kind = DmabufEventKind::fence_wait_learned, .ok = exported});
    return record->state.fence_wait;
}

}  // namespace

cl_int wait_acquire_fences(const Import &import, uint64_t access, const char *what) {
    const bool write = (access & DMABUF_SYNC_WRITE) != 0;
    stats().fence_waits++;
    FenceWaitRoute route = explicit_fences_on() ? fence_wait_route(import) : FenceWaitRoute::poll;
    if (route != FenceWaitRoute::poll) {
        bool exported = false;
        const int wait = dmabuf_wait_exported_fences(import.fd, write, fence_timeout_ms(), &exported);
        if (exported || export_unsupported(wait)) {
            if (route == FenceWaitRoute::unknown) {
                // Steps of the dma-buf may run on several queues' workers: the first answer stays.
                route = learn_fence_wait(import, exported);
                if (exported)
                    LOG_DEBUG("%s: dma-buf fd %d: fences waited on as an exported sync_file", what, import.fd);
                else
                    LOG_DEBUG("%s: dma-buf fd %d: no DMA_BUF_IOCTL_EXPORT_SYNC_FILE (%s), its fences are polled",
                              what, import.fd, std::strerror(-wait));
            }
        }
        if (exported) return fence_wait_status(wait, import, what);
        // Not exported (unsupported, or a passing failure such as EMFILE, which
        // decides nothing): the dma-buf is polled as before.
    }
    return fence_wait_status(dmabuf_wait_idle(import.fd, write, fence_timeout_ms()), import, what);
}

}  // namespace cldmabuf
