#include "layer/handoff/staging.hpp"

#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/handoff/parallel_copy.hpp"
#include "layer/import/buffer.hpp"
#include "layer/core/import_state.hpp"
#include "layer/icd/devices.hpp"
#include "layer/icd/profile.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/base/owned_mapping.hpp"
#include "layer/base/settings.hpp"
#include "layer/base/stats.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/core/worker.hpp"
#include "layer/core/import_fds.hpp"
#include "layer/dmabuf/mapping_cache.hpp"

namespace cldmabuf {

StagingChoice staging_choice() {
    static const StagingChoice choice = [] {
        const char *v = setting("CLDMABUF_STAGING");
        if (v && !std::strcmp(v, "pinned")) return StagingChoice::pinned;
        if (v && !std::strcmp(v, "register")) return StagingChoice::registered;
        if (v && !std::strcmp(v, "off")) return StagingChoice::off;
        if (v && *v && std::strcmp(v, "auto"))
            LOG_WARN("CLDMABUF_STAGING=%s is not auto, register, pinned or off: auto", v);
        return StagingChoice::automatic;
    }();
    return choice;
}

// Two slots: the CPU fills (or drains) one while the ICD's DMA moves the other.
// 16 MiB chunks: on NVIDIA (H200, 64 MiB, bench-staging in two device
// calls, acquire+release) 2 x 16 MiB moved 39.4 GB/s, 3 x 16 MiB 37.7, 2 x 24 MiB 33.3,
// 2 x 32 MiB 32.7, 2 x 8 MiB 29.9, 4 x 4 MiB 19.4, 8 x 2 MiB 12.1: each chunk
// costs about 120 us of enqueue, flush and wake-up, and the last chunk's DMA
// is not overlapped by any copy.
class PinnedStaging {
public:
    static constexpr size_t kChunk = 16u << 20;
    static constexpr int kSlots = 2;

    PinnedStaging(IcdQueue queue, IcdMem buffer, uint8_t *host)
        : queue_(std::move(queue)), buffer_(std::move(buffer)), host_(host) {}
    ~PinnedStaging() {
        // The last import using it may go in an ICD callback, where blocking
        // calls are not allowed: the worker unmaps and frees, the transfers
        // that outlived their wait (busy_) finished by then (clFinish).
        struct Left {
            IcdQueue queue;
            IcdMem buffer;
            uint8_t *host;
            IcdEvents busy;
        };
        const void *worker = queue_.get();
        auto left = std::make_shared<Left>(Left{std::move(queue_), std::move(buffer_), host_, std::move(busy_)});
        post_to_worker(worker, [left] {
            if (next().clEnqueueUnmapMemObject(left->queue.get(), left->buffer.get(), left->host, 0, nullptr,
                                               nullptr) == CL_SUCCESS)
                next().clFinish(left->queue.get());
            left->busy.reset();
            left->buffer.reset();
            left->queue.reset();
        });
    }
    PinnedStaging(const PinnedStaging &) = delete;
    PinnedStaging &operator=(const PinnedStaging &) = delete;

    cl_int to_device(const Import &import, const void *from);
    cl_int to_dmabuf(const Import &import, cl_event *still_writing);
    // A registered import's Read after `after` (an event of the
    // application's queue), waited for here.
    cl_int registered_to_dmabuf_after(const Import &import, cl_event after);

private:
    cl_int wait(IcdEvent &ev, const char *what);
    cl_int finish(IcdEvent &ev, const char *what);
    cl_int slots_free(const char *what);
    cl_int direct(const Import &import, bool to_device, cl_event after = nullptr, cl_event *still_writing = nullptr);
    void drop(IcdEvent (&ev)[kSlots]);
    uint8_t *slot(int i) { return host_ + size_t(i) * kChunk; }

