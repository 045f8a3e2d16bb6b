#include "layer/handoff/upload_events.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "layer/core/dispatch.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/core/import_state.hpp"
#include "layer/handoff/marker_watch.hpp"

namespace cldmabuf {
namespace {

// Each import's last upload, held until the next acquire or its teardown.
void forget_kept_upload(const Import &import);
ImportState<IcdEvent> kept_uploads(forget_kept_upload);
void forget_kept_upload(const Import &import) { kept_uploads.forget(import); }

// How long the caller waits for the uploads: 1 ms, plus their bytes at
// 2 GB/s (a third of NVIDIA's pageable Write rate, clpeak 6-7 GB/s), at most
// 10 ms.  A 1080p YUYV frame (4 MiB) gets 3 ms, a 4K one (16 MiB) 9 ms; a
// registered upload takes about 0.1 ms of that.  An upload held behind
// earlier commands longer than this leaves the release to its queued step.
std::chrono::microseconds uploads_wait_bound(size_t bytes) {
    const auto us = std::chrono::microseconds(1000 + bytes / 2000);
    return std::min(us, std::chrono::microseconds(10000));
}

}  // namespace

void note_upload_enqueued(const Import &import, cl_event upload) {
    IcdEvent kept = IcdEvent::retain(upload);
    forget_kept_upload(import);
    kept_uploads.emplace(import, std::move(kept));
}

void forget_upload(const Import &import) { forget_kept_upload(import); }

bool uploads_done_within_bound(cl_command_queue queue, const std::vector<std::shared_ptr<Import>> &list) {
    IcdEvents waiting;  // ours while waiting, whatever a next acquire keeps
    size_t bytes = 0;
    for (const auto &import : list)
        if (const IcdEvent *kept = kept_uploads.find(*import); kept && *kept) {
            waiting.add(IcdEvent::retain(kept->get()));
            bytes += import->is_image ? import->image.bytes : import->size;  // what the Write moves
        }
    if (waiting.empty()) return true;
    next().clFlush(queue);  // an upload not yet submitted would never complete here
    const auto deadline = std::chrono::steady_clock::now() + uploads_wait_bound(bytes);
    bool done = false;
    for (int looks = 0;; ++looks) {
        bool all_done = true, failed = false;
        for (cl_event e : waiting) {
            const cl_int status = status_of(e);
            failed |= status < 0;
            all_done &= status == CL_COMPLETE;
        }
        if (all_done || failed || std::chrono::steady_clock::now() >= deadline) {
            done = all_done;
            break;
        }
        // Yield (the ICD's own thread may need this core) through about a
        // millisecond, as the staging's waits do: a sleeping caller wakes
        // late on a loaded machine (2.5 ms frames on the host's 2 shared
        // cores with 64 looks before the sleeps).  Then short sleeps.
        if (looks < 2000) std::this_thread::yield();
        else std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    return done;
}

}  // namespace cldmabuf
