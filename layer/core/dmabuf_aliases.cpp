#include "layer/core/dmabuf_aliases.hpp"

#include <sys/types.h>

#include <map>
#include <mutex>
#include <utility>

#include "layer/core/import_state.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {
namespace {

using Identity = std::pair<dev_t, ino_t>;

std::mutex mutex;
std::map<Identity, size_t> live;  // imports per dma-buf, only while > 0
// dma-bufs with two or more live imports: the hot check's one load.
std::atomic<size_t> aliased_bufs{0};

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
            if (it->second == 2) aliased_bufs.fetch_sub(1, std::memory_order_relaxed);
            if (--it->second == 0) live.erase(it);
        }
    }
    counted.forget(import);
}

}  // namespace

void note_dmabuf_import(const Import &import) {
    if (!import.app_fd_identity || counted.find(import)) return;
    const Identity key{import.app_fd_dev, import.app_fd_ino};
    {
        std::lock_guard lock(mutex);
        if (++live[key] == 2) aliased_bufs.fetch_add(1, std::memory_order_relaxed);
    }
    counted.emplace(import, key);
}

size_t dmabuf_import_count(const Import &import) {
    const Identity *id = counted.find(import);
    if (!id) return 0;
    std::lock_guard lock(mutex);
    auto it = live.find(*id);
    return it == live.end() ? 0 : it->second;
}

bool dmabuf_aliased(const Import &import) {
    if (aliased_bufs.load(std::memory_order_relaxed) == 0) return false;
    return dmabuf_import_count(import) > 1;
}

}  // namespace cldmabuf
