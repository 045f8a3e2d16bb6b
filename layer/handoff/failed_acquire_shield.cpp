#include "layer/handoff/failed_acquire_shield.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/core/import_state.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/handoff/handoff_route.hpp"
#include "layer/core/registry.hpp"
#include "layer/core/worker.hpp"

namespace cldmabuf {
namespace {

struct Shield {
    const Import *import = nullptr;
    // Whose commands behind a failed acquire may still run (held: an
    // acquire on another queue enqueues a marker on each).
    std::vector<IcdQueue> queues;
};

std::mutex shield_mutex;
auto *shields = new std::unordered_map<const Import *, Shield>;
std::atomic<size_t> count{0};

std::vector<IcdQueue>::iterator find_queue(std::vector<IcdQueue> &queues, cl_command_queue queue) {
    return std::find_if(queues.begin(), queues.end(), [queue](const IcdQueue &q) { return q.get() == queue; });
}

int prot_of(const Import &import) { return import.mapped_writable ? PROT_READ | PROT_WRITE : PROT_READ; }

// The dma-buf's pages back at the mapping's addresses.  Under the mutex.
void restore(const Import &import) {
    void *p = kernel().mmap(import.mapping, import.mapping_len, prot_of(import), MAP_SHARED | MAP_FIXED, import.fd, 0);
    if (p == MAP_FAILED)
        LOG_ERROR("import %p: cannot map its dma-buf again after a failed acquire (%s): it stays detached",
                  static_cast<void *>(import.mem), std::strerror(errno));
    else
        LOG_INFO("import %p: its dma-buf is mapped again (every queue behind the failed acquire finished)",
                 static_cast<void *>(import.mem));
}

// Teardown (forget_import_state): the mapping is about to be released, maybe
// into the mapping cache, so it must be the dma-buf's again.
void forget_shield(const Import &import) {
    if (count.load(std::memory_order_relaxed) == 0) return;
    std::vector<IcdQueue> queues;
    {
        std::lock_guard lock(shield_mutex);
        auto it = shields->find(&import);
        if (it == shields->end()) return;
        restore(import);
        queues = std::move(it->second.queues);
        shields->erase(it);
        count.store(shields->size(), std::memory_order_relaxed);
    }
    // Teardown runs in the ICD's destructor callback, maybe on its own
    // thread: the last reference to a queue the application already released
    // goes on the queue's worker instead.
    for (IcdQueue &q : queues) {
        const void *worker = q.get();
        release_on_worker(worker, std::move(q));
    }
}

}  // namespace

bool shield_import(Import &import, cl_command_queue queue) {
    static const bool registered = (register_import_state(forget_shield), true);
    (void)registered;
    if (!import.mapping || !route_of(import).through_mapping()) return false;
    std::lock_guard lock(shield_mutex);
    auto it = shields->find(&import);
    if (it != shields->end()) {
        if (find_queue(it->second.queues, queue) == it->second.queues.end())
            it->second.queues.push_back(IcdQueue::retain(queue));
        return true;
    }
    void *p = kernel().mmap(import.mapping, import.mapping_len, prot_of(import),
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p == MAP_FAILED) {
        LOG_ERROR("import %p: cannot detach its mapping after a failed acquire (%s): the commands behind it "
                  "run on the dma-buf",
                  static_cast<void *>(import.mem), std::strerror(errno));
        return false;
    }
    Shield shield{&import, {}};
    shield.queues.push_back(IcdQueue::retain(queue));
    shields->emplace(&import, std::move(shield));
    count.store(shields->size(), std::memory_order_relaxed);
    LOG_WARN("import %p: acquire failed on queue %p; the commands behind it run on anonymous pages, not on the "
             "dma-buf, until that queue is drained",
             static_cast<void *>(import.mem), static_cast<void *>(queue));
    return true;
}

void queue_drained(cl_command_queue queue) {
    if (count.load(std::memory_order_relaxed) == 0) return;
    std::vector<IcdQueue> released;  // after the lock
    {
        std::lock_guard lock(shield_mutex);
        for (auto it = shields->begin(); it != shields->end();) {
            auto &queues = it->second.queues;
            if (auto q = find_queue(queues, queue); q != queues.end()) {
                released.push_back(std::move(*q));
                queues.erase(q);
            }
            if (queues.empty()) {
                restore(*it->second.import);
                it = shields->erase(it);
            } else {
                ++it;
            }
        }
        count.store(shields->size(), std::memory_order_relaxed);
    }
}

bool import_shielded(const Import &import) {
    if (count.load(std::memory_order_relaxed) == 0) return false;
    std::lock_guard lock(shield_mutex);
    return shields->count(&import) != 0;
}

bool any_import_shielded() { return count.load(std::memory_order_relaxed) != 0; }

std::vector<cl_command_queue> shield_queues(const Import &import) {
    if (count.load(std::memory_order_relaxed) == 0) return {};
    std::lock_guard lock(shield_mutex);
    std::vector<cl_command_queue> queues;
    if (auto it = shields->find(&import); it != shields->end())
        for (const IcdQueue &q : it->second.queues) queues.push_back(q.get());
    return queues;
}

bool reattach_import(const Import &import, cl_command_queue queue, const std::vector<cl_command_queue> &drained) {
    if (count.load(std::memory_order_relaxed) == 0) return true;
    std::vector<IcdQueue> queues;  // released after the lock
    {
        std::lock_guard lock(shield_mutex);
        auto it = shields->find(&import);
        if (it == shields->end()) return true;
        for (const IcdQueue &held : it->second.queues)
            if (cl_command_queue q = held.get();
                q != queue && std::find(drained.begin(), drained.end(), q) == drained.end()) {
                LOG_ERROR("acquire: import %p is detached from its dma-buf after a failed acquire on queue %p, "
                          "whose commands may still run: clFinish that queue first",
                          static_cast<void *>(import.mem), static_cast<void *>(q));
                return false;
            }
        restore(import);
        queues = std::move(it->second.queues);
        shields->erase(it);
        count.store(shields->size(), std::memory_order_relaxed);
    }
    return true;
}

}  // namespace cldmabuf
