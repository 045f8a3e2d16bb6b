#include "layer/core/failed_events.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace cldmabuf {
namespace {

// "OpenCL 3.0 PoCL 3.1+debian ..." -> 3; -1 when the string names no PoCL version.
int pocl_major(const std::string &version) {
    const auto at = version.find("PoCL ");
    if (at == std::string::npos) return -1;
    return std::atoi(version.c_str() + at + 5);
}

std::atomic<FailureModeSource> mode_source{nullptr};

std::mutex latch_mutex;
auto *latches = new std::unordered_map<cl_command_queue, cl_int>;
std::atomic<size_t> latch_count{0};

}  // namespace

FailureMode decide_failure_mode(const std::string &name, const std::string &version, const char *setting,
                                std::string *why) {
    if (setting && std::strcmp(setting, "propagate") == 0) {
        *why = "forced by CLDMABUF_FAILED_EVENTS=propagate";
        return FailureMode::propagate;
    }
    if (setting && std::strcmp(setting, "sidetable") == 0) {
        *why = "forced by CLDMABUF_FAILED_EVENTS=sidetable";
        return FailureMode::sidetable;
    }
    // Measured (docs/layer-rules.md, "When host work fails"): propagate where
    // the ICD terminates the commands behind a failed user event, calls their
    // CL_COMPLETE callbacks and keeps the queue usable once clFinish reported
    // the failure.  NVIDIA CUDA 13.0 calls the callbacks with status 0,
    // which the layer corrects.
    if (name.find("NVIDIA") != std::string::npos) {
        *why = "NVIDIA: failed user events terminate later commands, callbacks still fire";
        return FailureMode::propagate;
    }
    // Intel NEO 22.43 (AUB mode) terminates the commands behind a failed user
    // event with its status and calls their callbacks with it, but the NEO
    // lane under propagate aborts inside NEO (host_ptr_manager.cpp:251, a
    // later CL_MEM_USE_HOST_PTR import) after a failed tiled de-tile step,
    // with main's layer too: not picked until that is understood.
    if (name.find("Intel(R) OpenCL") != std::string::npos && name.find("Graphics") != std::string::npos) {
        *why = "Intel NEO: after a failed step NEO 22.43 aborted on a later host-pointer import (AUB lane); a "
               "failed acquire detaches its dma-bufs";
        return FailureMode::sidetable;
    }
    // PoCL (3.1 on the host, 6.0 in the VM) terminates the commands behind but
    // never calls their CL_COMPLETE callbacks, so the layer's own steps behind
    // (a release's SYNC END and fence signal) would never run; 3.1 also
    // aborts in pocl_update_event_failed() when such a user event fails (a
    // race).  The side table detaches the failed acquire's dma-bufs instead
    // (layer/handoff/failed_acquire_shield.hpp).
    if (pocl_major(version) >= 0) {
        *why = "PoCL: the commands a failed user event terminates never call their callbacks (3.1, 6.0), 3.1 "
               "aborts; a failed acquire detaches its dma-bufs";
        return FailureMode::sidetable;
    }
    // rusticl (Mesa 25.0) terminates the commands behind and calls their
    // callbacks, but fails every later command of the in-order queue too,
    // for good (a marker after clFinish: -5, and every clFinish -5): one
    // fence timeout would end the queue.
    if (name == "rusticl") {
        *why = "rusticl: a failed user event fails every later command of the queue for good; a failed acquire "
               "detaches its dma-bufs";
        return FailureMode::sidetable;
    }
    // Not measured here: the safe mode.
    *why = "ICD not qualified for failed user events (CLDMABUF_FAILED_EVENTS=propagate to try); a failed "
           "acquire detaches its dma-bufs";
    return FailureMode::sidetable;
}

void install_failure_mode_source(FailureModeSource source) { mode_source.store(source); }

FailureMode failure_mode(cl_command_queue queue) {
    const FailureModeSource source = mode_source.load();
    return source ? source(queue) : FailureMode::sidetable;
}

void note_queue_failure(cl_command_queue queue, cl_int status) {
    if (status >= 0) return;
    std::lock_guard lock(latch_mutex);
    latches->emplace(queue, status);  // the first failure wins
    latch_count.store(latches->size(), std::memory_order_relaxed);
}

cl_int queue_failure(cl_command_queue queue) {
    if (!any_queue_failure()) return 0;
    std::lock_guard lock(latch_mutex);
    auto it = latches->find(queue);
    return it == latches->end() ? 0 : it->second;
}

cl_int take_queue_failure(cl_command_queue queue) {
    if (!any_queue_failure()) return 0;
    std::lock_guard lock(latch_mutex);
    auto it = latches->find(queue);
    if (it == latches->end()) return 0;
    const cl_int status = it->second;
    latches->erase(it);
    latch_count.store(latches->size(), std::memory_order_relaxed);
    return status;
}

void forget_queue(cl_command_queue queue) { take_queue_failure(queue); }

bool any_queue_failure() { return latch_count.load(std::memory_order_relaxed) != 0; }

}  // namespace cldmabuf
