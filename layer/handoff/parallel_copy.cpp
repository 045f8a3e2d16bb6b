#include "layer/handoff/parallel_copy.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "layer/base/log.hpp"
#include "layer/base/settings.hpp"

namespace cldmabuf {
namespace {

constexpr size_t kPiece = 1u << 20;
constexpr size_t kParallelFrom = 2u << 20;
constexpr auto kLinger = std::chrono::milliseconds(500);

// One copy: pieces are claimed with `next`; `done` counts finished bytes.
struct CopyJob {
    uint8_t *dst;
    const uint8_t *src;
    size_t len;
    std::atomic<size_t> next{0};
    std::atomic<size_t> done{0};
    std::mutex mutex;
    std::condition_variable finished;

    // Copies pieces until none is left; true when this call finished the job.
    bool work() {
        size_t copied = 0;
        for (size_t off = next.fetch_add(kPiece); off < len; off = next.fetch_add(kPiece)) {
            const size_t n = std::min(kPiece, len - off);
            std::memcpy(dst + off, src + off, n);
            copied += n;
        }
        if (!copied) return false;
        if (done.fetch_add(copied) + copied != len) return false;
        std::lock_guard lock(mutex);
        finished.notify_all();
        return true;
    }
};

struct Pool {
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<std::shared_ptr<CopyJob>> jobs;
    size_t threads = 0;

    void helper() {
        std::unique_lock lock(mutex);
        for (;;) {
            if (jobs.empty() && !wake.wait_for(lock, kLinger, [&] { return !jobs.empty(); })) break;
            std::shared_ptr<CopyJob> job = jobs.front();
            if (job->next.load() >= job->len) {  // every piece claimed: nothing left for us
                jobs.pop_front();
                continue;
            }
            lock.unlock();
            job->work();
            lock.lock();
        }
        --threads;
    }
};

Pool &pool() {
    static Pool *p = new Pool;  // never destroyed: helpers may outlive static destruction
    return *p;
}

unsigned default_threads() {
    cpu_set_t set;
    CPU_ZERO(&set);
    const int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    return static_cast<unsigned>(std::clamp(cpus / 2, 1, 8));
}

}  // namespace

unsigned copy_threads() {
    static const unsigned n = [] {
        const char *v = setting("CLDMABUF_COPY_THREADS");
        if (!v || !*v) return default_threads();
        char *end = nullptr;
        const long parsed = std::strtol(v, &end, 10);
        if (*end || parsed < 1 || parsed > 64) {
            LOG_WARN("CLDMABUF_COPY_THREADS=%s is not a number from 1 to 64: %u", v, default_threads());
            return default_threads();
        }
        return static_cast<unsigned>(parsed);
    }();
    return n;
}

size_t live_copy_threads() {
    std::lock_guard lock(pool().mutex);
    return pool().threads;
}

void parallel_copy(void *dst, const void *src, size_t len) {
    const unsigned threads = copy_threads();
    if (threads <= 1 || len < kParallelFrom) {
        std::memcpy(dst, src, len);
        return;
    }
    auto job = std::make_shared<CopyJob>();
    job->dst = static_cast<uint8_t *>(dst);
    job->src = static_cast<const uint8_t *>(src);
    job->len = len;
    Pool &p = pool();
    {
        std::lock_guard lock(p.mutex);
        p.jobs.push_back(job);
        const size_t wanted = std::min<size_t>(threads - 1, (len + kPiece - 1) / kPiece - 1);
        while (p.threads < wanted) {
            try {
                std::thread([&p] { p.helper(); }).detach();
                ++p.threads;
            } catch (const std::system_error &) {
                break;  // no thread to be had: the caller copies the rest itself
            }
        }
    }
    p.wake.notify_all();
    if (!job->work()) {
        // Helpers hold the last pieces: each is one memcpy of at most 1 MiB.
        std::unique_lock lock(job->mutex);
        job->finished.wait(lock, [&] { return job->done.load() == job->len; });
    }
    std::lock_guard lock(p.mutex);
    auto it = std::find(p.jobs.begin(), p.jobs.end(), job);
    if (it != p.jobs.end()) p.jobs.erase(it);
}

}  // namespace cldmabuf