    std::mutex mutex_;  // one transfer at a time per staging
    // Slot transfers that did not complete within their wait (under mutex_):
    // the ICD still moves bytes to or from the slots, so no transfer uses a
    // slot until every one of them has completed (slots_free).
    IcdEvents busy_;
    IcdQueue queue_;
    IcdMem buffer_;
    uint8_t *host_;
};

namespace {

struct Key {
    cl_context context;
    cl_device_id device;
    bool operator<(const Key &o) const { return std::tie(context, device) < std::tie(o.context, o.device); }
};

std::mutex cache_mutex;
std::map<Key, std::weak_ptr<PinnedStaging>> cache;

// The staging each copy-route import holds (the cache only keeps weak
// references): dropped at the import's teardown.
struct HeldStaging {
    std::shared_ptr<PinnedStaging> staging;
    cl_device_id device = nullptr;
};
void forget_held_staging(const Import &import);
ImportState<HeldStaging> held_staging(forget_held_staging);
void forget_held_staging(const Import &import) { held_staging.forget(import); }

bool wanted_for(cl_device_id device) {
    switch (staging_choice()) {
    case StagingChoice::pinned: return true;
    case StagingChoice::registered: return true;
    case StagingChoice::off: return false;
    case StagingChoice::automatic: break;
    }
    return !device_shares_host_memory(device);
}

// ---- registered mappings ---------------------------------------------------------------
//
// A CL_MEM_USE_HOST_PTR buffer over a copy-route import's mapping, made once
// per import (or taken back parked, below) and never used for anything else: NVIDIA (580, H200) pins the
// pages of a USE_HOST_PTR buffer, and then moves the ICD's own Write/Read
// from and to those pages at its pinned DMA rate with no CPU copy
// (standalone probe, 64 MiB, 2026-12-04: 54.8 GB/s Write and 54.8 Read,
// blocking, non-blocking or behind a user event alike, against 7.2 / 14.0
// before registering and 54.5 / 54.7 for its CL_MEM_ALLOC_HOST_PTR memory;
// 2.8-3.3 ms to create, 1.4-1.6 ms to release).  The cost is the pinned
// host pages for the import's lifetime and while parked; no device memory while the buffer is
// never used on the device (4 x 256 MiB: +2 MiB in nvidia-smi).  The transfers
// of a registered import run inside the handoff's step on the staging's
// own queue (to_device/to_dmabuf below): the same Read enqueued on the
// application's queue at release ran at 3.5 GB/s in the layer (not
// understood; 46 GB/s from the step's queue in the same device call).  An
// ICD that refuses the registration leaves the import to pinned staging.
// The registration has a mapping of the dma-buf of its own (same pages,
// another address): the import's mapping may be shielded (replaced by
// anonymous pages after a failed acquire) or handed to another import, and
// NVIDIA tracks a registration by address, so a new mapping landing on the
// range while the registration is still being released (on the worker:
// teardown may run in an ICD callback) would meet a stale registration
// (bench-import's stats child, which imports six sizes in a row, is the
// pattern).  The registration's range is unmapped only after its release.
//
// When the import goes, the registration parks with its mapping in the
// mapping cache (layer/dmabuf/mapping_cache.hpp, invariant 5), and the next
// import of the same dma-buf in the same context takes both back: a pool's
// frame imported again costs NVIDIA no new pinning (2.8-3.3 ms) and no
// unpinning.  They go with the parked mapping (the dma-buf freed, evicted),
// released on the worker first and unmapped after.
void release_later(IcdMem pin, OwnedMapping map) {
    if (!pin) return;  // `map` unmapped here: nothing was registered over it
    // The worker's job takes the buffer and the range over, and unmaps
    // the range after the release.
    const void *worker = pin.get();
    auto held = std::make_shared<IcdMem>(std::move(pin));  // a job is copyable; the holder is not
    const size_t n = map.size();
    post_to_worker(worker, [held, a = map.release(), n] {
        const OwnedMapping range(a, n);
        held->reset();
    });
}

// A parked registration also keeps the staging its import used (a queue
// and 32 MiB of CL_MEM_ALLOC_HOST_PTR slots per context and device, which
// the cache only references weakly): a pool's next frame, a new import,
// takes both back, instead of making and mapping the slots again per frame.
// They go together when the parked mapping goes (retire).
class ParkedRegistration final : public MappingAttachment {
public:
    ParkedRegistration(IcdMem pin, cl_context context, std::shared_ptr<PinnedStaging> staging)
        : pin_(std::move(pin)), context_(context), staging_(std::move(staging)) {}
    uintptr_t owner() const override { return reinterpret_cast<uintptr_t>(context_); }
    void retire(OwnedMapping map) override {
        release_later(std::move(pin_), std::move(map));
        staging_.reset();  // freed on the worker (~PinnedStaging)
    }
    IcdMem take() { return std::move(pin_); }
    std::shared_ptr<PinnedStaging> take_staging() { return std::move(staging_); }

private:
    IcdMem pin_;
    cl_context context_;
    std::shared_ptr<PinnedStaging> staging_;
};

struct HeldRegistration {
    IcdMem pin;
    OwnedMapping map;
    std::shared_ptr<PinnedStaging> staging;  // the import's (staging_for): parked with the registration
    HeldRegistration() = default;
    HeldRegistration(IcdMem m, OwnedMapping mapping) : pin(std::move(m)), map(std::move(mapping)) {}
    HeldRegistration(HeldRegistration &&o) noexcept
        : pin(std::move(o.pin)), map(std::move(o.map)), staging(std::move(o.staging)) {}
    HeldRegistration &operator=(HeldRegistration &&o) noexcept {
        std::swap(pin, o.pin);
        std::swap(map, o.map);
        std::swap(staging, o.staging);
        return *this;
    }
    ~HeldRegistration() { release_later(std::move(pin), std::move(map)); }
};
void forget_registration(const Import &import);
ImportState<HeldRegistration> registrations(forget_registration);
// The import's teardown (its fd still open) or a failed import: the
// registration parks for the next import of the dma-buf in this context.
void forget_registration(const Import &import) {
    HeldRegistration held = registrations.take(import);
    const DmabufIdentity *id = import_identity(import);
    if (!held.pin || !id) return;  // released (or unmapped) by `held`
    const bool writable = !(import.flags & CL_MEM_READ_ONLY);
    park_mapping(import.fd, *id, std::move(held.map), writable,
                 std::make_unique<ParkedRegistration>(std::move(held.pin), import.context, std::move(held.staging)));
}

// Registers `import`'s dma-buf with the ICD on its first copy-route
// handoff, or takes back what an earlier import of it in this context
// parked; tried once per import: a refusal is remembered as an empty entry
// (no mapping), so later handoffs ask neither the kernel nor the ICD again
// and go through pinned staging.
// `kept`: the staging a parked registration held, kept alive for the caller.
void register_once(const Import &import, cl_device_id device, std::shared_ptr<PinnedStaging> *kept) {
    const StagingChoice choice = staging_choice();
    if (choice != StagingChoice::automatic && choice != StagingChoice::registered) return;
    if (import.is_image || !import.mapping) return;
    if (registrations.find(import)) return;
    // A read-only import's mappings are read-only (PROT_READ): the device only reads them.
    const bool read_only = import.flags & CL_MEM_READ_ONLY;
    if (const DmabufIdentity *id = import_identity(import)) {
        std::unique_ptr<MappingAttachment> parked;
        OwnedMapping map = take_parked_mapping(*id, import.size, !read_only,
                                               reinterpret_cast<uintptr_t>(import.context), &parked);
        if (map) {
            stats().registrations_reused++;
            auto &registration = static_cast<ParkedRegistration &>(*parked);
            *kept = registration.take_staging();
            registrations.emplace(import, HeldRegistration(registration.take(), std::move(map)));
            return;
        }
    }
    OwnedMapping map(kernel().mmap(nullptr, import.size, read_only ? PROT_READ : PROT_READ | PROT_WRITE,
                                   MAP_SHARED, import.fd, 0),
                     import.size);
    if (!map) {
        LOG_INFO("staging: cannot map dma-buf fd %d once more for its registration (%s): pinned staging",
                 import.fd, std::strerror(errno));
        registrations.emplace(import, HeldRegistration());
        return;
    }
    cl_int err = CL_SUCCESS;
    IcdMem pin(next().clCreateBuffer(import.context, (read_only ? CL_MEM_READ_ONLY : CL_MEM_READ_WRITE) |
                                                         CL_MEM_USE_HOST_PTR,
                                     import.size, map.get(), &err));
    if (!pin) {
        map.reset();
        if (record_registration_refused(device))  // logged once per device, kept in its profile
            LOG_INFO("staging: the ICD refused a CL_MEM_USE_HOST_PTR buffer over an import's mapping (error %d): "
                     "copy-route transfers on device %p go through pinned staging", err, static_cast<void *>(device));
        registrations.emplace(import, HeldRegistration());
        return;
    }
    stats().registrations_made++;
    registrations.emplace(import, HeldRegistration(std::move(pin), std::move(map)));
}

std::shared_ptr<PinnedStaging> make_staging(cl_context context, cl_device_id device, std::string *why) {
    cl_int err = CL_SUCCESS;
    IcdQueue q(next().clCreateCommandQueueWithProperties(context, device, nullptr, &err));
    if (!q) {
        *why = "cannot create the staging queue (error " + std::to_string(err) + ")";
        return nullptr;
    }
    const size_t bytes = PinnedStaging::kChunk * PinnedStaging::kSlots;
    IcdMem b(next().clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &err));
    if (!b) {
        *why = "the ICD refused a CL_MEM_ALLOC_HOST_PTR staging buffer (error " + std::to_string(err) + ")";
        return nullptr;
    }
    void *host = next().clEnqueueMapBuffer(q.get(), b.get(), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
                                           nullptr, nullptr, &err);
    if (!host) {
        *why = "cannot map the staging buffer (error " + std::to_string(err) + ")";
        return nullptr;
    }
    return std::make_shared<PinnedStaging>(std::move(q), std::move(b), static_cast<uint8_t *>(host));
}

}  // namespace

