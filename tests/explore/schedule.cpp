// One schedule in this process: the application's chunks run on their own
// thread, the ICD's steps on this one, the layer's worker jobs on the
// layer's threads; after each step this thread waits until every thread has
// either finished or waits inside the ICD on something only a later step can
// end (settled), then asks the chooser for the next step.
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "explorer.hpp"
#include "vgen9_control.hpp"

namespace explore {
namespace {

using cldmabuf::test::vgen9;

// The test ICD's manual-mode controls (tests/icd/testicd.hpp) and the
// layer's worker-manual ones (layer/entry/extensions.cpp).
constexpr cl_platform_info kSteps = 0x7E63, kRunStep = 0x7E64, kWaiters = 0x7E65, kPending = 0x7E66,
                          kScheduler = 0x7E67;
constexpr cl_platform_info kHeldJobs = 0x7E70, kRunHeldJob = 0x7E71;

std::string platform_string(cl_platform_id p, cl_platform_info what) {
    size_t n = 0;
    if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
    std::string s(n, '\0');
    clGetPlatformInfo(p, what, n, s.data(), nullptr);
    s.resize(n - 1);
    return s;
}

std::vector<std::string> lines(const std::string &s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string l; std::getline(in, l);)
        if (!l.empty()) out.push_back(l);
    return out;
}

struct HeldKey {
    uint64_t key;
    size_t held, running;
};

std::vector<HeldKey> held_jobs(cl_platform_id p) {
    std::vector<HeldKey> out;
    for (const std::string &l : lines(platform_string(p, kHeldJobs))) {
        if (l.rfind("waiting ", 0) == 0) continue;  // layer_waiters()
        HeldKey k{};
        std::istringstream in(l);
        std::string key;
        in >> key >> k.held >> k.running;
        k.key = std::strtoull(key.c_str(), nullptr, 16);
        out.push_back(k);
    }
    return out;
}

// Threads waiting in the layer for worker jobs (a clFinish waiting for the
// steps it found terminated): settled, like an ICD waiter, until a job runs.
size_t layer_waiters(cl_platform_id p) {
    for (const std::string &l : lines(platform_string(p, kHeldJobs)))
        if (l.rfind("waiting ", 0) == 0) return std::strtoull(l.c_str() + 8, nullptr, 10);
    return 0;
}

// The application's thread: runs one chunk when told.
class AppThread {
public:
    AppThread() : thread_([this] { loop(); }) {}
    ~AppThread() {
        {
            std::lock_guard g(m_);
            quit_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }
    void start(std::function<void()> job) {
        std::lock_guard g(m_);
        job_ = std::move(job);
        busy_ = true;
        cv_.notify_all();
    }
    bool busy() {
        std::lock_guard g(m_);
        return busy_;
    }

private:
    void loop() {
        std::unique_lock l(m_);
        for (;;) {
            cv_.wait(l, [&] { return quit_ || job_; });
            if (!job_) return;
            auto job = std::move(job_);
            job_ = nullptr;
            l.unlock();
            job();
            l.lock();
            busy_ = false;
        }
    }
    std::mutex m_;
    std::condition_variable cv_;
    std::function<void()> job_;
    bool busy_ = false, quit_ = false;
    std::thread thread_;
};

class Scheduler {
public:
    Scheduler(World &w, AppThread &app) : w_(w), app_(app) {}

