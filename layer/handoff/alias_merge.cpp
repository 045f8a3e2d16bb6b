#include "layer/handoff/alias_merge.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

#include "layer/base/log.hpp"
#include "layer/base/stats.hpp"
#include "layer/blit/tiled_shadow.hpp"
#include "layer/core/dmabuf_aliases.hpp"
#include "layer/handoff/copy_cycle.hpp"
#include "layer/handoff/dmabuf_state.hpp"
#include "layer/handoff/staging.hpp"

namespace cldmabuf {

class ReleaseWriteBack {
public:
    WriteBack decided = WriteBack::direct;
    std::vector<uint8_t> scratch;  // the command's Read of the device copy (WriteBack::scratch)
};

namespace {


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

// Keeps the dma-buf's bytes as they are now as `view`'s snapshot (under the
// record's lock, CPU bracket open): the actions' snapshots name only `import`
// or, for a late alias, views of the same dma-buf, found by their record.
void take_snapshot(const Import &import, std::vector<uint8_t> &into) {
    const Rows r = rows_of(import);
    const auto *host = static_cast<const uint8_t *>(copy_route_host(import));
    into.resize(r.span());
    for (size_t z = 0; z < r.slices; ++z)
        for (size_t y = 0; y < r.count; ++y)
            std::memcpy(into.data() + r.offset(z, y), host + r.offset(z, y), r.row_bytes);
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

// The dma-buf of `made` has one more import: every view of it held while
// alone keeps the bytes its acquire uploaded, which the dma-buf still holds
// (nothing wrote it while held: alias_merge.hpp).  The snapshot reads the
// held view's own mapping: the views are the record's, each named by its
// import, alive while its view is.
void late_alias(const Import &made) {
    auto record = dmabuf_record(made);
    std::lock_guard lock(record->mutex);
    const DmabufActions a =
        record->apply(DmabufEvent{.kind = DmabufEventKind::alias_appeared, .view = view_id(made)});
    for (ViewId v : a.snapshot) {
        const auto *import = reinterpret_cast<const Import *>(v);
        take_snapshot(*import, record->uploaded[v]);
        LOG_DEBUG("import %p now shares its dma-buf with import %p: kept what its acquire uploaded (%zu bytes), "
                  "its release writes back only what its device changed",
                  static_cast<const void *>(import->mem), static_cast<void *>(made.mem), record->uploaded[v].size());
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

const void *upload_source(const Import &import) {
    if (!copied_both_ways(import) || !dmabuf_aliased(import)) return nullptr;
    auto record = dmabuf_record(import);
    std::lock_guard lock(record->mutex);
    auto &kept = record->uploaded[view_id(import)];
    kept.resize(rows_of(import).span());  // the same span every time: never moves once sized
    return kept.data();
}

const void *note_upload(const Import &import, bool from_snapshot) {
    if (!copied_both_ways(import)) return nullptr;
    // Uploading from the snapshot, the import keeps one even when the alias
    // went away meanwhile: its release then merges, which is right alone too.
    const bool aliased = from_snapshot || dmabuf_aliased(import);
    auto record = dmabuf_record(import);
    std::lock_guard lock(record->mutex);
    const DmabufActions a = record->apply(
        DmabufEvent{.kind = DmabufEventKind::acquire_ran, .view = view_id(import), .aliased = aliased});
    const void *kept = nullptr;
    for (ViewId v : a.snapshot) {
        take_snapshot(import, record->uploaded[v]);
        kept = record->uploaded[v].data();
    }
    if (aliased)
        LOG_DEBUG("acquire: import %p shares its dma-buf with %zu other import(s): kept the %zu bytes uploaded, "
                  "its release writes back only what the device changed",
                  static_cast<void *>(import.mem), dmabuf_import_count(import) - 1,
                  record->uploaded[view_id(import)].size());
    return kept;
}

std::shared_ptr<ReleaseWriteBack> decide_release(const Import &import) {
    if (!copied_both_ways(import)) return nullptr;
    const bool aliased = dmabuf_aliased(import);
    auto out = std::make_shared<ReleaseWriteBack>();
    {
        auto record = dmabuf_record(import);
        std::lock_guard lock(record->mutex);
        out->decided = record
                           ->apply(DmabufEvent{.kind = DmabufEventKind::release_decided, .view = view_id(import),
                                               .aliased = aliased})
                           .write_back;
    }
    if (out->decided == WriteBack::scratch) out->scratch.resize(rows_of(import).span());
    return out;
}

void *release_scratch(const ReleaseWriteBack *write_back) {
    if (!write_back || write_back->decided != WriteBack::scratch) return nullptr;
    return const_cast<uint8_t *>(write_back->scratch.data());
}

size_t finish_release(const Import &import, const ReleaseWriteBack *write_back, bool apply) {
    if (!copied_both_ways(import) || !write_back) return 0;
    auto record = dmabuf_record(import);
    std::lock_guard lock(record->mutex);
    const Finish finish = record
                              ->apply(DmabufEvent{.kind = DmabufEventKind::release_ran, .view = view_id(import),
                                                  .ok = apply, .decided = write_back->decided})
                              .finish;
    size_t written = 0;
    if (finish != Finish::nothing) {
        const Rows r = rows_of(import);
        auto *host = static_cast<uint8_t *>(copy_route_host(import));
        const uint8_t *scratch = write_back->scratch.data();
        const uint8_t *uploaded = record->uploaded[view_id(import)].data();
        for (size_t z = 0; z < r.slices; ++z)
            for (size_t y = 0; y < r.count; ++y) {
                const size_t at = r.offset(z, y);
                if (finish == Finish::merge)
                    written += merge_row(host + at, scratch + at, uploaded + at, r.row_bytes);
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
    return written;
}

}  // namespace cldmabuf