std::shared_ptr<PinnedStaging> staging_for(Import &import, cl_command_queue queue) {
    if (import.is_image || staging_choice() == StagingChoice::off) return nullptr;
    cl_device_id device = queue_device(queue);
    if (!device) return nullptr;
    if (!wanted_for(device)) return nullptr;
    std::lock_guard lock(cache_mutex);
    // A registered import still takes the staging's queue (its transfers run
    // in the step), not its slots.
    std::shared_ptr<PinnedStaging> kept;  // until the cache's entry is taken below
    register_once(import, device, &kept);
    if (HeldStaging *held = held_staging.find(import); held && held->device == device) return held->staging;
    std::shared_ptr<PinnedStaging> s = cache[{import.context, device}].lock();
    if (!s) {
        std::string why;
        s = make_staging(import.context, device, &why);
        if (!s) {
            stats().staging_fallbacks++;
            if (record_staging_refused(device))  // logged once per device, kept in its profile
                LOG_WARN("staging: %s; copy-route transfers on device %p go straight from the dma-buf's mapping",
                         why.c_str(), static_cast<void *>(device));
            return nullptr;
        }
        cache[{import.context, device}] = s;
    }
    held_staging.forget(import);
    held_staging.emplace(import, HeldStaging{s, device});  // freed with the last import that used it
    if (HeldRegistration *registration = registrations.find(import); registration && registration->pin)
        registration->staging = s;  // and kept while its registration is parked
    return s;
}

