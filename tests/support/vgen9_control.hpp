// The virtual Gen9's control API (tests/sim/vgen9.h) for test binaries that
// run with or without libvgen9.so preloaded (e2e lanes, unit suites, the VM
// lane): every entry point is looked up with dlsym once per process, never
// linked, so that a binary without the instrument still loads.
#pragma once

#include <cstdint>

#include "tests/sim/vgen9.h"

namespace cldmabuf::test {

struct Vgen9Control {
    const char *(*node_path)(void) = nullptr;
    int (*fail_ioctl)(unsigned long request, unsigned nth, int err) = nullptr;
    void (*hang_next)(unsigned n) = nullptr;
    void (*never_signal_next)(unsigned n) = nullptr;
    void (*set_delay_ms)(unsigned ms) = nullptr;
    void (*set_manual)(int on) = nullptr;
    unsigned (*tick)(unsigned n) = nullptr;
    int (*drain)(void) = nullptr;
    void (*reset)(void) = nullptr;
    void (*stats)(struct vgen9_stats *out) = nullptr;
    void (*set_export_name)(const char *name) = nullptr;
    void (*set_log)(int on) = nullptr;
    // DMA_BUF_IOCTL_SYNC START/END calls on the sim's own dma-bufs (not in vgen9.h).
    void (*dmabuf_syncs)(uint64_t *starts, uint64_t *ends) = nullptr;
    // GEM contexts alive on the node (vgen9_live_contexts).
    uint64_t (*live_contexts)(void) = nullptr;
    // For a scheduler of every step (tests/explore; not in vgen9.h): threads
    // polling the sim's fences and of those the ones whose fences are all
    // pending; batches vgen9_tick(1) would run now in manual mode.
    void (*fence_waiters)(uint64_t out[2]) = nullptr;
    unsigned (*ready_batches)(void) = nullptr;
    // libvgen9.so is preloaded: every entry point above was found.
    bool loaded = false;

    Vgen9Control();
    // The device's counters now; all zero when not loaded.
    struct vgen9_stats now() const;
    uint64_t submitted() const { return now().batches_submitted; }
    uint64_t executed() const { return now().batches_executed; }
    // Polls (every 100 us, at most timeout_ms) until a batch was accepted
    // since submitted() read `since`: then a copy's fences are on its buffers.
    bool wait_for_submission(uint64_t since, int timeout_ms) const;
};

// The process's one lookup.
const Vgen9Control &vgen9();

}  // namespace cldmabuf::test
