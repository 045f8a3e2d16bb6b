#include "layer/handoff/alias_merge.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "layer/base/log.hpp"
#include "layer/base/stats.hpp"
#include "layer/blit/tiled_shadow.hpp"
#include "layer/core/dmabuf_aliases.hpp"
#include "layer/core/import_state.hpp"
#include "layer/handoff/staging.hpp"

namespace cldmabuf {
namespace {

// One import's merge state, kept between its acquire and its release; the
// buffers stay allocated for the next cycle until the import's teardown.
struct Snapshot {
    bool armed = false;
    std::vector<uint8_t> uploaded;  // the host bytes the acquire uploaded
    std::vector<uint8_t> scratch;   // the release's read of the device copy
};

std::atomic<size_t> armed_count{0};

void forget(const Import &import);
ImportState<Snapshot> snapshots{forget};

void disarm(Snapshot &s) {
    if (s.armed) armed_count.fetch_sub(1, std::memory_order_relaxed);
    s.armed = false;
}

void forget(const Import &import) {
    if (Snapshot *s = snapshots.find(import)) disarm(*s);
    snapshots.forget(import);
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

}  // namespace

void *copy_route_host(const Import &import) {
    if (import.is_image) return host_pixels(import).ptr;
    void *registered = registered_mapping(import);
    return registered ? registered : import.mapping;
}

void note_upload(const Import &import) {
    // Uploaded on acquire and written back on release: neither READ_ONLY
    // nor WRITE_ONLY (layer/handoff/transfers.hpp, copied_in/copied_out).
    const bool both_ways = import.route == Route::copy && !(import.flags & (CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY));
    const bool wanted = both_ways && !import.over_tiled_shadow() && dmabuf_aliased(import);
    if (!wanted) {
        if (armed_count.load(std::memory_order_relaxed) != 0)
            if (Snapshot *s = snapshots.find(import)) disarm(*s);
        return;
    }
    Snapshot &s = snapshots.emplace(import, Snapshot{});
    const Rows r = rows_of(import);
    const auto *host = static_cast<const uint8_t *>(copy_route_host(import));
    s.uploaded.resize(r.span());
    for (size_t z = 0; z < r.slices; ++z)
        for (size_t y = 0; y < r.count; ++y)
            std::memcpy(s.uploaded.data() + r.offset(z, y), host + r.offset(z, y), r.row_bytes);
    s.scratch.resize(r.span());
    if (!s.armed) armed_count.fetch_add(1, std::memory_order_relaxed);
    s.armed = true;
    LOG_DEBUG("acquire: import %p shares its dma-buf with %zu other import(s): kept the %zu bytes uploaded, "
              "its release writes back only what the device changed",
              static_cast<void *>(import.mem), dmabuf_import_count(import) - 1, r.span());
}

bool merges_release(const Import &import) {
    if (armed_count.load(std::memory_order_relaxed) == 0) return false;
    const Snapshot *s = snapshots.find(import);
    return s && s->armed;
}

void *release_scratch(const Import &import) {
    Snapshot *s = snapshots.find(import);
    return s && s->armed ? s->scratch.data() : nullptr;
}

size_t merge_release(const Import &import, bool apply) {
    Snapshot *s = snapshots.find(import);
    if (!s || !s->armed) return 0;
    size_t written = 0;
    if (apply) {
        const Rows r = rows_of(import);
        auto *host = static_cast<uint8_t *>(copy_route_host(import));
        for (size_t z = 0; z < r.slices; ++z)
            for (size_t y = 0; y < r.count; ++y) {
                const size_t at = r.offset(z, y);
                written += merge_row(host + at, s->scratch.data() + at, s->uploaded.data() + at, r.row_bytes);
            }
        stats().alias_merges++;
        stats().alias_merged_bytes += written;
        LOG_DEBUG("release: import %p wrote back the %zu bytes its device changed", static_cast<void *>(import.mem),
                  written);
    }
    disarm(*s);
    return written;
}

}  // namespace cldmabuf
