#include "layer/blit/submit.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include "layer/dmabuf/primitives.hpp"
#include "layer/host_step.hpp"
#include "layer/i915/blt_engine.hpp"
#include "layer/kernel_ops.hpp"
#include "layer/log.hpp"
#include "layer/stats.hpp"

namespace cldmabuf {
namespace {

cl_int errno_status(int err) { return err == -ENOMEM ? CL_OUT_OF_HOST_MEMORY : CL_OUT_OF_RESOURCES; }

void count_done(BlitKind kind, uint64_t bytes) {
    switch (kind) {
    case BlitKind::copy:
        stats().blt_copies++;
        stats().blt_bytes += bytes;
        break;
    case BlitKind::detile: stats().detile_bytes += bytes; break;
    case BlitKind::retile: stats().retile_bytes += bytes; break;
    }
}

}  // namespace

cl_int submit_and_wait(const char *what, BlitKind kind, uint64_t bytes, const BlitSubmit &submit) {
    int fence = -1;
    if (int r = submit(&fence); r != 0) {
        LOG_ERROR("%s: blitter submission failed: %s", what, std::strerror(-r));
        return errno_status(r);
    }
    stats().fence_waits++;
    const int w = i915::BltEngine::wait_fence(fence, fence_timeout_ms());
    kernel().close(fence);
    if (w == 0) {
        stats().fence_timeouts++;
        LOG_ERROR("%s: blitter fence did not signal within %d ms (CLDMABUF_FENCE_TIMEOUT_MS)", what,
                  fence_timeout_ms());
        return CL_OUT_OF_RESOURCES;
    }
    if (w < 0) {
        LOG_ERROR("%s: blitter batch failed: %s", what, std::strerror(-w));
        return CL_OUT_OF_RESOURCES;
    }
    count_done(kind, bytes);
    return CL_SUCCESS;
}

cl_int enqueue_blit(cl_command_queue queue, cl_mem src, cl_mem dst, cl_command_type type, cl_uint num_events,
                    const cl_event *wait_list, cl_event *event, const char *what, uint64_t bytes,
                    BlitSubmit submit) {
    HostStep step;
    step.queue = queue;
    step.num_events = num_events;
    step.wait_list = wait_list;
    step.type = type;
    step.keep_alive.push_back(src);
    if (dst != src) step.keep_alive.push_back(dst);
    step.work = [what, bytes, submit = std::move(submit)](cl_int prior) -> cl_int {
        if (prior < 0) return prior;
        return submit_and_wait(what, BlitKind::copy, bytes, submit);
    };
    return enqueue_host_step(std::move(step), event);
}

}  // namespace cldmabuf
