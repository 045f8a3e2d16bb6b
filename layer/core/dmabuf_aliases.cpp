#include "layer/core/dmabuf_aliases.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <utility>

#include "layer/core/import_state.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {
namespace {

using Identity = std::pair<dev_t, ino_t>;

std::mutex mutex;
std::map<Identity, std::vector<const Import *>> live;  // imports per dma-buf, only while any
// dma-bufs with two or more live imports: the hot check's one load.
std::atomic<size_t> aliased_bufs{0};
std::atomic<AliasListener> listener{nullptr};

void forget(const Import &import);
// The import's counted identity (the entry exists only once counted).
ImportState<Identity> counted{forget};

void forget(const Import &import) {
    const Identity *id = counted.find(import);
    if (!id) return;
    const Identity key = *id;
    {
        std::lock_guard lock(mutex);
        auto it = live.find(key);
        if (it != live.end()) {
            auto &imports = it->second;
            imports.erase(std::remove(imports.begin(), imports.end(), &import), imports.end());
            if (imports.size() == 1) aliased_bufs.fetch_sub(1, std::memory_order_relaxed);
            if (imports.empty()) live.erase(it);
        }
    }
    counted.forget(import);
}

}  // namespace

DmabufKey dmabuf_key(const Import &import) {
    DmabufKey k;
    if (import.app_fd_identity) {
        k.dev = import.app_fd_id.dev;
        k.ino = import.app_fd_id.ino;
    } else {
        k.alone = &import;
    }
    return k;
}

void note_dmabuf_import(const Import &import) {
    if (!import.app_fd_identity || counted.find(import)) return;
    const Identity key{import.app_fd_id.dev, import.app_fd_id.ino};
    bool aliased = false;
    counted.emplace(import, key);
    {
        std::lock_guard lock(mutex);
        auto &imports = live[key];
        imports.push_back(&import);
        aliased = imports.size() >= 2;
        if (imports.size() == 2) aliased_bufs.fetch_add(1, std::memory_order_relaxed);
    }
    if (aliased)
        if (AliasListener l = listener.load(std::memory_order_acquire)) l(import);
}

size_t dmabuf_import_count(const Import &import) {
    const Identity *id = counted.find(import);
    if (!id) return 0;
    std::lock_guard lock(mutex);
    auto it = live.find(*id);
    return it == live.end() ? 0 : it->second.size();
}

bool dmabuf_aliased(const Import &import) {
    if (aliased_bufs.load(std::memory_order_relaxed) == 0) return false;
    return dmabuf_import_count(import) > 1;
}

std::vector<cl_mem> dmabuf_alias_mems(const Import &import) {
    std::vector<cl_mem> mems{import.mem};
    if (aliased_bufs.load(std::memory_order_relaxed) == 0) return mems;
    const Identity *id = counted.find(import);
    if (!id) return mems;
    std::lock_guard lock(mutex);
    auto it = live.find(*id);
    if (it == live.end()) return mems;
    for (const Import *other : it->second)
        if (other != &import) mems.push_back(other->mem);
    return mems;
}

void set_alias_listener(AliasListener l) { listener.store(l, std::memory_order_release); }

}  // namespace cldmabuf
