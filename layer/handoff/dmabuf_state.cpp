#include "layer/handoff/dmabuf_state.hpp"

#include "layer/base/kernel_ops.hpp"
#include "layer/core/dmabuf_aliases.hpp"
#include "layer/core/import_state.hpp"

namespace cldmabuf {
namespace {

// The dmabuf_records by dma-buf.  The registry's lock is taken before a record's,
// never after (the teardown removes an empty record under both).  Leaked on
// purpose: ICD threads may still tear imports down at exit.
std::mutex dmabuf_registry_mutex;
auto *dmabuf_records = new std::unordered_map<DmabufKey, std::shared_ptr<DmabufRecord>, DmabufKeyHash>;


void forget_view(const Import &import) {
    std::vector<uint8_t> bytes;  // freed outside the locks
    std::shared_ptr<DmabufRecord> record;
    std::lock_guard registry(dmabuf_registry_mutex);
    auto it = dmabuf_records->find(dmabuf_key(import));
    if (it == dmabuf_records->end()) return;
    record = it->second;
    std::lock_guard lock(record->mutex);
    record->apply(DmabufEvent{.kind = DmabufEventKind::view_gone, .view = view_id(import)});
    if (auto u = record->uploaded.find(view_id(import)); u != record->uploaded.end()) {
        bytes.swap(u->second);
        record->uploaded.erase(u);
    }
    if (record->state.views.empty() && record->state.openings.empty()) dmabuf_records->erase(it);
}

}  // namespace

bool copied_both_ways(const Import &import) {
    return import.route == Route::copy && !(import.flags & (CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY)) &&
           !import.over_tiled_shadow();
}

WideHandOver::~WideHandOver() { kernel().close(fd); }

DmabufActions DmabufRecord::apply(const DmabufEvent &event, std::vector<std::shared_ptr<sync::DmabufSignal>> *attach) {
    DmabufTransition t = dmabuf_step(state, event);
    state = std::move(t.next);
    for (DmabufId h : t.actions.abandon) fences.erase(h), wide.erase(h);
    for (DmabufId h : t.actions.attach) {
        auto it = fences.find(h);
        if (it == fences.end()) continue;
        if (attach) attach->push_back(std::move(it->second));
        fences.erase(it);
    }
    for (DmabufId h : t.actions.attach) wide.erase(h);
    if (event.kind == DmabufEventKind::opening_retired || event.kind == DmabufEventKind::view_gone)
        for (auto it = openings.begin(); it != openings.end();)
            it = state.opening(it->first) ? std::next(it) : openings.erase(it);
    if (t.actions.wake) changed.notify_all();
    return t.actions;
}

void for_each_dmabuf_record(void (*fn)(DmabufRecord &)) {
    std::vector<std::shared_ptr<DmabufRecord>> all;
    {
        std::lock_guard registry(dmabuf_registry_mutex);
        for (const auto &[key, record] : *dmabuf_records) all.push_back(record);
    }
    for (const auto &record : all) fn(*record);
}

std::shared_ptr<DmabufRecord> dmabuf_record(const Import &import) {
    static const bool forgotten_at_teardown = (register_import_state(forget_view), true);
    (void)forgotten_at_teardown;
    std::lock_guard registry(dmabuf_registry_mutex);
    auto &record = (*dmabuf_records)[dmabuf_key(import)];
    if (!record) record = std::make_shared<DmabufRecord>();
    std::lock_guard lock(record->mutex);
    if (!record->state.view(view_id(import)))
        record->apply(
            DmabufEvent{.kind = DmabufEventKind::view_met, .view = view_id(import), .both_ways = copied_both_ways(import)});
    return record;
}

}  // namespace cldmabuf
