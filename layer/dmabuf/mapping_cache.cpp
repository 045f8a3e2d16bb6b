#include "layer/dmabuf/mapping_cache.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <list>
#include <mutex>
#include <string>
#include <thread>

#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/base/owned_fd.hpp"
#include "layer/base/owned_mapping.hpp"
#include "layer/base/settings.hpp"

namespace cldmabuf {
namespace {

constexpr uint64_t kDefaultBudgetMiB = sizeof(void *) >= 8 ? 512 : 64;
// Each parked mapping holds an fd (mapping_cache.hpp, invariant 2): a 4K NV12
// pool of 20 surfaces, both planes, is 40.
constexpr size_t kMaxParked = 64;
constexpr auto kSweepMs = std::chrono::milliseconds(50);

// Erasing an entry unmaps it (or its attachment does, later: retire), then
// closes its pin.
struct Entry {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;  // the dma-buf's
    OwnedFd pin;     // the entry's own fd of the dma-buf: keeps its inode (and number) alive
    long own_refs = 0;  // file references the entry holds (pin + mapping); 0: unknown
    OwnedMapping map;
    bool writable = false;
    bool live = true;  // held by an import (at most one)
    std::unique_ptr<MappingAttachment> attached;  // parked by park_mapping only (invariant 5)
};

uint64_t budget_bytes() {
    static const uint64_t budget = [] {
        const char *v = setting("CLDMABUF_MAP_CACHE_MB");
        if (!v || !*v) return kDefaultBudgetMiB << 20;
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

// The dma-buf file's reference count the kernel prints in fdinfo (without
// procfs's own), or -1 when not shown (not a dma-buf, an older kernel, a fake).
long file_count(int fd) {
    std::string text;
    const std::string path = "/proc/self/fdinfo/" + std::to_string(fd);
    if (kernel().read_file(path.c_str(), &text) != 0) return -1;
    static constexpr char key[] = "count:";
    for (size_t at = 0; at < text.size();) {
        const size_t end = std::min(text.find('\n', at), text.size());
        if (text.compare(at, sizeof key - 1, key) == 0) {
            char *stop = nullptr;
            const long n = std::strtol(text.c_str() + at + sizeof key - 1, &stop, 10);
            return stop != text.c_str() + at + sizeof key - 1 && n >= 0 ? n : -1;
        }
        at = end + 1;
    }
    return -1;
}

struct Cache {
    std::mutex mu;
    std::list<Entry> entries;  // parked ones in least-recently-parked order at the front
    MappingCacheStats stats;
    std::condition_variable wake;  // the reaper's sleep; notified by drop_idle_mappings
    // A reaper thread runs.  A fork's child has none whatever its copy of
    // this says: the atfork handler (cache()) clears it there, so that the
    // hot path asks no getpid of the kernel.
    bool reaper = false;

    void drop(std::list<Entry>::iterator it) {
        stats.idle_bytes -= it->map.size();
        stats.parked--;
        stats.live_mappings--;
        if (it->attached) it->attached->retire(std::move(it->map));
        entries.erase(it);
    }

    // Unmaps parked entries, oldest first, until they fit `bytes` and `count`.
    void trim(uint64_t bytes, size_t count) {
        for (auto it = entries.begin(); it != entries.end() && (stats.idle_bytes > bytes || stats.parked > count);) {
            if (it->live) {
                ++it;
                continue;
            }
            stats.evictions++;
            drop(it++);
        }
    }

    // The file references the cache holds on `e`'s dma-buf: every entry of
    // it, parked or live, holds its own pin (two live imports of one dma-buf
    // park two entries), so one entry alone never sees the count fall to its
    // own share.  -1 when one entry's share is unknown.
    long cache_refs(const Entry &e) const {
        long n = 0;
        for (const Entry &o : entries) {
            if (o.dev != e.dev || o.ino != e.ino) continue;
            if (o.own_refs <= 0) return -1;
            n += o.own_refs;
        }
        return n;
    }

    // Parked entries whose dma-buf only the cache still holds (invariant 3).
    void sweep() {
        for (auto it = entries.begin(); it != entries.end();) {
            const long own = it->live ? -1 : cache_refs(*it);
            if (own <= 0) {
                ++it;
                continue;
            }
            const long n = file_count(it->pin.get());
            if (n < 0 || n > own) {
                ++it;
                continue;
            }
            LOG_DEBUG("mapping cache: dma-buf %lu is held by nothing but the cache: unmapped (%zu bytes)",
                      static_cast<unsigned long>(it->ino), it->map.size());
            stats.gone++;
            drop(it++);
        }
    }
};

Cache &cache() {
    static Cache *c = [] {
        auto *made = new Cache;  // never destroyed: imports may outlive static teardown
        pthread_atfork(nullptr, nullptr, [] { cache().reaper = false; });
        return made;
    }();
    return *c;
}

// While anything is parked, a thread looks every kSweepMs for parked
// mappings only the cache still holds, so a freed buffer's memory goes
// whether or not the application calls the layer again; it ends when
// nothing is parked.  Under c.mu.
void start_reaper(Cache &c) {
    if (c.reaper) return;
    c.reaper = true;
    std::thread([&c] {
        std::unique_lock lock(c.mu);
        while (c.stats.parked) {
            c.wake.wait_for(lock, kSweepMs);
            c.sweep();
        }
        c.reaper = false;
    }).detach();
}

}  // namespace

void *acquire_mapping(int fd, size_t len, bool writable, size_t *mapped_len, const DmabufIdentity *known) {
    Cache &c = cache();
    DmabufIdentity st = known ? *known : DmabufIdentity{};
    const bool cacheable = budget_bytes() > 0 && (known || dmabuf_identity(fd, &st)) && st.size > 0 &&
                           static_cast<uint64_t>(st.size) >= len;
    if (cacheable) {
        std::lock_guard lock(c.mu);
        for (auto it = c.entries.begin(); it != c.entries.end(); ++it) {
            // Only a parked mapping (invariant 1); protection must match both
            // ways: a read-only object's mapping stays read-only.
            if (it->live || it->attached || it->dev != st.dev || it->ino != st.ino || it->size != st.size ||
                it->map.size() < len || writable != it->writable)
                continue;
            it->live = true;
            c.stats.idle_bytes -= it->map.size();
            c.stats.parked--;
            c.stats.hits++;
            c.entries.splice(c.entries.end(), c.entries, it);  // most recently used last
            *mapped_len = it->map.size();
            return it->map.get();
        }
    }
    // A miss: the entry's own fd first, then the mapping, reading the file's
    // count around the mmap to learn the entry's share of it.
    OwnedFd pin(cacheable ? kernel().dup(fd) : -1);
    const long before = pin ? file_count(pin.get()) : -1;
    void *addr = kernel().mmap(nullptr, len, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
    if (addr == MAP_FAILED) {
        const int err = errno;
        pin.reset();
        errno = err;
        return MAP_FAILED;
    }
    *mapped_len = len;
    if (pin) {
        const long after = before >= 0 ? file_count(pin.get()) : -1;
        const long own = after >= before && before >= 0 ? 1 + (after - before) : 0;
        std::lock_guard lock(c.mu);
        c.stats.misses++;
        c.stats.live_mappings++;
        c.entries.push_back(
            Entry{st.dev, st.ino, st.size, std::move(pin), own, OwnedMapping(addr, len), writable, true, nullptr});
    }
    return addr;
}

void release_mapping(void *addr, size_t mapped_len, bool keep) {
    Cache &c = cache();
    {
        std::lock_guard lock(c.mu);
        for (auto it = c.entries.begin(); it != c.entries.end(); ++it) {
            if (it->map.get() != addr || !it->live) continue;
            // A mapping larger than the whole budget would only push every
            // other parked one out before going itself.
            if (!keep || it->map.size() > budget_bytes()) {
                c.stats.live_mappings--;
                c.entries.erase(it);
                return;
            }
            it->live = false;
            c.stats.idle_bytes += it->map.size();
            c.stats.parked++;
            c.entries.splice(c.entries.end(), c.entries, it);
            c.trim(budget_bytes(), kMaxParked);
            if (c.stats.parked) start_reaper(c);
            return;
        }
    }
    OwnedMapping(addr, mapped_len).reset();  // not cached (fstat or dup failed, or the cache is off)
}

void park_mapping(int fd, const DmabufIdentity &id, OwnedMapping map, bool writable,
                  std::unique_ptr<MappingAttachment> attach) {
    Cache &c = cache();
    const bool fits = budget_bytes() > 0 && id.size > 0 && map.size() <= budget_bytes();
    OwnedFd pin(fits ? kernel().dup(fd) : -1);
    if (!pin) {
        attach->retire(std::move(map));
        return;
    }
    std::lock_guard lock(c.mu);
    // The entry's share of the file's count: its fd, plus what a mapping of
    // this dma-buf holds, as the entries that watched their own mmap learned
    // it (0, unknown: kept until evicted, where none did).
    long own = 0;
    for (const Entry &o : c.entries)
        if (o.dev == id.dev && o.ino == id.ino && o.own_refs > 0) own = o.own_refs;
    const size_t bytes = map.size();
    c.entries.push_back(Entry{id.dev, id.ino, id.size, std::move(pin), own, std::move(map), writable, false,
                              std::move(attach)});
    c.stats.live_mappings++;
    c.stats.idle_bytes += bytes;
    c.stats.parked++;
    c.trim(budget_bytes(), kMaxParked);
    if (c.stats.parked) start_reaper(c);
}

OwnedMapping take_parked_mapping(const DmabufIdentity &id, size_t len, bool writable, uintptr_t owner,
                                 std::unique_ptr<MappingAttachment> *attached) {
    Cache &c = cache();
    std::lock_guard lock(c.mu);
    for (auto it = c.entries.begin(); it != c.entries.end(); ++it) {
        if (it->live || !it->attached || it->attached->owner() != owner || it->dev != id.dev || it->ino != id.ino ||
            it->size != id.size || it->map.size() < len || writable != it->writable)
            continue;
        OwnedMapping map = std::move(it->map);
        *attached = std::move(it->attached);
        c.stats.hits++;
        c.stats.idle_bytes -= map.size();
        c.stats.parked--;
        c.stats.live_mappings--;
        c.entries.erase(it);  // closes the entry's fd; the caller's import holds the dma-buf
        return map;
    }
    return OwnedMapping();
}

MappingCacheStats mapping_cache_stats() {
    std::lock_guard lock(cache().mu);
    return cache().stats;
}

void drop_idle_mappings() {
    std::lock_guard lock(cache().mu);
    cache().trim(0, 0);
}

}  // namespace cldmabuf
