#include "layer/blit/fence_chain.hpp"

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <unordered_map>
#include <variant>

#include "layer/core/dispatch.hpp"
#include "layer/queue/epoch.hpp"
#include "layer/core/host_step.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/base/settings.hpp"
#include "layer/base/stats.hpp"

namespace cldmabuf {
namespace {

// How often the wait's step looks whether a copy took its offer while it
// polls the fence: a copy enqueued after the wait is noticed within this.
constexpr int hand_over_slice_ms = 2;

using Record = std::variant<std::monostate, std::shared_ptr<FenceInOffer>, std::shared_ptr<BatchFence>>;

std::mutex records_mutex;
std::unordered_map<cl_command_queue, Record> &records() {
    static auto *map = new std::unordered_map<cl_command_queue, Record>;  // outlives static destructors
    return *map;
}

enum class ChainMode { off, automatic, on };

// CLDMABUF_BLT_SEMAPHORE_FENCES (validated by the settings table: auto|on|off).
ChainMode chain_mode() {
    static const ChainMode m = [] {
        const char *v = setting("CLDMABUF_BLT_SEMAPHORE_FENCES");
        if (v && std::strcmp(v, "on") == 0) return ChainMode::on;
        if (v && std::strcmp(v, "off") == 0) return ChainMode::off;
        return ChainMode::automatic;
    }();
    return m;
}

template <typename T>
std::shared_ptr<T> take(cl_command_queue queue) {
    std::lock_guard l(records_mutex);
    auto it = records().find(queue);
    if (it == records().end()) return nullptr;
    std::shared_ptr<T> *held = std::get_if<std::shared_ptr<T>>(&it->second);
    std::shared_ptr<T> out = held ? std::move(*held) : nullptr;
    records().erase(it);
    return out;
}

template <typename T>
void forget_record(cl_command_queue queue, const T *what) {
    std::lock_guard l(records_mutex);
    auto it = records().find(queue);
    if (it == records().end()) return;
    if (auto *held = std::get_if<std::shared_ptr<T>>(&it->second); held && held->get() == what) records().erase(it);
}

}  // namespace

bool fence_chain_on(cl_command_queue queue) {
    switch (chain_mode()) {
    case ChainMode::off: return false;
    case ChainMode::automatic:
        if (unseen_enqueues()) return false;
        break;
    case ChainMode::on: break;
    }
    return !out_of_order_queue(queue);
}

bool nothing_between(uint64_t since) {
    switch (chain_mode()) {
    case ChainMode::off: return false;
    case ChainMode::automatic: return read_epoch().raw == since && !unseen_enqueues();
    case ChainMode::on: return true;
    }
    return false;
}

// ---- FenceInOffer -------------------------------------------------------------------

FenceInOffer::FenceInOffer(int fence_fd, std::shared_ptr<const void> owner,
                           std::function<cl_int(int timeout_ms)> host_wait)
    : fd_(fence_fd), owner_(std::move(owner)), host_wait_(std::move(host_wait)) {}

cl_int FenceInOffer::wait_or_hand_over(int timeout_ms) {
    // Slices of poll() rather than one: the copy that takes the offer is
    // enqueued while this step waits, and the queue must go on at once then.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
    bool timed_out = false;
    for (;;) {
        if (claimed()) return CL_SUCCESS;
        const long long left = std::chrono::duration_cast<std::chrono::milliseconds>(
                                       deadline - std::chrono::steady_clock::now())
                                       .count();
        short revents = 0;
        const int slice = static_cast<int>(std::clamp<long long>(left, 0, hand_over_slice_ms));
        if (kernel_poll_bounded(fd_, POLLIN, slice, &revents) != 0) break;  // signalled or failed
        if (left <= 0) {
            timed_out = true;
            break;
        }
    }
    int expected = open_state;
    if (!state_.compare_exchange_strong(expected, closed_state, std::memory_order_acq_rel))
        return CL_SUCCESS;  // a copy took it meanwhile
    if (timed_out) {
        LOG_ERROR("semaphore wait: its sync_file did not signal within %d ms (CLDMABUF_FENCE_TIMEOUT_MS)",
                  timeout_ms);
        return CL_OUT_OF_RESOURCES;
    }
    // The fence is done: its status as the host step reads it without the
    // chain (for a layer signal, its step may finish a moment after the fence).
    const long long left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    return host_wait_(static_cast<int>(std::max<long long>(left, 0)));
}

void FenceInOffer::close() {
    int expected = open_state;
    state_.compare_exchange_strong(expected, closed_state, std::memory_order_acq_rel);
}

bool FenceInOffer::claim() {
    int expected = open_state;
    return state_.compare_exchange_strong(expected, claimed_state, std::memory_order_acq_rel);
}

int FenceInOffer::dup_fence() const { return fd_ >= 0 ? kernel().dup(fd_) : -1; }

// ---- BatchFence ---------------------------------------------------------------------

void BatchFence::count_once(bool adopted) {
    if (!adopted) return;
    std::lock_guard l(m_);
    if (counted_) return;
    counted_ = true;
    stats().blt_fence_out_batches++;
}

bool BatchFence::attach(std::function<bool(int fd)> adopt) {
    int fd = -1;
    {
        std::lock_guard l(m_);
        if (state_ == 2) return false;
        if (state_ == 0) {
            adopters_.push_back(std::move(adopt));
            return true;
        }
        fd = kernel().dup(fence_.get());
    }
    if (fd < 0) return false;
    count_once(adopt(fd));
    return true;
}

void BatchFence::submitted(int fence) {
    std::vector<std::function<bool(int)>> adopters;
    {
        std::lock_guard l(m_);
        fence_.reset(kernel().dup(fence));
        state_ = fence_ ? 1 : 2;
        adopters.swap(adopters_);
    }
    bool adopted = false;
    for (auto &adopt : adopters) {
        const int fd = kernel().dup(fence);
        if (fd >= 0 && adopt(fd)) adopted = true;
    }
    count_once(adopted);
}

bool BatchFence::finished_already() {
    std::lock_guard l(m_);
    return state_ == 2;
}

void BatchFence::finished() {
    OwnedFd fd;  // closed outside the lock
    {
        std::lock_guard l(m_);
        state_ = 2;
        adopters_.clear();  // never submitted: the signals keep their own fences
        std::swap(fd, fence_);
    }
}

// ---- the queue's record -------------------------------------------------------------

// A step that is over already (it ran before its enqueue returned) is not
// recorded: its forget_*() came first, and the record would hold its fence
// until the queue's next command.  Checked under the records' lock, which the
// step's forget_*() takes after it closed or finished.
void offer_fence_in(cl_command_queue queue, std::shared_ptr<FenceInOffer> offer) {
    offer->epoch_ = read_epoch().raw;
    std::lock_guard l(records_mutex);
    if (offer->open())
        records()[queue] = std::move(offer);
    else
        records().erase(queue);
}

void record_batch_fence(cl_command_queue queue, std::shared_ptr<BatchFence> batch) {
    batch->epoch_ = read_epoch().raw;
    std::lock_guard l(records_mutex);
    if (!batch->finished_already())
        records()[queue] = std::move(batch);
    else
        records().erase(queue);
}

std::shared_ptr<FenceInOffer> take_fence_in(cl_command_queue queue) { return take<FenceInOffer>(queue); }
std::shared_ptr<BatchFence> take_batch_fence(cl_command_queue queue) { return take<BatchFence>(queue); }

void break_fence_chain(cl_command_queue queue) {
    count_landed();  // auto: every record stamped before this is stale
    // Only `on` drops the record: at auto the epoch says it all, and a copy
    // the ICD does takes no lock for it.
    if (chain_mode() != ChainMode::on) return;
    std::lock_guard l(records_mutex);
    records().erase(queue);
}

void forget_fence_in(cl_command_queue queue, const FenceInOffer *offer) { forget_record(queue, offer); }
void forget_batch_fence(cl_command_queue queue, const BatchFence *batch) { forget_record(queue, batch); }

}  // namespace cldmabuf
