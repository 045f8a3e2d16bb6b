#include "layer/core/allocated.hpp"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "CL/cl_ext_cldmabuf.h"
#include "layer/core/dispatch.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/base/owned_fd.hpp"
#include "layer/base/param_answer.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {
namespace {

struct AllocatedEntry {
    Allocated allocated;
    uint64_t token = 0;  // the destructor callback that owns this entry
};

struct Table {
    std::mutex mutex;
    std::unordered_map<cl_mem, AllocatedEntry> map;
    std::atomic<size_t> count{0};
    uint64_t next_token = 1;
};

Table &table() {
    static Table *t = new Table;  // outlives destructor callbacks run at exit
    return *t;
}

// Under t.mutex: the count, and the registry's count of handle-keyed entries.
void recount(Table &t) {
    const size_t now = t.map.size();
    const size_t was = t.count.exchange(now, std::memory_order_relaxed);
    import_registry_detail::mem_handles.fetch_add(now - was, std::memory_order_relaxed);  // modulo: a decrease too
}

// What an object's destructor callback closes: its own dup, and its entry
// only while the entry is still its own.  NVIDIA calls destructor callbacks
// late and may have given the handle to a newer allocation meanwhile, whose
// entry replaced this one's: that one's fd stays open.
struct Owed {
    uint64_t token;
    OwnedFd fd;
};

// The callback's user data is the Owed it was handed (record_allocated):
// adopted back here, so it goes with its fd whichever way this returns.
void CL_CALLBACK forget_allocated(cl_mem mem, void *data) {
    const std::unique_ptr<Owed> owed(static_cast<Owed *>(data));
    Table &t = table();
    {
        std::lock_guard lock(t.mutex);
        auto it = t.map.find(mem);
        if (it != t.map.end() && it->second.token == owed->token) {
            t.map.erase(it);
            recount(t);
        }
    }
}

}  // namespace

cl_int record_allocated(cl_mem mem, Allocated entry) {
    Table &t = table();
    auto owed = std::make_unique<Owed>(Owed{0, OwnedFd(entry.fd)});
    {
        std::lock_guard lock(t.mutex);
        owed->token = t.next_token++;
        t.map[mem] = AllocatedEntry{std::move(entry), owed->token};
        recount(t);
    }
    if (next().clSetMemObjectDestructorCallback(mem, forget_allocated, owed.get()) == CL_SUCCESS) {
        owed.release();  // the callback's now
        return CL_SUCCESS;
    }
    {
        std::lock_guard lock(t.mutex);
        auto it = t.map.find(mem);
        if (it != t.map.end() && it->second.token == owed->token) t.map.erase(it);
        recount(t);
    }
    return CL_OUT_OF_RESOURCES;  // owed closes the fd
}

void retire_allocated(cl_mem mem) {
    Table &t = table();
    std::lock_guard lock(t.mutex);
    if (t.map.erase(mem)) recount(t);
}

size_t allocated_count() { return table().count.load(std::memory_order_relaxed); }

bool allocated_mem_info(cl_mem mem, cl_mem_info name, size_t size, void *value, size_t *size_ret, cl_int *err) {
    const bool ours = name == CL_MEM_DMA_BUF_EXPORTER_CLDMABUF || name == CL_MEM_DMA_BUF_FD_CLDMABUF;
    if (!ours && (name != CL_MEM_PROPERTIES || allocated_count() == 0)) return false;
    Table &t = table();
    std::unique_lock lock(t.mutex);
    auto it = t.map.find(mem);
    if (it == t.map.end()) {
        if (!ours) return false;
        *err = CL_INVALID_VALUE;
        return true;
    }
    const Allocated &a = it->second.allocated;
    if (name == CL_MEM_PROPERTIES) {
        *err = answer(a.properties.data(), a.properties.size() * sizeof(cl_mem_properties), size, value, size_ret);
        return true;
    }
    if (name == CL_MEM_DMA_BUF_EXPORTER_CLDMABUF) {
        const cl_uint e = static_cast<cl_uint>(a.exporter);
        *err = answer(&e, sizeof e, size, value, size_ret);
        return true;
    }
    // CL_MEM_DMA_BUF_FD_CLDMABUF: a size query or a too-small buffer makes no fd.
    if (!value || size < sizeof(cl_int)) {
        *err = answer(nullptr, sizeof(cl_int), size, value, size_ret);
        return true;
    }
    const int fd = kernel().dup(a.fd);
    lock.unlock();
    if (fd < 0) {
        LOG_ERROR("CL_MEM_DMA_BUF_FD_CLDMABUF on %p: cannot duplicate the dma-buf: %s", static_cast<void *>(mem),
                  std::strerror(errno));
        *err = CL_OUT_OF_RESOURCES;
        return true;
    }
    const cl_int out = fd;
    *err = answer(&out, sizeof out, size, value, size_ret);
    return true;
}

const char *alloc_exporter_name(AllocExporter e) {
    switch (e) {
    case AllocExporter::i915_gem: return "i915 GEM";
    case AllocExporter::dma_heap: return "system dma-heap";
    case AllocExporter::udmabuf: return "udmabuf";
    }
    return "?";
}

}  // namespace cldmabuf
