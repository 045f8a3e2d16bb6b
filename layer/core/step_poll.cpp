#include "layer/core/step_poll.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

namespace cldmabuf {

bool decide_step_poll(const std::string &name, const char *setting, std::string *why) {
    if (setting && std::strcmp(setting, "on") == 0) {
        *why = "CLDMABUF_STEP_POLL=on";
        return true;
    }
    if (setting && std::strcmp(setting, "off") == 0) {
        *why = "CLDMABUF_STEP_POLL=off";
        return false;
    }
    if (name.find("NVIDIA") != std::string::npos) {
        *why = "NVIDIA calls a marker's callback about 20 ms after it completed behind a transfer";
        return true;
    }
    *why = "the ICD's callbacks come when the marker completes";
    return false;
}

namespace {

std::atomic<StepPollSource> poll_source{nullptr};

constexpr auto kFirstInterval = std::chrono::microseconds(20);
constexpr auto kLongestInterval = std::chrono::milliseconds(1);
constexpr auto kLinger = std::chrono::milliseconds(100);

struct Poller {
    std::mutex mu;
    std::condition_variable wake;
    bool running = false;  // a fork's child has none: cleared by the atfork handler
    bool woken = false;
};

Poller &poller() {
    static Poller *p = [] {
        auto *made = new Poller;  // never destroyed: steps may outlive static teardown
        pthread_atfork(nullptr, nullptr, [] { poller().running = false; });
        return made;
    }();
    return *p;
}

void poll_loop(PollOnce poll_once) {
    Poller &p = poller();
    auto interval = std::chrono::duration_cast<std::chrono::microseconds>(kFirstInterval);
    std::unique_lock lock(p.mu);
    for (;;) {
        p.woken = false;
        lock.unlock();
        const size_t left = poll_once();  // ICD status queries: never under the lock
        lock.lock();
        if (p.woken) {
            interval = kFirstInterval;
            continue;
        }
        if (left == 0) {
            // Nothing polled is pending: wait for the next, then end.
            if (!p.wake.wait_for(lock, kLinger, [&] { return p.woken; })) {
                p.running = false;
                return;
            }
            interval = kFirstInterval;
            continue;
        }
        if (p.wake.wait_for(lock, interval, [&] { return p.woken; }))
            interval = kFirstInterval;
        else
            interval = std::min<std::chrono::microseconds>(interval * 2, kLongestInterval);
    }
}

}  // namespace

void install_step_poll_source(StepPollSource source) { poll_source.store(source); }

bool step_poll_wanted(cl_command_queue queue) {
    const StepPollSource source = poll_source.load();
    return source && source(queue);
}

void wake_step_poller(PollOnce poll_once) {
    Poller &p = poller();
    std::lock_guard lock(p.mu);
    p.woken = true;
    if (p.running) {
        p.wake.notify_one();
        return;
    }
    p.running = true;
    std::thread(poll_loop, poll_once).detach();
}

}  // namespace cldmabuf
