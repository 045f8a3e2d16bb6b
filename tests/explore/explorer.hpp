// The explorer (README.md here): a scenario is a program of API calls on the
// application's thread, cut into chunks that each run whole; with the test
// ICD in manual mode and CLDMABUF_DEBUG=worker-manual, nothing else happens
// unless a step is chosen: the ICD's steps (a command, a callback, a
// destructor) and the layer's worker jobs.  One schedule is the list of
// choices; main.cpp enumerates them, one fresh process per schedule.
#pragma once

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "layer/base/cl_compat.h"

namespace explore {

// A scenario's state, one per process (each schedule runs in a fresh child).
struct World {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    cl_command_queue other = nullptr;  // a second in-order queue, where a scenario opens one
    clEnqueueAcquireExternalMemObjectsKHR_fn acquire = nullptr;
    clEnqueueReleaseExternalMemObjectsKHR_fn release = nullptr;
    std::map<std::string, cl_event> events;  // by name; released by release_all()
    std::map<std::string, cl_mem> mems;
    std::map<std::string, int> fds;          // the test's own (closed at the end)
    std::map<std::string, bool> facts;       // what a chunk saw, for the checks
    std::map<int, std::string> fds_at_start;  // fd -> what it points at
    void *view = nullptr;                    // the test's mapping of the dma-buf
    size_t size = 0;

    // Failures a chunk or check found (any thread).
    void fail(const std::string &what);
    std::vector<std::string> failures();
    std::mutex mutex;
    std::vector<std::string> failed;
};

struct Chunk {
    std::string name;
    std::function<void(World &)> run;
};

struct Scenario {
    std::string name;
    std::string summary;
    std::string icd_mode;                       // CLDMABUF_TESTICD (manual is added)
    std::map<std::string, std::string> env;     // more of the environment
    // Known to fail on today's layer: reported as an expected failure with
    // its count of failing schedules; a run where it never fails is an error
    // (flip the expectation).
    bool expect_failure = false;
    // Defects of today's layer this scenario finds, each a piece of its
    // failure text: a schedule whose every failure is one of them counts as
    // known, not failing.  `known_witness` (a schedule, as
    // CLDMABUF_EXPLORE_REPLAY takes it after the colon) is run first and
    // must still fail with them: once it passes, the defect is fixed (drop
    // them then).
    std::vector<std::string> known_failures;
    std::string known_witness;
    // The paths the scenario is there to reach, each a World fact a chunk
    // sets when it saw the layer take it (its counters): every one must be
    // set in at least one schedule, or the scenario tests nothing of it.
    std::vector<std::string> paths;
    std::function<void(World &)> setup;         // not explored (every step in one fixed order)
    std::function<std::vector<Chunk>(World &)> program;  // explored
    std::function<void(World &)> check;         // after the program and every step ended
    std::function<void(World &)> between;       // at each point between two steps of the program (may be empty)
};

// Every scenario (scenarios.cpp), those of the other scenarios_*.cpp among
// them.
const std::vector<Scenario> &scenarios();
std::vector<Scenario> two_queue_scenarios();
std::vector<Scenario> fast_path_scenarios();
std::vector<Scenario> out_of_order_scenarios();
std::vector<Scenario> mapping_cache_scenarios();
std::vector<Scenario> fence_scenarios();
std::vector<Scenario> blitter_scenarios();
std::vector<Scenario> uploaded_and_quiet_scenarios();

// How a child picks among the runnable steps: the prefix first, then the
// first step (a depth-first search) or a seeded random one (a sample).
struct Chooser {
    std::vector<uint32_t> prefix;
    bool sample = false;
    uint64_t seed = 0;
    std::mt19937_64 rng;
    size_t at = 0;
    int report_fd = -1;  // each choice goes to the parent as it is made
    uint32_t choose(const std::vector<std::string> &options);
};

// Runs `scenario` once in this process under `chooser`; the result goes to
// chooser.report_fd ("C choice count label" per choice, "F text" per
// failure, "E" at a clean end).
void run_schedule(const Scenario &scenario, Chooser &chooser);
// At the end, after the schedule: runs every worker job still held (what the
// parked mappings' teardown posts: a registration's release, the staging's)
// and the ICD's steps they wait for, until no job is held or running, at
// most 2 s.
void drain_worker_jobs(World &w);

// Bounds of one schedule.
constexpr int kMaxSteps = 600;             // steps of one schedule: more is a livelock
constexpr int kSettleMs = 5000;            // a step's effects must settle within this
constexpr int kStallChecks = 50;           // nothing to run: looked at again every 10 ms before it is a deadlock

}  // namespace explore
