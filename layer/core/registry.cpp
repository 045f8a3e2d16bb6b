#include "layer/core/registry.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

#include "layer/dmabuf/primitives.hpp"
#include "layer/core/import_state.hpp"

namespace cldmabuf {

uint64_t Import::sync_access_flags() const {
    if (flags & CL_MEM_READ_ONLY) return DMABUF_SYNC_READ;
    if (flags & CL_MEM_WRITE_ONLY) return DMABUF_SYNC_WRITE;
    return DMABUF_SYNC_READ | DMABUF_SYNC_WRITE;
}

std::atomic<size_t> import_registry_detail::live{0};
std::atomic<size_t> import_registry_detail::mem_handles{0};

void ImportRegistry::counted() {
    const size_t now = map_.size() + subs_.size();
    const size_t was = import_registry_detail::live.exchange(now, std::memory_order_relaxed);
    import_registry_detail::mem_handles.fetch_add(now - was, std::memory_order_relaxed);  // modulo: a decrease too
}

size_t ImportRegistry::size() const {
    std::shared_lock lock(mutex_);
    return map_.size();
}

void ImportRegistry::add(const std::shared_ptr<Import> &import) {
    std::unique_lock lock(mutex_);
    map_[import->mem] = Entry{import, 1};
    subs_.erase(import->mem);  // a sub-buffer's handle that came back as this import
    counted();
}

std::shared_ptr<Import> ImportRegistry::remove(cl_mem mem) {
    std::unique_lock lock(mutex_);
    auto it = map_.find(mem);
    if (it == map_.end()) return nullptr;
    auto import = std::move(it->second.import);
    map_.erase(it);
    counted();
    return import;
}

void ImportRegistry::remove_if(cl_mem mem, const Import *import) {
    std::unique_lock lock(mutex_);
    auto it = map_.find(mem);
    if (it == map_.end() || it->second.import.get() != import) return;
    map_.erase(it);
    counted();
}

std::shared_ptr<Import> ImportRegistry::find(cl_mem mem, size_t *offset) const {
    if (empty() || !mem) return nullptr;
    std::shared_lock lock(mutex_);
    if (auto it = map_.find(mem); it != map_.end()) {
        if (offset) *offset = 0;
        return it->second.import;
    }
    if (auto it = subs_.find(mem); it != subs_.end()) {
        if (offset) *offset = it->second.origin;
        return it->second.parent;
    }
    return nullptr;
}

uint64_t ImportRegistry::add_sub(cl_mem sub, const std::shared_ptr<Import> &parent, size_t origin) {
    std::unique_lock lock(mutex_);
    const uint64_t token = next_token_++;
    subs_[sub] = Sub{parent, origin, token, 1};
    map_.erase(sub);  // an import's handle that came back as this sub-buffer
    counted();
    return token;
}

void ImportRegistry::remove_sub(cl_mem sub, uint64_t token) {
    std::unique_lock lock(mutex_);
    auto it = subs_.find(sub);
    if (it == subs_.end() || it->second.token != token) return;
    subs_.erase(it);
    counted();
}

void ImportRegistry::retire(cl_mem mem) {
    std::unique_lock lock(mutex_);
    const size_t gone = map_.erase(mem) + subs_.erase(mem);
    if (gone) counted();
}

void ImportRegistry::retain_by_app(cl_mem mem) {
    std::unique_lock lock(mutex_);
    if (auto it = map_.find(mem); it != map_.end()) {
        ++it->second.app_refs;
    } else if (auto sub = subs_.find(mem); sub != subs_.end()) {
        ++sub->second.app_refs;
    }
}

void ImportRegistry::release_by_app(cl_mem mem) {
    std::unique_lock lock(mutex_);
    if (auto it = map_.find(mem); it != map_.end()) {
        if (--it->second.app_refs == 0) map_.erase(it);
    } else if (auto sub = subs_.find(mem); sub != subs_.end()) {
        if (--sub->second.app_refs == 0) subs_.erase(sub);
    } else {
        return;
    }
    counted();
}

ImportRegistry &imports() {
    static ImportRegistry *registry = new ImportRegistry;  // outlives ICD callbacks at exit
    return *registry;
}

void EventTypeRegistry::add(cl_event event, cl_command_type type) {
    std::lock_guard lock(mutex_);
    Entry fresh;  // a reused handle starts clean
    fresh.type = type;
    map_[event] = fresh;
    count_.store(map_.size(), std::memory_order_relaxed);
}

void EventTypeRegistry::hold(cl_event event) {
    std::lock_guard lock(mutex_);
    if (auto it = map_.find(event); it != map_.end()) ++it->second.holds;
}

void EventTypeRegistry::drop(cl_event event) {
    std::lock_guard lock(mutex_);
    auto it = map_.find(event);
    if (it == map_.end() || --it->second.holds > 0) return;
    map_.erase(it);  // the handle may be reused by the ICD after this
    count_.store(map_.size(), std::memory_order_relaxed);
}

bool EventTypeRegistry::contains(cl_event event) const {
    if (empty()) return false;
    std::lock_guard lock(mutex_);
    return map_.count(event) != 0;
}

void EventTypeRegistry::set_times(cl_event event, const StepTimes &times) {
    std::lock_guard lock(mutex_);
    auto it = map_.find(event);
    if (it == map_.end()) return;
    it->second.timed = true;
    it->second.times = times;
}

bool EventTypeRegistry::times(cl_event event, StepTimes *times) const {
    if (empty()) return false;
    std::lock_guard lock(mutex_);
    auto it = map_.find(event);
    if (it == map_.end() || !it->second.timed) return false;
    *times = it->second.times;
    return true;
}

bool EventTypeRegistry::find(cl_event event, cl_command_type *type) const {
    if (empty()) return false;
    std::lock_guard lock(mutex_);
    auto it = map_.find(event);
    if (it == map_.end() || !it->second.type) return false;
    *type = it->second.type;
    return true;
}

void EventTypeRegistry::set_failed(cl_event event, cl_int status) {
    std::lock_guard lock(mutex_);
    auto it = map_.find(event);
    if (it != map_.end()) it->second.status = status;
}

bool EventTypeRegistry::failed(cl_event event, cl_int *status) const {
    if (empty()) return false;
    std::lock_guard lock(mutex_);
    auto it = map_.find(event);
    if (it == map_.end() || it->second.status >= 0) return false;
    *status = it->second.status;
    return true;
}

void EventTypeRegistry::remove(cl_event event) {
    std::lock_guard lock(mutex_);
    map_.erase(event);
    count_.store(map_.size(), std::memory_order_relaxed);
}

EventTypeRegistry &event_types() {
    static EventTypeRegistry *registry = new EventTypeRegistry;
    return *registry;
}

namespace {
std::mutex forget_mutex;
std::vector<ForgetImportState> &forgetters() {
    static auto *list = new std::vector<ForgetImportState>;  // outlives static destruction
    return *list;
}
}  // namespace

void register_import_state(ForgetImportState forget) {
    std::lock_guard lock(forget_mutex);
    auto &list = forgetters();
    if (std::find(list.begin(), list.end(), forget) == list.end()) list.push_back(forget);
}

void forget_import_state(const Import &import) {
    std::vector<ForgetImportState> list;
    {
        std::lock_guard lock(forget_mutex);
        list = forgetters();
    }
    for (ForgetImportState forget : list) forget(import);
}

}  // namespace cldmabuf
