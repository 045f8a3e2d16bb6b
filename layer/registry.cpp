#include "layer/registry.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

#include "layer/dmabuf/primitives.hpp"
#include "layer/import_state.hpp"

namespace cldmabuf {

uint64_t Import::sync_access_flags() const {
    if (flags & CL_MEM_READ_ONLY) return DMABUF_SYNC_READ;
    if (flags & CL_MEM_WRITE_ONLY) return DMABUF_SYNC_WRITE;
    return DMABUF_SYNC_READ | DMABUF_SYNC_WRITE;
}

std::atomic<size_t> import_registry_detail::live{0};

void ImportRegistry::add(const std::shared_ptr<Import> &import) {
    std::unique_lock lock(mutex_);
    map_[import->mem] = import;
    import_registry_detail::live.store(map_.size(), std::memory_order_relaxed);
}

std::shared_ptr<Import> ImportRegistry::remove(cl_mem mem) {
    std::unique_lock lock(mutex_);
    auto it = map_.find(mem);
    if (it == map_.end()) return nullptr;
    auto import = std::move(it->second);
    map_.erase(it);
    import_registry_detail::live.store(map_.size(), std::memory_order_relaxed);
    return import;
}

void ImportRegistry::remove_if(cl_mem mem, const Import *import) {
    std::unique_lock lock(mutex_);
    auto it = map_.find(mem);
    if (it == map_.end() || it->second.get() != import) return;
    map_.erase(it);
    import_registry_detail::live.store(map_.size(), std::memory_order_relaxed);
}

std::shared_ptr<Import> ImportRegistry::find(cl_mem mem, size_t *offset) const {
    if (empty() || !mem) return nullptr;
    std::shared_lock lock(mutex_);
    if (auto it = map_.find(mem); it != map_.end()) {
        if (offset) *offset = 0;
        return it->second;
    }
    if (auto it = subs_.find(mem); it != subs_.end()) {
        if (offset) *offset = it->second.origin;
        return it->second.parent;
    }
    return nullptr;
}

void ImportRegistry::add_sub(cl_mem sub, const std::shared_ptr<Import> &parent, size_t origin) {
    std::unique_lock lock(mutex_);
    subs_[sub] = Sub{parent, origin};
}

void ImportRegistry::remove_sub(cl_mem sub) {
    std::unique_lock lock(mutex_);
    subs_.erase(sub);
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
