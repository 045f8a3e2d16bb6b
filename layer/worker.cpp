#include "layer/worker.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace cldmabuf {
namespace {

struct Worker {
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<std::function<void()>> jobs;
    std::thread thread;
    bool stopping = false;

    void run() {
        std::unique_lock lock(mutex);
        for (;;) {
            wake.wait(lock, [&] { return stopping || !jobs.empty(); });
            if (jobs.empty()) return;  // stopping and drained
            auto job = std::move(jobs.front());
            jobs.pop_front();
            lock.unlock();
            job();
            lock.lock();
        }
    }
};

std::mutex worker_mutex;
Worker *worker = nullptr;  // created lazily, joined at shutdown

}  // namespace

void post_to_worker(std::function<void()> job) {
    std::lock_guard guard(worker_mutex);
    if (!worker) {
        worker = new Worker;
        worker->thread = std::thread([w = worker] { w->run(); });
    }
    {
        std::lock_guard lock(worker->mutex);
        worker->jobs.push_back(std::move(job));
    }
    worker->wake.notify_one();
}

void shutdown_worker() {
    Worker *w;
    {
        std::lock_guard guard(worker_mutex);
        w = worker;
        worker = nullptr;
    }
    if (!w) return;
    {
        std::lock_guard lock(w->mutex);
        w->stopping = true;
    }
    w->wake.notify_one();
    if (w->thread.joinable()) w->thread.join();
    delete w;
}

}  // namespace cldmabuf
