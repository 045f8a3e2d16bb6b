// Park points (README.md, "Races"): the next call of an armed function stops
// inside the ICD until the test lets it go, so a test can put another
// thread's command exactly between the layer's count and the queue, or
// between a clFinish's drain and its return.  One point at a time; a parked
// call gives up after 30 s (the test then fails on what it checks).
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "testicd.hpp"

namespace testicd {
namespace {
std::mutex park_mutex;
std::condition_variable park_changed;
std::string armed;       // the function whose next call parks ("" none)
bool parked = false;     // a call is parked now
bool let_go = false;     // the test let it go
}  // namespace

void arm_park(const std::string &function) {
    std::lock_guard guard(park_mutex);
    armed = function;
    let_go = false;
}

void park_point(const char *function) {
    std::unique_lock held(park_mutex);
    if (armed.empty() || armed != function) return;
    armed.clear();
    parked = true;
    park_changed.notify_all();
    park_changed.wait_for(held, std::chrono::seconds(30), [] { return let_go; });
    parked = false;
    let_go = false;
    park_changed.notify_all();
}

bool park_state() {
    std::lock_guard guard(park_mutex);
    return parked;
}

void unpark() {
    std::lock_guard guard(park_mutex);
    let_go = true;
    park_changed.notify_all();
}

}  // namespace testicd