cl_int PinnedStaging::wait(IcdEvent &ev, const char *what) {
    // Bounded: a chunk's DMA takes milliseconds; a stuck one must not hold
    // the worker (and every queue's host steps) for ever.
    const auto limit = std::chrono::steady_clock::now() + std::chrono::milliseconds(10000 + fence_timeout_ms());
    cl_int status = CL_QUEUED;
    for (int spins = 0;; ++spins) {
        if (next().clGetEventInfo(ev.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) !=
            CL_SUCCESS)
            status = CL_INVALID_EVENT;
        if (status <= CL_COMPLETE) break;
        if (std::chrono::steady_clock::now() > limit) {
            LOG_ERROR("%s: a staging transfer did not complete within %d ms", what, 10000 + fence_timeout_ms());
            return CL_OUT_OF_RESOURCES;
        }
        if (spins < 2000) sched_yield();
        else usleep(50);
    }
    ev.reset();
    if (status < 0) {
        LOG_ERROR("%s: a staging transfer failed (status %d)", what, status);
        return status;
    }
    return CL_SUCCESS;
}

// wait(), and a transfer still running at its bound is kept in busy_: its
// slot is not reused until it completed.
cl_int PinnedStaging::finish(IcdEvent &ev, const char *what) {
    const cl_int err = wait(ev, what);
    busy_.add(std::move(ev));
    return err;
}

