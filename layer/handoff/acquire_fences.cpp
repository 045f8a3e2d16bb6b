#include "layer/handoff/acquire_fences.hpp"

#include <cstring>

#include "layer/dmabuf/explicit_fences.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/handoff/cpu_access.hpp"
#include "layer/core/import_state.hpp"
#include "layer/base/log.hpp"
#include "layer/base/stats.hpp"

namespace cldmabuf {
namespace {

void forget_route(const Import &import);
ImportState<FenceWaitRoute> routes(forget_route);
void forget_route(const Import &import) { routes.forget(import); }

}  // namespace

FenceWaitRoute fence_wait_route(const Import &import) {
    const FenceWaitRoute *r = routes.find(import);
    return r ? *r : FenceWaitRoute::unknown;
}

cl_int wait_acquire_fences(const Import &import, uint64_t access, const char *what) {
    const bool write = (access & DMABUF_SYNC_WRITE) != 0;
    stats().fence_waits++;
    FenceWaitRoute route = explicit_fences_on() ? fence_wait_route(import) : FenceWaitRoute::poll;
    if (route != FenceWaitRoute::poll) {
        bool exported = false;
        const int wait = dmabuf_wait_exported_fences(import.fd, write, fence_timeout_ms(), &exported);
        if (exported || export_unsupported(wait)) {
            if (route == FenceWaitRoute::unknown) {
                // Steps of one import may run on several queues' workers: the first answer stays.
                route = routes.emplace(import, exported ? FenceWaitRoute::sync_file : FenceWaitRoute::poll);
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
