#include "layer/handoff/release_fences.hpp"

#include <atomic>
#include <cstring>
#include <memory>
#include <optional>

#include "layer/core/dmabuf_aliases.hpp"
#include "layer/dmabuf/explicit_fences.hpp"
#include "layer/handoff/acquire_opening.hpp"
#include "layer/handoff/plan.hpp"
#include "layer/core/host_step.hpp"
#include "layer/handoff/dmabuf_state.hpp"
#include "layer/base/log.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/core/worker.hpp"
#include "layer/queue/epoch.hpp"

namespace cldmabuf {
namespace {

// Whether the dma-buf refused IMPORT_SYNC_FILE once (its state remembers: not asked again).
bool refused_before(const Import &import) {
    auto record = dmabuf_record(import);
    std::lock_guard lock(record->mutex);
    return record->state.fence_refused;
}

void note_refused(const Import &import) {
    auto record = dmabuf_record(import);
    std::lock_guard lock(record->mutex);
    record->apply(DmabufEvent{.kind = DmabufEventKind::fence_refused});
}

// A zero-copy release that handed its fence over because it may wait for a
// user event (tests/explore/README.md, defect 1): while that event is
// pending its fence must not be in the dma-buf, where an unopened acquire's
// SYNC START would wait for the application.  But the device's writes
// enqueued ahead of it on its queue do not wait for that event, and would
// run with no fence on the dma-buf.  A fence of their own covers them: a
// step behind them signals it, and it goes where the rule puts any release
// fence (attached now, or handed to the acquires those writes wait for).
// Nothing when the writes ahead wait for a user event too.
ReleaseFences cover_writes_ahead(const Import &import, cl_command_queue queue) {
    MayWaitFor ahead = may_wait_for(queue, 0, nullptr, CommandShape::marker);
    ahead.opaque = ahead.opaque || unseen_enqueues();
    if (ahead.everything()) return {};
    auto cover = std::make_shared<sync::DmabufSignal>();
    if (open_ahead_or_hand_over(import, cover, ahead, /*own_bracket=*/false) && cover->attach(import.fd) < 0)
        return {};
    HostStep step;
    step.queue = queue;
    step.waits = HostStep::Waits::nothing;
    step.work = [cover](cl_int) -> cl_int {
        cover->signal();
        return CL_SUCCESS;
    };
    if (enqueue_host_step(std::move(step), nullptr) != CL_SUCCESS) {
        cover->signal();
        return {};
    }
    // Also signalled with the release's own: a step the ICD never runs.
    return {cover};
}

}  // namespace

ReleaseFences attach_release_fences(const std::vector<std::shared_ptr<Import>> &list, cl_command_queue queue,
                                    cl_uint num_events, const cl_event *wait_list) {
    ReleaseFences fences;
    const bool fences_on = explicit_fences_on() && sync::can_export_sync_fd();
    if (!fences_on) return fences;
    // What the release may wait for, asked once where an acquire is ahead.
    std::optional<MayWaitFor> waits;
    for (const auto &import : list) {
        // The unfinished layer steps on the dma-buf, through any of its imports:
        // its fences are one (layer/core/dmabuf_aliases.hpp).
        UnfinishedSteps earlier;
        for (cl_mem mem : dmabuf_alias_mems(*import)) {
            const UnfinishedSteps on = host_steps_unfinished_on(mem);
            earlier.dmabuf_fences += on.dmabuf_fences;
            earlier.openable_acquires += on.openable_acquires;
        }
        ReleaseFenceFacts f;
        f.fences_on = fences_on;
        f.read_only = import->flags & CL_MEM_READ_ONLY;
        f.tiled_shadow = import->over_tiled_shadow();
        f.refused_before = refused_before(*import);
        f.earlier_dmabuf_steps = earlier.dmabuf_fences > 0;
        f.earlier_acquires = earlier.openable_acquires > 0;
        const ReleaseFence plan = plan_release_fence(f);
        if (plan == ReleaseFence::none) continue;
        auto fence = std::make_shared<sync::DmabufSignal>();
        // An acquire ahead that has not opened (layer/handoff/acquire_opening.hpp):
        // opened ahead, then the fence goes in now; or it takes the fence.
        if (plan == ReleaseFence::with_acquire && !waits) {
            waits = may_wait_for(queue, num_events, wait_list);
            // An enqueue the layer does not see may stand between any two commands.
            waits->opaque = waits->opaque || unseen_enqueues();
        }
        if (plan == ReleaseFence::with_acquire && !open_ahead_or_hand_over(*import, fence, *waits)) {
            fences.push_back(std::move(fence));
            if (waits->everything() && !waits->opaque && import->route != Route::copy)
                for (auto &cover : cover_writes_ahead(*import, queue)) fences.push_back(std::move(cover));
            continue;
        }
        if (int err = fence->attach(import->fd); err < 0) {
            note_refused(*import);
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

namespace {

// Shared by every writer's callback: the last one to run adopts it back
// (it was released to them, signal_release_fences_after) and signals.
struct LateSignal {
    LateSignal(ReleaseFences f, IcdEvents w, size_t n) : fences(std::move(f)), writers(std::move(w)), left(n) {}
    ReleaseFences fences;
    IcdEvents writers;  // until the last one completed
    std::atomic<size_t> left;
};

void CL_CALLBACK on_writer_done(cl_event writer, cl_int, void *data) {
    auto *late = static_cast<LateSignal *>(data);
    if (late->left.fetch_sub(1) != 1) return;
    const std::unique_ptr<LateSignal> last(late);
    signal_release_fences(last->fences);
    // Not released in a callback (some ICDs still touch the event): on the worker.
    release_on_worker(writer, std::move(last->writers));
}

}  // namespace

void signal_release_fences_after(const ReleaseFences &fences, IcdEvents writers) {
    if (writers.empty()) return signal_release_fences(fences);
    // The handles, apart: the last callback may free the record (and the list) before the loop ends.
    const std::vector<cl_event> handles(writers.begin(), writers.end());
    // The writers' callbacks' (one share each, counted by `left`); a refused
    // callback's share is spent at once.
    LateSignal *late = std::make_unique<LateSignal>(fences, std::move(writers), handles.size()).release();
    for (cl_event writer : handles)
        if (next().clSetEventCallback(writer, CL_COMPLETE, on_writer_done, late) != CL_SUCCESS) {
            LOG_WARN("release: no completion callback on a write-back that outlived its wait: the release fence "
                     "is signalled now, while it may still write the dma-buf");
            on_writer_done(writer, CL_COMPLETE, late);
        }
}

}  // namespace cldmabuf
