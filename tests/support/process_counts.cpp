#include "process_counts.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace cldmabuf::test {

int count_open_fds() {
    int n = 0;
    DIR *dir = opendir("/proc/self/fd");
    if (!dir) return -1;
    while (dirent *e = readdir(dir)) n += e->d_name[0] != '.';
    closedir(dir);
    return n - 1;  // the directory's own fd
}

int count_mappings() {
    // File-backed mappings other than loaded code: a leaked dma-buf mapping is
    // one of them whatever its exporter calls it (/dmabuf:, memfd:, a GEM
    // object's shmem file).  Anonymous memory is left out on purpose: thread
    // stacks of the layer's per-queue workers and the ICD's allocator arenas
    // (PoCL's ALLOC_HOST_PTR staging memory among them) come and go on their
    // own schedule, and are not what these leak checks are about.
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

bool fd_is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

std::string describe_open_fds() {
    std::string out;
    DIR *dir = opendir("/proc/self/fd");
    if (!dir) return "(no /proc/self/fd)\n";
    const int own = dirfd(dir);
    while (dirent *e = readdir(dir)) {
        if (e->d_name[0] == '.' || std::stoi(e->d_name) == own) continue;
        char target[256] = {};
        const std::string link = std::string("/proc/self/fd/") + e->d_name;
        const ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
        out += std::string(e->d_name) + " -> " + (n > 0 ? std::string(target, static_cast<size_t>(n)) : "?") + "\n";
    }
    closedir(dir);
    return out;
}

}  // namespace cldmabuf::test