    // Every thread finished its part or waits inside the ICD for a step: the
    // threads at work (the application's, the worker jobs handed over) are
    // all ICD waiters whose condition is false, and no waiter is about to
    // wake.  Seen twice in a row.
    bool settle() {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kSettleMs);
        int seen = 0;
        while (std::chrono::steady_clock::now() < deadline) {
            size_t working = app_.busy() ? 1 : 0;
            for (const HeldKey &k : held_jobs(w_.platform)) working += k.running;
            cl_ulong waiters[2] = {0, 0};
            clGetPlatformInfo(w_.platform, kWaiters, sizeof waiters, waiters, nullptr);
            // Threads polling the virtual Gen9's fences (a blitter batch's,
            // a producer's, a release's) wait for a step too.
            uint64_t fence_waiters[2] = {0, 0};
            if (vgen9().fence_waiters) vgen9().fence_waiters(fence_waiters);
            if (waiters[0] == waiters[1] && fence_waiters[0] == fence_waiters[1] &&
                working == waiters[1] + layer_waiters(w_.platform) + fence_waiters[1]) {
                if (++seen == 3) return true;
            } else {
                seen = 0;
            }
            std::this_thread::sleep_for(std::chrono::microseconds(seen ? 200 : 50));
        }
        return false;
    }

    // Runs `chunks` among the other steps until nothing is left to run.
    // Returns false (with a failure recorded) on a deadlock, a hang or a
    // schedule past the bound.
    bool run(const std::vector<Chunk> &chunks, Chooser *chooser, const char *phase,
             const std::function<void(World &)> &between = nullptr) {
        size_t next_chunk = 0;
        int stalls = 0;
        for (int steps = 0;; ++steps) {
            if (!settle()) {
                w_.fail(std::string(phase) + ": a step did not settle within " + std::to_string(kSettleMs) +
                        " ms (a thread blocked outside the ICD's waits: a lock, a kernel wait?); application " +
                        (app_.busy() ? "busy" : "idle") + "; worker keys (held, running): " +
                        platform_string(w_.platform, kHeldJobs) + "; the ICD's commands not run: " +
                        platform_string(w_.platform, kPending));
                return false;
            }
            if (between) between(w_);
            if (steps > kMaxSteps) {
                w_.fail(std::string(phase) + ": no end within " + std::to_string(kMaxSteps) + " steps");
                return false;
            }
            std::vector<std::string> options;
            std::vector<std::function<void()>> actions;
            for (const std::string &step : lines(platform_string(w_.platform, kSteps))) {
                const cl_uint k = static_cast<cl_uint>(actions.size());
                options.push_back("icd: " + step);
                actions.push_back([this, k] {
                    if (clGetPlatformInfo(w_.platform, kRunStep, sizeof k, const_cast<cl_uint *>(&k), nullptr) !=
                        CL_SUCCESS)
                        w_.fail("the ICD refused to run its step " + std::to_string(k));
                });
            }
            const auto keys = held_jobs(w_.platform);
            for (size_t i = 0; i < keys.size(); ++i) {
                if (!keys[i].held || keys[i].running) continue;
                options.push_back("worker " + std::to_string(i));
                actions.push_back([this, key = keys[i].key] {
                    cl_ulong k = key;
                    if (clGetPlatformInfo(w_.platform, kRunHeldJob, sizeof k, &k, nullptr) != CL_SUCCESS)
                        w_.fail("the layer refused to run a held worker job");
                });
            }
            // The virtual Gen9's engine in manual mode (a scenario's set-up
            // turns it on): a batch whose waits ended runs when chosen.
            if (w_.facts["gpu manual"] && vgen9().ready_batches && vgen9().ready_batches() > 0) {
                options.push_back("gpu: run a blitter batch");
                actions.push_back([this] {
                    if (vgen9().tick(1) != 1) w_.fail("the virtual Gen9 ran no batch on its tick");
                });
            }
            if (!app_.busy() && next_chunk < chunks.size()) {
                const Chunk &c = chunks[next_chunk];
                options.push_back("app: " + c.name);
                actions.push_back([this, &c, &next_chunk] {
                    ++next_chunk;
                    app_.start([this, &c] { c.run(w_); });
                });
            }
            if (options.empty()) {
                if (next_chunk == chunks.size() && !app_.busy()) return true;
                // A thread that only looked stuck (preempted between two
                // looks at one event) moves on: a deadlock lasts.
                if (++stalls < kStallChecks) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(10));
                    --steps;
                    continue;
                }
                w_.fail(std::string(phase) + ": deadlock: nothing can run while " +
                        (app_.busy() ? "the application waits in chunk '" + chunks[next_chunk - 1].name + "'"
                                     : std::string("a worker job waits")) +
                        "; the ICD's commands not run: " + platform_string(w_.platform, kPending));
                return false;
            }
            stalls = 0;
            const uint32_t pick = chooser ? chooser->choose(options) : 0;
            actions[pick]();
        }
    }

