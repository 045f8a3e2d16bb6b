#include "layer/handoff/release_fences.hpp"

#include <cstring>

#include "layer/dmabuf/explicit_fences.hpp"
#include "layer/handoff/acquire_opening.hpp"
#include "layer/host_step.hpp"
#include "layer/import_state.hpp"
#include "layer/log.hpp"

namespace cldmabuf {
namespace {

// Imports whose dma-buf refused IMPORT_SYNC_FILE: not asked again.
void forget_refusal(const Import &import);
ImportState<bool> refused(forget_refusal);
void forget_refusal(const Import &import) { refused.forget(import); }

bool wants_fence(const Import &import) {
    if ((import.flags & CL_MEM_READ_ONLY) || import.over_tiled_shadow() || refused.find(import)) return false;
    // A map, a blitter copy, a tiled shadow's step, an acquire without an
    // opening: each would wait for the fence when it runs, until the timeout.
    // (Acquires with an opening take it over: below.)
    return host_steps_unfinished_on(import.mem).dmabuf_fences == 0;
}

}  // namespace

ReleaseFences attach_release_fences(const std::vector<std::shared_ptr<Import>> &list) {
    ReleaseFences fences;
    if (!explicit_fences_on() || !sync::can_export_sync_fd()) return fences;
    for (const auto &import : list) {
        if (!wants_fence(*import)) continue;
        auto fence = std::make_shared<sync::DmabufSignal>();
        // An acquire of the import that has not run its opening yet attaches
        // it after its SYNC START (layer/handoff/acquire_opening.hpp): never
        // before the acquire ran.
        if (host_steps_unfinished_on(import->mem).openable_acquires > 0 && hand_fence_to_acquire(*import, fence)) {
            fences.push_back(std::move(fence));
            continue;
        }
        if (int err = fence->attach(import->fd); err < 0) {
            refused.emplace(*import, true);
            LOG_DEBUG("release: dma-buf fd %d takes no release fence (%s); its consumers see only the earlier "
                      "fences", import->fd, std::strerror(-err));
            continue;
        }
        fences.push_back(std::move(fence));
    }
    return fences;
}

void signal_release_fences(const ReleaseFences &fences) {
    for (const auto &f : fences) f->signal();
}

}  // namespace cldmabuf
