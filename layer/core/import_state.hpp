// Per-import state that belongs to one feature, kept in that feature's own
// side table instead of on Import (which holds only what every import has).
//
// The blitter's GEM handle of the dma-buf (layer/blit/gem_cache), a tiled
// image's linear shadow (layer/blit/tiled_shadow) and the copy route's pinned
// staging (layer/handoff/staging) each keep an ImportState<T>.  A table
// registers itself on first use; the import's teardown, and a failed import,
// call forget_import_state(), which drops the import's entry in every table.
#pragma once

#include <mutex>
#include <unordered_map>
#include <utility>

namespace cldmabuf {

struct Import;

using ForgetImportState = void (*)(const Import &);
// Adds `forget` to the functions forget_import_state() calls (once each).
void register_import_state(ForgetImportState forget);
// Drops the import's state in every feature's table (teardown, failed import).
void forget_import_state(const Import &import);

// One feature's table.  T is owned by the table; the entry lives until the
// import's teardown.  Lookups hand out a pointer to T: callers use it only
// while the import is alive (every user is an operation on that import).
template <class T>
class ImportState {
public:
    explicit ImportState(ForgetImportState forget) { register_import_state(forget); }

    T *find(const Import &import) {
        std::lock_guard lock(mutex_);
        auto it = map_.find(&import);
        return it == map_.end() ? nullptr : &it->second;
    }
    // Inserts `value` unless an entry exists; returns the entry.
    T &emplace(const Import &import, T value) {
        std::lock_guard lock(mutex_);
        return map_.try_emplace(&import, std::move(value)).first->second;
    }
    // Removes the import's entry and hands it out (T{} when there is none).
    T take(const Import &import) {
        std::lock_guard lock(mutex_);
        auto it = map_.find(&import);
        if (it == map_.end()) return T{};
        T out = std::move(it->second);
        map_.erase(it);
        return out;
    }
    void forget(const Import &import) {
        [[maybe_unused]] T gone;  // a trivial T (a flag, an enum) is never read
        {
            std::lock_guard lock(mutex_);
            auto it = map_.find(&import);
            if (it == map_.end()) return;
            gone = std::move(it->second);
            map_.erase(it);
        }
        // `gone` is destroyed here, outside the lock (it may close GEM handles).
    }

private:
    std::mutex mutex_;
    std::unordered_map<const Import *, T> map_;
};

}  // namespace cldmabuf
