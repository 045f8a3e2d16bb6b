#include "layer/handoff/alias_merge.hpp"

#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "layer/base/log.hpp"
#include "layer/base/stats.hpp"
#include "layer/blit/tiled_shadow.hpp"
#include "layer/core/dmabuf_aliases.hpp"
#include "layer/core/import_state.hpp"
#include "layer/handoff/copy_cycle.hpp"
#include "layer/handoff/staging.hpp"

namespace cldmabuf {

class ReleaseWriteBack {
public:
    WriteBack decided = WriteBack::direct;
    std::vector<uint8_t> scratch;  // the command's Read of the device copy (WriteBack::scratch)
};

namespace {

// One import's part of its dma-buf's record: its CycleState and the bytes
// its acquire uploaded (kept while armed; the buffer stays allocated for
// the next cycle until the import's teardown).
struct ImportCycle {
    CycleState state;
    std::vector<uint8_t> uploaded;
};

// Everything the copy route's write-back knows about one dma-buf: its
// imports' cycles.  All records under one lock, never held across a kernel
// wait (a snapshot or merge is a memcpy of the mapping).
struct DmabufRecord {
    std::unordered_map<const Import *, ImportCycle> imports;
};

std::mutex mutex;
std::unordered_map<DmabufKey, DmabufRecord, DmabufKeyHash> records;

ImportCycle &cycle_of(const Import &import) { return records[dmabuf_key(import)].imports[&import]; }

void forget(const Import &import) {
    std::vector<uint8_t> gone;  // freed outside the lock
    std::lock_guard lock(mutex);
    auto it = records.find(dmabuf_key(import));
    if (it == records.end()) return;
    auto entry = it->second.imports.find(&import);
    if (entry == it->second.imports.end()) return;
    gone.swap(entry->second.uploaded);
    it->second.imports.erase(entry);
    if (it->second.imports.empty()) records.erase(it);
}
[[maybe_unused]] const bool registered = (register_import_state(&forget), true);

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
void take_snapshot(const Import &import, ImportCycle &c) {
    const Rows r = rows_of(import);
    const auto *host = static_cast<const uint8_t *>(copy_route_host(import));
    c.uploaded.resize(r.span());
    for (size_t z = 0; z < r.slices; ++z)
        for (size_t y = 0; y < r.count; ++y)
            std::memcpy(c.uploaded.data() + r.offset(z, y), host + r.offset(z, y), r.row_bytes);
}

void step(const Import &import, ImportCycle &c, CycleEvent event) {
    const CycleStep s = cycle_step(c.state, event);
    if (s.take_snapshot) take_snapshot(import, c);
    c.state = s.next;
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

// The dma-buf of `made` has one more import: every import of it held while
// alone keeps the bytes its acquire uploaded, which the dma-buf still holds
// (nothing wrote it while held: alias_merge.hpp).
void late_alias(const Import &made) {
    std::lock_guard lock(mutex);
    auto it = records.find(dmabuf_key(made));
    if (it == records.end()) return;
    for (auto &[import, cycle] : it->second.imports) {
        if (import == &made) continue;
        const bool was_armed = cycle.state.armed;
        step(*import, cycle, CycleEvent::alias_appeared);
        if (!was_armed && cycle.state.armed)
            LOG_DEBUG("import %p now shares its dma-buf with import %p: kept what its acquire uploaded (%zu bytes), "
                      "its release writes back only what its device changed",
                      static_cast<const void *>(import->mem), static_cast<void *>(made.mem), cycle.uploaded.size());
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
    const bool aliased = dmabuf_aliased(import);
    std::lock_guard lock(mutex);
    ImportCycle &c = cycle_of(import);
    step(import, c, aliased ? CycleEvent::acquire_ran_aliased : CycleEvent::acquire_ran_alone);
    if (aliased)
        LOG_DEBUG("acquire: import %p shares its dma-buf with %zu other import(s): kept the %zu bytes uploaded, "
                  "its release writes back only what the device changed",
                  static_cast<void *>(import.mem), dmabuf_import_count(import) - 1, c.uploaded.size());
}

std::shared_ptr<ReleaseWriteBack> decide_release(const Import &import) {
    if (!both_ways(import)) return nullptr;
    const bool aliased = dmabuf_aliased(import);
    auto out = std::make_shared<ReleaseWriteBack>();
    {
        std::lock_guard lock(mutex);
        out->decided = decide_write_back(aliased, cycle_of(import).state.armed);
    }
    if (out->decided == WriteBack::scratch) out->scratch.resize(rows_of(import).span());
    return out;
}

void *release_scratch(const ReleaseWriteBack *write_back) {
    if (!write_back || write_back->decided != WriteBack::scratch) return nullptr;
    return const_cast<uint8_t *>(write_back->scratch.data());
}

size_t finish_release(const Import &import, const ReleaseWriteBack *write_back, bool apply) {
    if (!both_ways(import) || !write_back) return 0;
    std::lock_guard lock(mutex);
    ImportCycle &c = cycle_of(import);
    size_t written = 0;
    const Finish finish = finish_write_back(write_back->decided, c.state, apply);
    if (finish != Finish::nothing) {
        const Rows r = rows_of(import);
        auto *host = static_cast<uint8_t *>(copy_route_host(import));
        const uint8_t *scratch = write_back->scratch.data();
        for (size_t z = 0; z < r.slices; ++z)
            for (size_t y = 0; y < r.count; ++y) {
                const size_t at = r.offset(z, y);
                if (finish == Finish::merge)
                    written += merge_row(host + at, scratch + at, c.uploaded.data() + at, r.row_bytes);
                else
                    std::memcpy(host + at, scratch + at, r.row_bytes);
            }
        if (finish == Finish::merge) {
            stats().alias_merges++;
            stats().alias_merged_bytes += written;
            LOG_DEBUG("release: import %p wrote back the %zu bytes its device changed", static_cast<void *>(import.mem),
                      written);
        }
    }
    step(import, c, CycleEvent::release_ran);
    return written;
}

}  // namespace cldmabuf
