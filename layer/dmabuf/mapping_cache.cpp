#include "layer/dmabuf/mapping_cache.hpp"

#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <list>
#include <mutex>

#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/base/settings.hpp"

namespace cldmabuf {
namespace {

struct Entry {
    dev_t dev = 0;
    ino_t ino = 0;
    void *addr = nullptr;
    size_t len = 0;
    bool writable = false;
    unsigned users = 0;  // live imports using it; 0 = idle
};

uint64_t budget_bytes() {
    static const uint64_t budget = [] {
        const char *v = setting("CLDMABUF_MAP_CACHE_MB");
        if (!v || !*v) return uint64_t{0};
        char *end = nullptr;
        const unsigned long long mb = std::strtoull(v, &end, 10);
        if (*end) {
            LOG_WARN("CLDMABUF_MAP_CACHE_MB=%s is not a number of MiB: mapping cache off", v);
            return uint64_t{0};
        }
        return uint64_t(mb) << 20;
    }();
    return budget;
}

struct Cache {
    std::mutex mu;
    std::list<Entry> entries;  // idle ones in least-recently-released order at the front
    MappingCacheStats stats;

    // Unmaps idle entries, oldest first, until idle bytes fit `limit`.
    void trim(uint64_t limit) {
        for (auto it = entries.begin(); it != entries.end() && stats.idle_bytes > limit;) {
            if (it->users) {
                ++it;
                continue;
            }
            kernel().munmap(it->addr, it->len);
            stats.idle_bytes -= it->len;
            stats.evictions++;
            stats.live_mappings--;
            it = entries.erase(it);
        }
    }
};

Cache &cache() {
    static Cache *c = new Cache;  // never destroyed: imports may outlive static teardown
    return *c;
}

}  // namespace

void *acquire_mapping(int fd, size_t len, bool writable, size_t *mapped_len) {
    Cache &c = cache();
    struct stat st;
    const bool cacheable = budget_bytes() > 0 && kernel().fstat(fd, &st) == 0;
    if (cacheable) {
        std::lock_guard lock(c.mu);
        for (auto it = c.entries.begin(); it != c.entries.end(); ++it) {
            // Protection must match both ways: a read-only object's mapping
            // stays read-only (no write through the ICD reaches the dma-buf).
            if (it->dev != st.st_dev || it->ino != st.st_ino || it->len < len || writable != it->writable)
                continue;
            if (it->users++ == 0) c.stats.idle_bytes -= it->len;
            c.stats.hits++;
            c.entries.splice(c.entries.end(), c.entries, it);  // most recently used last
            *mapped_len = it->len;
            return it->addr;
        }
    }
    void *addr = kernel().mmap(nullptr, len, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
    if (addr == MAP_FAILED) return MAP_FAILED;
    *mapped_len = len;
    if (cacheable) {
        std::lock_guard lock(c.mu);
        c.stats.misses++;
        c.stats.live_mappings++;
        c.entries.push_back(Entry{st.st_dev, st.st_ino, addr, len, writable, 1});
    }
    return addr;
}

void release_mapping(void *addr, size_t mapped_len, bool keep) {
    Cache &c = cache();
    {
        std::lock_guard lock(c.mu);
        for (auto it = c.entries.begin(); it != c.entries.end(); ++it) {
            if (it->addr != addr) continue;
            if (--it->users > 0) return;
            // A mapping larger than the whole budget would only push every
            // other idle one out before going itself.
            if (!keep || it->len > budget_bytes()) {
                kernel().munmap(it->addr, it->len);
                c.stats.live_mappings--;
                c.entries.erase(it);
                return;
            }
            c.stats.idle_bytes += it->len;
            c.entries.splice(c.entries.end(), c.entries, it);
            c.trim(budget_bytes());
            return;
        }
    }
    kernel().munmap(addr, mapped_len);  // not cached (fstat failed or the cache is off)
}

MappingCacheStats mapping_cache_stats() {
    std::lock_guard lock(cache().mu);
    return cache().stats;
}

void drop_idle_mappings() {
    std::lock_guard lock(cache().mu);
    cache().trim(0);
}

}  // namespace cldmabuf