// Whether the slots may be used: every transfer that outlived its wait has
// completed since (each is let go here); else the transfer is refused, one
// log line, so that neither the CPU nor a new DMA meets bytes still moving.
cl_int PinnedStaging::slots_free(const char *what) {
    busy_.release_if([](cl_event e) {
        cl_int status = CL_QUEUED;
        return next().clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) ==
                   CL_SUCCESS &&
               status <= CL_COMPLETE;
    });
    if (busy_.empty()) return CL_SUCCESS;
    LOG_ERROR("%s: %zu staging transfer(s) that outlived their wait still use the staging slots: not reused until "
              "they completed", what, busy_.size());
    return CL_OUT_OF_RESOURCES;
}

void PinnedStaging::drop(IcdEvent (&ev)[kSlots]) {
    // After a failure: what is in flight finishes (bounded) before the slots
    // are reused, or stays in busy_.
    for (IcdEvent &e : ev)
        if (e) finish(e, "staging");
}

cl_int PinnedStaging::to_device(const Import &import, const void *from) {
    std::lock_guard lock(mutex_);
    if (registered_mapping(import) && !from) return direct(import, true);
    if (cl_int busy = slots_free("acquire"); busy != CL_SUCCESS) return busy;
    const auto *src = static_cast<const uint8_t *>(from ? from : import.mapping);
    IcdEvent ev[kSlots];
    size_t i = 0;
    for (size_t off = 0; off < import.size; off += kChunk, ++i) {
        const int s = int(i % kSlots);
        if (ev[s])
            if (cl_int err = finish(ev[s], "acquire"); err != CL_SUCCESS) return drop(ev), err;
        const size_t len = std::min(kChunk, import.size - off);
        parallel_copy(slot(s), src + off, len);
        cl_int err = next().clEnqueueWriteBuffer(queue_.get(), import.mem, CL_FALSE, off, len, slot(s), 0, nullptr,
                                                 ev[s].out());
        if (err != CL_SUCCESS) {
            LOG_ERROR("acquire: the ICD refused the staged copy into the device buffer (error %d)", err);
            return drop(ev), err;
        }
        next().clFlush(queue_.get());
    }
    for (IcdEvent &e : ev)
        if (e)
            if (cl_int err = finish(e, "acquire"); err != CL_SUCCESS) return drop(ev), err;
    stats().staged_bytes += import.size;
    return CL_SUCCESS;
}

