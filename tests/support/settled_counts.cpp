#include "settled_counts.hpp"

#include <unistd.h>

#include <chrono>

#include "CL/cl_ext_cldmabuf.h"
#include "process_counts.hpp"

namespace cldmabuf::test {

void wait_for_idle_workers(cl_platform_id platform) {
    if (!platform) return;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
        cl_ulong s[CL_STATS_COUNT_CLDMABUF] = {};
        if (clGetPlatformInfo(platform, CL_PLATFORM_STATS_CLDMABUF, sizeof s, s, nullptr) != CL_SUCCESS ||
            s[CL_STATS_LIVE_WORKERS_CLDMABUF] == 0)
            return;
        if (std::chrono::steady_clock::now() > end) return;
        usleep(5000);
    }
}

int settled_count(cl_platform_id platform, int (*count)()) {
    wait_for_idle_workers(platform);
    int last = count();
    for (int still = 0, i = 0; still < 5 && i < 100; ++i) {
        usleep(20 * 1000);
        const int now = count();
        still = now == last ? still + 1 : 0;
        last = now;
    }
    return last;
}

int parked_mappings(cl_platform_id platform) {
    cl_ulong s[CL_STATS_COUNT_CLDMABUF] = {};
    if (!platform || clGetPlatformInfo(platform, CL_PLATFORM_STATS_CLDMABUF, sizeof s, s, nullptr) != CL_SUCCESS)
        return 0;
    return static_cast<int>(s[CL_STATS_PARKED_MAPPINGS_CLDMABUF]);
}

namespace {
cl_platform_id counted_platform;
// The count less the parked mappings, both of one moment: the cache's
// reaper may drop parked mappings between the two reads, so the parked
// gauge is read on both sides of the count until it did not move.
int unparked(int (*count)()) {
    int n = 0;
    for (int i = 0; i < 50; ++i) {
        const int parked = parked_mappings(counted_platform);
        n = count() - parked;
        if (parked_mappings(counted_platform) == parked) break;
    }
    return n;
}
int unparked_fds() { return unparked(count_open_fds); }
int unparked_mappings() { return unparked(count_mappings); }
}  // namespace

int unparked_fds_now(cl_platform_id platform) {
    counted_platform = platform;
    return unparked_fds();
}

int settled_fds(cl_platform_id platform) {
    counted_platform = platform;
    return settled_count(platform, unparked_fds);
}
int settled_mappings(cl_platform_id platform) {
    counted_platform = platform;
    return settled_count(platform, unparked_mappings);
}

cl_ulong step_callback_records_toward(cl_platform_id platform, cl_command_queue queue, cl_ulong expected) {
    auto now = [platform] {
        cl_ulong s[CL_STATS_COUNT_CLDMABUF] = {};
        clGetPlatformInfo(platform, CL_PLATFORM_STATS_CLDMABUF, sizeof s, s, nullptr);
        return s[CL_STATS_STEP_CALLBACK_RECORDS_CLDMABUF];
    };
    cl_ulong records = now();
    for (int i = 0; i < 600 && records != expected; ++i) {
        usleep(5000);
        clFinish(queue);
        records = now();
    }
    return records;
}

}  // namespace cldmabuf::test
