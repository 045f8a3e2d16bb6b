#include "settled_counts.hpp"

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "CL/cl_ext_cldmabuf.h"

namespace egltest {
namespace {

int count_open_fds() {
    int n = 0;
    DIR *dir = opendir("/proc/self/fd");
    if (!dir) return -1;
    while (dirent *e = readdir(dir)) n += e->d_name[0] != '.';
    closedir(dir);
    return n - 1;  // the directory's own fd
}

int count_mappings() {
    std::ifstream maps("/proc/self/maps");
    int n = 0;
    for (std::string line; std::getline(maps, line);) {
        std::istringstream fields(line);
        std::string range, perms, offset, dev, inode, path;
        fields >> range >> perms >> offset >> dev >> inode;
        std::getline(fields >> std::ws, path);
        if (inode == "0") continue;
        if (path.find(".so") != std::string::npos && perms.find('s') == std::string::npos) continue;
        ++n;
    }
    return n;
}

// Up to 5 s for the layer's per-queue host-step threads to end.
void wait_for_idle_workers(cl_platform_id platform) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < end) {
        cl_ulong s[CL_STATS_COUNT_CLDMABUF] = {};
        if (clGetPlatformInfo(platform, CL_PLATFORM_STATS_CLDMABUF, sizeof s, s, nullptr) != CL_SUCCESS ||
            s[CL_STATS_LIVE_WORKERS_CLDMABUF] == 0)
            return;
        usleep(5000);
    }
}

// A count unchanged for five looks 20 ms apart (bounded at 2 s).
int settled(cl_platform_id platform, int (*count)()) {
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

}  // namespace

int settled_fds(cl_platform_id platform) { return settled(platform, count_open_fds); }
int settled_mappings(cl_platform_id platform) { return settled(platform, count_mappings); }

}  // namespace egltest