cl_int PinnedStaging::to_dmabuf(const Import &import, cl_event *still_writing) {
    std::lock_guard lock(mutex_);
    if (registered_mapping(import)) return direct(import, false, nullptr, still_writing);
    if (cl_int busy = slots_free("release"); busy != CL_SUCCESS) return busy;
    auto *dst = static_cast<uint8_t *>(import.mapping);
    IcdEvent ev[kSlots];
    const size_t chunks = (import.size + kChunk - 1) / kChunk;
    auto start = [&](size_t i) -> cl_int {
        const size_t off = i * kChunk, len = std::min(kChunk, import.size - off);
        cl_int err = next().clEnqueueReadBuffer(queue_.get(), import.mem, CL_FALSE, off, len, slot(int(i % kSlots)),
                                                0, nullptr, ev[i % kSlots].out());
        if (err != CL_SUCCESS)
            LOG_ERROR("release: the ICD refused the staged copy out of the device buffer (error %d)", err);
        next().clFlush(queue_.get());
        return err;
    };
    for (size_t i = 0; i < std::min<size_t>(chunks, kSlots); ++i)
        if (cl_int err = start(i); err != CL_SUCCESS) return drop(ev), err;
    for (size_t i = 0; i < chunks; ++i) {
        const int s = int(i % kSlots);
        if (cl_int err = finish(ev[s], "release"); err != CL_SUCCESS) return drop(ev), err;
        const size_t off = i * kChunk;
        parallel_copy(dst + off, slot(s), std::min(kChunk, import.size - off));
        if (i + kSlots < chunks)
            if (cl_int err = start(i + kSlots); err != CL_SUCCESS) return drop(ev), err;
    }
    stats().staged_bytes += import.size;
    return CL_SUCCESS;
}

// A registered import: one transfer straight between its (pinned) mapping
// and its device copy, on this staging's queue (after `after`, an event of
// another queue of the context, where given), waited for (bounded).  A Read
// still running at the bound writes the dma-buf's pages: it goes to
// `still_writing` (the caller's to release) where given.
cl_int PinnedStaging::direct(const Import &import, bool to_device, cl_event after, cl_event *still_writing) {
    const char *what = to_device ? "acquire" : "release";
    IcdEvent ev;
    void *host = registered_mapping(import);
    const cl_uint n = after ? 1 : 0;
    const cl_event *waits = after ? &after : nullptr;
    const cl_int err = to_device ? next().clEnqueueWriteBuffer(queue_.get(), import.mem, CL_FALSE, 0, import.size,
                                                               host, n, waits, ev.out())
                                 : next().clEnqueueReadBuffer(queue_.get(), import.mem, CL_FALSE, 0, import.size,
                                                              host, n, waits, ev.out());
    if (err != CL_SUCCESS) {
        LOG_ERROR("%s: the ICD refused the copy %s the registered mapping (error %d)", what,
                  to_device ? "from" : "into", err);
        return err;
    }
    next().clFlush(queue_.get());
    const cl_int done = wait(ev, what);
    // Still running at the bound: the caller's where it asked, else let go
    // (the ICD still owns the transfer).
    if (ev && !to_device && still_writing) *still_writing = ev.hand_off();
    return done;
}

cl_int PinnedStaging::registered_to_dmabuf_after(const Import &import, cl_event after) {
    std::lock_guard lock(mutex_);
    if (!registered_mapping(import)) return CL_INVALID_OPERATION;  // (callers ask registered_mapping first)
    return direct(import, false, after);
}

void *registered_mapping(const Import &import) {
    const HeldRegistration *held = registrations.find(import);
    return held ? held->map.get() : nullptr;
}

cl_int staged_to_device(PinnedStaging &staging, const Import &import, const void *from) {
    return staging.to_device(import, from);
}
cl_int staged_to_dmabuf(PinnedStaging &staging, const Import &import, cl_event *still_writing) {
    return staging.to_dmabuf(import, still_writing);
}
cl_int registered_to_dmabuf_after(PinnedStaging &staging, const Import &import, cl_event after) {
    return staging.registered_to_dmabuf_after(import, after);
}

}  // namespace cldmabuf