private:
    World &w_;
    AppThread &app_;
};

void report(int fd, const std::string &line) {
    std::string l = line;
    for (char &c : l)
        if (c == '\n') c = ' ';
    l += '\n';
    for (size_t done = 0; done < l.size();) {
        const ssize_t n = write(fd, l.data() + done, l.size() - done);
        if (n <= 0) return;
        done += static_cast<size_t>(n);
    }
}

}  // namespace

void World::fail(const std::string &what) {
    std::lock_guard g(mutex);
    failed.push_back(what);
}

std::vector<std::string> World::failures() {
    std::lock_guard g(mutex);
    return failed;
}

uint32_t Chooser::choose(const std::vector<std::string> &options) {
    const uint32_t n = static_cast<uint32_t>(options.size());
    uint32_t c = 0;
    if (at < prefix.size()) c = prefix[at] < n ? prefix[at] : n - 1;  // a replay past a changed layer
    else if (sample) c = static_cast<uint32_t>(rng() % n);
    ++at;
    if (report_fd >= 0) report(report_fd, "C " + std::to_string(c) + " " + std::to_string(n) + " " + options[c]);
    return c;
}

void drain_worker_jobs(World &w) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < deadline) {
        size_t left = 0;
        for (const HeldKey &k : held_jobs(w.platform)) {
            left += k.held + k.running;
            if (!k.held || k.running) continue;
            cl_ulong key = k.key;
            if (clGetPlatformInfo(w.platform, kRunHeldJob, sizeof key, &key, nullptr) != CL_SUCCESS)
                w.fail("the layer refused to run a held worker job");
        }
        // What those jobs enqueue and wait for (the staging's unmap and
        // clFinish), and the destruction of what they release, runs when the
        // ICD's manual mode is told to.
        const bool steps = !lines(platform_string(w.platform, kSteps)).empty();
        if (left == 0 && !steps) return;
        if (steps) {
            cl_uint first = 0;
            clGetPlatformInfo(w.platform, kRunStep, sizeof first, &first, nullptr);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    w.fail("worker jobs still held or running 2 s after the end: " + platform_string(w.platform, kHeldJobs));
}

void run_schedule(const Scenario &scenario, Chooser &chooser) {
    World w;
    cl_uint n = 0;
    if (clGetPlatformIDs(1, &w.platform, &n) != CL_SUCCESS || n == 0) {
        report(chooser.report_fd, "F no OpenCL platform (the test ICD through OCL_ICD_VENDORS?)");
        _exit(1);
    }
    clGetPlatformInfo(w.platform, kScheduler, 0, nullptr, nullptr);
    {
        AppThread app;
        Scheduler s(w, app);
        chooser.rng.seed(chooser.seed);
        bool ok = s.run({{"setup", scenario.setup}}, nullptr, "setup");
        if (ok && w.failures().empty()) {
            const std::vector<Chunk> program = scenario.program(w);
            ok = s.run(program, &chooser, "program", scenario.between);
        }
        if (ok) scenario.check(w);  // after a failure between steps too: what else it left
        if (!ok) {
            // A thread is stuck: report and leave without the destructors.
            for (const std::string &f : w.failures()) report(chooser.report_fd, "F " + f);
            _exit(1);
        }
    }
    for (const std::string &f : w.failures()) report(chooser.report_fd, "F " + f);
    for (const std::string &p : scenario.paths)
        if (w.facts[p]) report(chooser.report_fd, "T " + p);
    report(chooser.report_fd, "E");
}

}  // namespace explore
