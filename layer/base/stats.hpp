// CLDMABUF_STATS=1: counters, printed as one summary at layer teardown.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>

namespace cldmabuf {

struct Stats {
    std::atomic<uint64_t> imports{0};
    std::atomic<uint64_t> zero_copy_imports{0};
    std::atomic<uint64_t> copy_imports{0};
    std::atomic<uint64_t> zero_copy_bytes{0};
    std::atomic<uint64_t> host_bytes_copied{0};
    // The copy route on acquire/release (layer/handoff/acquire_release.cpp):
    // bytes by direction, and transfers by route (layer/handoff/staging.hpp).
    std::atomic<uint64_t> copy_in_bytes{0};   // dma-buf -> device copy
    std::atomic<uint64_t> copy_out_bytes{0};  // device copy -> dma-buf
    std::atomic<uint64_t> staged_bytes{0};    // of those, through pinned staging
    std::atomic<uint64_t> staged_transfers{0};
    std::atomic<uint64_t> direct_transfers{0};  // the ICD's Write/Read from the mapping
    std::atomic<uint64_t> staging_fallbacks{0};  // staging wanted, the ICD refused it
    // Registrations of a copy-route import's mapping with the ICD
    // (layer/handoff/staging.hpp): made, and taken back parked with the mapping.
    std::atomic<uint64_t> registrations_made{0};
    std::atomic<uint64_t> registrations_reused{0};
    std::atomic<uint64_t> import_errors{0};
    std::atomic<uint64_t> acquires{0};
    std::atomic<uint64_t> releases{0};
    // Acquire/release commands (not objects) by path
    // (layer/handoff/acquire_release.cpp): done at once, or as a host step.
    std::atomic<uint64_t> fast_handoffs{0};
    std::atomic<uint64_t> queued_handoffs{0};
    // Of the fast ones, copy-route acquires that did not wait for the queue
    // to be idle (the plan's fast_unwatched way, layer/handoff/plan.hpp).
    std::atomic<uint64_t> unwatched_acquires{0};
    // Of the fast ones, handoffs on the quiet queue that skipped their
    // marker's watch (layer/queue/quiet.hpp).
    std::atomic<uint64_t> quiet_handoffs{0};
    // Host steps whose marker the poller saw ended before its callback came
    // (layer/core/step_poll.hpp).
    std::atomic<uint64_t> steps_polled{0};
    std::atomic<uint64_t> fence_waits{0};
    std::atomic<uint64_t> fence_timeouts{0};
    // Release fences put into a dma-buf (layer/sync/dmabuf_bridge.cpp) that
    // the watchdog signalled at the bound because their release had not run:
    // every implicit-sync consumer waited the whole bound for them.
    std::atomic<uint64_t> release_fences_expired{0};
    // Blitter batches past the fence bound whose GEM context the layer
    // cancelled (layer/blit/submit.cpp).
    std::atomic<uint64_t> blt_cancelled{0};
    std::atomic<uint64_t> syncs{0};
    std::atomic<uint64_t> blt_copies{0};
    std::atomic<uint64_t> blt_bytes{0};
    // Blitter batches chained to semaphores (layer/blit/fence_chain.hpp):
    // a wait taken as I915_EXEC_FENCE_IN, a signal that became the batch's
    // FENCE_OUT, and claimed waits the execbuffer refused (waited on the host).
    std::atomic<uint64_t> blt_fence_in_batches{0};
    std::atomic<uint64_t> blt_fence_out_batches{0};
    std::atomic<uint64_t> blt_fence_in_fallbacks{0};
    std::atomic<uint64_t> tiled_imports{0};
    std::atomic<uint64_t> detile_bytes{0};  // tiled imports: dma-buf -> shadow on acquire
    std::atomic<uint64_t> retile_bytes{0};  // shadow -> dma-buf on release
    // Copy-route releases of an import sharing its dma-buf with another
    // (layer/handoff/alias_merge.hpp): merges, and the changed bytes written.
    std::atomic<uint64_t> alias_merges{0};
    std::atomic<uint64_t> alias_merged_bytes{0};

    // A copy the blitter did not take, by reason.
    void count_fallback(const std::string &reason);
    std::map<std::string, uint64_t> fallbacks() const;
    std::string summary() const;
};

Stats &stats();
bool stats_enabled();  // CLDMABUF_STATS set and not "0"
void print_stats_if_enabled();

}  // namespace cldmabuf
