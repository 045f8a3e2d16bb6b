#include "layer/core/worker.hpp"

#include "layer/base/settings.hpp"

#include <atomic>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace cldmabuf {
namespace {

// Long enough that a queue doing acquire/kernel/release in a loop keeps its
// thread; short enough that a released queue's thread goes away soon.
constexpr auto idle_linger = std::chrono::milliseconds(500);

struct Worker {
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<std::function<void()>> jobs;
    std::thread thread;
    bool stopping = false;
};

// Lock order: registry_mutex before any Worker::mutex.
std::mutex registry_mutex;
// Leaked on purpose: ICD callback threads may post during static destruction.
auto *workers = new std::unordered_map<const void *, std::shared_ptr<Worker>>;
// Threads that ended themselves after idling: joined by the next post or at
// shutdown (a thread cannot join itself).
auto *ended = new std::vector<std::thread>;

void join_ended_locked(std::vector<std::thread> *out) {
    for (auto &t : *ended) out->push_back(std::move(t));
    ended->clear();
}

void run(const void *key, std::shared_ptr<Worker> w) {
    std::unique_lock lock(w->mutex);
    for (;;) {
        if (w->jobs.empty()) {
            if (w->stopping) return;  // shutdown_worker joins us
            if (!w->wake.wait_for(lock, idle_linger, [&] { return w->stopping || !w->jobs.empty(); })) {
                // Idle: leave the registry unless a job arrived meanwhile.
                lock.unlock();
                std::lock_guard reg(registry_mutex);
                lock.lock();
                if (!w->jobs.empty() || w->stopping) continue;
                auto it = workers->find(key);
                if (it != workers->end() && it->second == w) {
                    ended->push_back(std::move(w->thread));
                    workers->erase(it);
                }
                return;
            }
            continue;
        }
        auto job = std::move(w->jobs.front());
        w->jobs.pop_front();
        lock.unlock();
        job();
        lock.lock();
    }
}

// worker-manual: the jobs held per key, the keys in the order of their
// first job, the jobs handed over and not finished (under held_mutex).
struct Held {
    std::vector<const void *> keys;
    std::unordered_map<const void *, std::deque<std::function<void()>>> jobs;
    std::unordered_map<const void *, size_t> running;
};
std::mutex held_mutex;
auto *held = new Held;  // leaked, like workers

void post_now(const void *key, std::function<void()> job);

}  // namespace

bool worker_manual() {
    static const bool on = debug_on(DebugWord::worker_manual);
    return on;
}

std::atomic<int> waiting_for_worker{0};

void note_waiting_for_worker(int delta) { waiting_for_worker.fetch_add(delta, std::memory_order_relaxed); }

std::string held_worker_jobs() {
    std::lock_guard guard(held_mutex);
    std::string out;
    for (const void *key : held->keys) {
        char line[80];
        std::snprintf(line, sizeof line, "%p %zu %zu\n", key, held->jobs[key].size(), held->running[key]);
        out += line;
    }
    out += "waiting " + std::to_string(waiting_for_worker.load(std::memory_order_relaxed)) + "\n";
    return out;
}

bool run_held_worker_job(const void *key) {
    std::function<void()> job;
    {
        std::lock_guard guard(held_mutex);
        auto it = held->jobs.find(key);
        if (it == held->jobs.end() || it->second.empty()) return false;
        job = std::move(it->second.front());
        it->second.pop_front();
        ++held->running[key];
    }
    post_now(key, [key, job = std::move(job)] {
        job();
        std::lock_guard guard(held_mutex);
        --held->running[key];
    });
    return true;
}

void post_to_worker(const void *key, std::function<void()> job) {
    if (worker_manual()) {
        std::lock_guard guard(held_mutex);
        if (std::find(held->keys.begin(), held->keys.end(), key) == held->keys.end()) held->keys.push_back(key);
        held->jobs[key].push_back(std::move(job));
        return;
    }
    post_now(key, std::move(job));
}

namespace {

void post_now(const void *key, std::function<void()> job) {
    std::vector<std::thread> to_join;
    {
        std::lock_guard reg(registry_mutex);
        join_ended_locked(&to_join);
        auto &slot = (*workers)[key];
        if (!slot) {
            slot = std::make_shared<Worker>();
            slot->thread = std::thread(run, key, slot);
        }
        {
            std::lock_guard lock(slot->mutex);
            slot->jobs.push_back(std::move(job));
        }
        slot->wake.notify_one();
    }
    for (auto &t : to_join) t.join();  // already finished: returns at once
}

}  // namespace

void shutdown_worker() {
    std::vector<std::shared_ptr<Worker>> running;
    std::vector<std::thread> to_join;
    {
        std::lock_guard reg(registry_mutex);
        for (auto &[key, w] : *workers) running.push_back(w);
        workers->clear();
        join_ended_locked(&to_join);
    }
    for (auto &w : running) {
        {
            std::lock_guard lock(w->mutex);
            w->stopping = true;
        }
        w->wake.notify_one();
    }
    // Each thread drains its own jobs before it returns.
    for (auto &w : running)
        if (w->thread.joinable()) w->thread.join();
    for (auto &t : to_join) t.join();
}

size_t live_workers() {
    std::lock_guard reg(registry_mutex);
    return workers->size();
}

}  // namespace cldmabuf
