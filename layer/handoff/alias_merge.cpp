#include "layer/handoff/alias_merge.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "layer/base/log.hpp"
#include "layer/base/stats.hpp"
#include "layer/blit/tiled_shadow.hpp"
#include "layer/core/dmabuf_aliases.hpp"
#include "layer/core/import_state.hpp"
#include "layer/handoff/staging.hpp"

namespace cldmabuf {
namespace {

// One import's merge state, kept from its acquire to its release; the
// buffers stay allocated for the next cycle until the import's teardown.
// Every field under `mutex` (a late alias's snapshot is taken on the thread
// that made the alias).
struct Snapshot {
    bool armed = false;         // `uploaded` holds what this cycle's acquire uploaded
    bool watching = false;      // acquired alone: a late alias snapshots it (in `watched`)
    bool merging = false;       // decide_release: this release merges
    bool decided_whole = false; // decide_release: no merge; not watched until the release ran
    std::vector<uint8_t> uploaded;  // the host bytes the acquire uploaded
    std::vector<uint8_t> scratch;   // the release's read of the device copy
};

std::mutex mutex;
std::vector<const Import *> watched;  // imports with watching set
// Imports with merging set: the hot check's one load.  Relaxed is enough:
// a release's decide_release() and its merges_release()/release_scratch()
// run on the one thread that enqueues it (program order); every other
// reader takes `mutex`.
std::atomic<size_t> merging_count{0};

void forget(const Import &import);
ImportState<Snapshot> snapshots{forget};

void stop_watching(const Import &import, Snapshot &s) {
    if (!s.watching) return;
    s.watching = false;
    watched.erase(std::remove(watched.begin(), watched.end(), &import), watched.end());
}

void set_merging(Snapshot &s, bool on) {
    if (s.merging != on) on ? merging_count.fetch_add(1, std::memory_order_relaxed)
                            : merging_count.fetch_sub(1, std::memory_order_relaxed);
    s.merging = on;
}

void forget(const Import &import) {
    {
        std::lock_guard lock(mutex);
        if (Snapshot *s = snapshots.find(import)) {
            stop_watching(import, *s);
            set_merging(*s, false);
        }
    }
    snapshots.forget(import);
}

// Uploaded on acquire and written back on release: neither READ_ONLY
// nor WRITE_ONLY (layer/handoff/transfers.hpp, copied_in/copied_out).
bool both_ways(const Import &import) {
    return import.route == Route::copy && !(import.flags & (CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY)) &&
           !import.over_tiled_shadow();
}

// The rows of host bytes a transfer of the import moves, relative to
// copy_route_host(): the whole buffer, or each image row (between rows lie
// the pitch's padding bytes, which no transfer touches).
struct Rows {
    size_t count = 1, slices = 1, row_bytes = 0, row_pitch = 0, slice_pitch = 0;
    size_t span() const { return (slices - 1) * slice_pitch + (count - 1) * row_pitch + row_bytes; }
    size_t offset(size_t slice, size_t row) const { return slice * slice_pitch + row * row_pitch; }
};

Rows rows_of(const Import &import) {
    Rows r;
    if (!import.is_image) {
        r.row_bytes = r.row_pitch = import.size;
        return r;
    }
    const HostPixels px = host_pixels(import);
    r.count = std::max<size_t>(import.image.region[1], 1);
    r.slices = std::max<size_t>(import.image.region[2], 1);
    r.row_bytes = import.image.bytes / (r.count * r.slices);
    r.row_pitch = px.row_pitch ? px.row_pitch : r.row_bytes;
    r.slice_pitch = px.slice_pitch ? px.slice_pitch : r.count * r.row_pitch;
    return r;
}

// Keeps the dma-buf's bytes as they are now (under `mutex`, CPU bracket open).
void take_snapshot(const Import &import, Snapshot &s) {
    const Rows r = rows_of(import);
    const auto *host = static_cast<const uint8_t *>(copy_route_host(import));
    s.uploaded.resize(r.span());
    for (size_t z = 0; z < r.slices; ++z)
        for (size_t y = 0; y < r.count; ++y)
            std::memcpy(s.uploaded.data() + r.offset(z, y), host + r.offset(z, y), r.row_bytes);
    s.armed = true;
}

// Writes dst[i] = now[i] wherever now[i] != before[i]; returns the bytes written.
size_t merge_row(uint8_t *dst, const uint8_t *now, const uint8_t *before, size_t len) {
    constexpr size_t chunk = 64;
    size_t written = 0;
    for (size_t at = 0; at < len; at += chunk) {
        const size_t n = std::min(chunk, len - at);
        if (std::memcmp(now + at, before + at, n) == 0) continue;
        for (size_t i = at; i < at + n; ++i)
            if (now[i] != before[i]) {
                dst[i] = now[i];
                ++written;
            }
    }
    return written;
}

// The dma-buf of `made` has one more import: every import of it acquired
// while alone (watched) keeps the bytes it uploaded, which the dma-buf still
// holds (nothing wrote it while acquired: alias_merge.hpp).
void late_alias(const Import &made) {
    const DmabufKey key = dmabuf_key(made);
    std::lock_guard lock(mutex);
    for (size_t i = 0; i < watched.size();) {
        const Import &other = *watched[i];
        if (&other == &made || !(dmabuf_key(other) == key)) {
            ++i;
            continue;
        }
        Snapshot *s = snapshots.find(other);
        if (s) {
            take_snapshot(other, *s);
            s->watching = false;
            LOG_DEBUG("import %p now shares its dma-buf with import %p: kept what its acquire uploaded (%zu bytes), "
                      "its release writes back only what its device changed",
                      static_cast<void *>(other.mem), static_cast<void *>(made.mem), s->uploaded.size());
        }
        watched.erase(watched.begin() + static_cast<std::ptrdiff_t>(i));
    }
}

// Installed at load (a static object: the listener pointer is constant-initialised).
[[maybe_unused]] const bool listening = (set_alias_listener(&late_alias), true);

}  // namespace

void *copy_route_host(const Import &import) {
    if (import.is_image) return host_pixels(import).ptr;
    void *registered = registered_mapping(import);
    return registered ? registered : import.mapping;
}

void note_upload(const Import &import) {
    if (!both_ways(import)) return;
    std::lock_guard lock(mutex);
    Snapshot &s = snapshots.emplace(import, Snapshot{});
    stop_watching(import, s);
    s.armed = false;
    if (dmabuf_aliased(import)) {
        take_snapshot(import, s);
        LOG_DEBUG("acquire: import %p shares its dma-buf with %zu other import(s): kept the %zu bytes uploaded, "
                  "its release writes back only what the device changed",
                  static_cast<void *>(import.mem), dmabuf_import_count(import) - 1, s.uploaded.size());
    } else if (!s.decided_whole) {
        s.watching = true;
        watched.push_back(&import);
    }
}

void decide_release(const Import &import) {
    if (!both_ways(import)) return;
    std::lock_guard lock(mutex);
    Snapshot &s = snapshots.emplace(import, Snapshot{});
    const bool merge = s.armed || dmabuf_aliased(import);
    set_merging(s, merge);
    s.decided_whole = !merge;
    // A whole write-back's Read goes into the dma-buf: no late snapshot of it.
    if (!merge) stop_watching(import, s);
}

bool merges_release(const Import &import) {
    if (merging_count.load(std::memory_order_relaxed) == 0) return false;
    std::lock_guard lock(mutex);
    const Snapshot *s = snapshots.find(import);
    return s && s->merging;
}

void *release_scratch(const Import &import) {
    if (merging_count.load(std::memory_order_relaxed) == 0) return nullptr;
    std::lock_guard lock(mutex);
    Snapshot *s = snapshots.find(import);
    if (!s || !s->merging) return nullptr;
    s->scratch.resize(rows_of(import).span());
    return s->scratch.data();
}

size_t finish_release(const Import &import, bool apply) {
    if (!both_ways(import)) return 0;
    std::lock_guard lock(mutex);
    Snapshot *s = snapshots.find(import);
    if (!s) return 0;
    size_t written = 0;
    if (s->merging && apply) {
        const Rows r = rows_of(import);
        auto *host = static_cast<uint8_t *>(copy_route_host(import));
        for (size_t z = 0; z < r.slices; ++z)
            for (size_t y = 0; y < r.count; ++y) {
                const size_t at = r.offset(z, y);
                if (s->armed) {
                    written += merge_row(host + at, s->scratch.data() + at, s->uploaded.data() + at, r.row_bytes);
                } else {
                    // Merging, but the acquire found no alias (it went away
                    // meanwhile): no snapshot, so the device copy goes back whole.
                    std::memcpy(host + at, s->scratch.data() + at, r.row_bytes);
                }
            }
        if (s->armed) {
            stats().alias_merges++;
            stats().alias_merged_bytes += written;
            LOG_DEBUG("release: import %p wrote back the %zu bytes its device changed", static_cast<void *>(import.mem),
                      written);
        }
    }
    set_merging(*s, false);
    s->armed = false;
    s->decided_whole = false;
    stop_watching(import, *s);
    return written;
}

}  // namespace cldmabuf
