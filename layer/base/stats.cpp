#include "layer/base/stats.hpp"
#include "layer/base/settings.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>

namespace cldmabuf {
namespace {
std::mutex fallback_mutex;
std::map<std::string, uint64_t> fallback_counts;
}  // namespace

Stats &stats() {
    static Stats *s = new Stats;  // never destroyed: callbacks may count during exit
    return *s;
}

void Stats::count_fallback(const std::string &reason) {
    std::lock_guard lock(fallback_mutex);
    ++fallback_counts[reason];
}

std::map<std::string, uint64_t> Stats::fallbacks() const {
    std::lock_guard lock(fallback_mutex);
    return fallback_counts;
}

std::string Stats::summary() const {
    std::ostringstream out;
    out << "cldmabuf stats: imports=" << imports << " (zero-copy=" << zero_copy_imports
        << " copy=" << copy_imports << " errors=" << import_errors << ")"
        << " zero_copy_bytes=" << zero_copy_bytes << " host_bytes_copied=" << host_bytes_copied
        << " copy_in_bytes=" << copy_in_bytes << " copy_out_bytes=" << copy_out_bytes
        << " staged_bytes=" << staged_bytes << " staged_transfers=" << staged_transfers
        << " direct_transfers=" << direct_transfers << " staging_fallbacks=" << staging_fallbacks
        << " registrations_made=" << registrations_made << " registrations_reused=" << registrations_reused
        << " acquires=" << acquires << " releases=" << releases << " fast_handoffs=" << fast_handoffs
        << " queued_handoffs=" << queued_handoffs << " unwatched_acquires=" << unwatched_acquires << " quiet_handoffs=" << quiet_handoffs << " steps_polled=" << steps_polled << " fence_waits=" << fence_waits
        << " fence_timeouts=" << fence_timeouts << " release_fences_expired=" << release_fences_expired << " blt_cancelled=" << blt_cancelled << " syncs=" << syncs
        << " blt_copies=" << blt_copies << " blt_bytes=" << blt_bytes
        << " blt_fence_in=" << blt_fence_in_batches << " blt_fence_out=" << blt_fence_out_batches
        << " blt_fence_in_fallbacks=" << blt_fence_in_fallbacks
        << " tiled_imports=" << tiled_imports << " detile_bytes=" << detile_bytes
        << " retile_bytes=" << retile_bytes << " alias_merges=" << alias_merges
        << " alias_merged_bytes=" << alias_merged_bytes;
    for (const auto &[reason, count] : fallbacks()) out << " fallback[" << reason << "]=" << count;
    return out.str();
}

bool stats_enabled() {
    const char *v = setting("CLDMABUF_STATS");
    return v && *v && std::string(v) != "0";
}

void print_stats_if_enabled() {
    if (!stats_enabled()) return;
    std::string line = stats().summary() + "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace cldmabuf
