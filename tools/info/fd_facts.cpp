#include "tools/info/fd_facts.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "layer/dmabuf/primitives.hpp"
#include "layer/base/kernel_ops.hpp"

namespace cldmabuf::info {
namespace {

bool parse_int(const std::string &s, long *out) {
    if (s.empty()) return false;
    char *end = nullptr;
    errno = 0;
    const long v = std::strtol(s.c_str(), &end, 10);
    if (errno || *end || v < 0) return false;
    *out = v;
    return true;
}

// "key:\tvalue" lines of /proc/PID/fdinfo/N (dma-buf adds size, count,
// exp_name and name to the generic pos/flags/mnt_id/ino).
void read_fdinfo(const std::string &path, Json *out) {
    std::ifstream in(path);
    if (!in) return;
    std::string line;
    while (std::getline(in, line)) {
        const size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        const std::string key = line.substr(0, colon);
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(" \t"));
        if (key == "exp_name") out->set("exp_name", value);
        else if (key == "name" && !value.empty()) out->set("buffer_name", value);
        else if (key == "size") out->set("fdinfo_size", static_cast<int64_t>(std::strtoll(value.c_str(), nullptr, 10)));
        else if (key == "count") out->set("file_refs", static_cast<int64_t>(std::strtoll(value.c_str(), nullptr, 10)));
    }
}

// pidfd_open + pidfd_getfd (Linux 5.6): a duplicate of another process's fd.
int grab_fd(long pid, long n, std::string *why) {
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
    if (pidfd < 0) {
        *why = "pidfd_open(" + std::to_string(pid) + "): " + std::strerror(errno);
        return -1;
    }
    const int fd = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, static_cast<int>(n), 0));
    const int err = errno;
    close(pidfd);
    if (fd < 0) *why = "pidfd_getfd(" + std::to_string(n) + "): " + std::strerror(err) + " (needs ptrace rights, e.g. root)";
    return fd;
#else
    (void)pid, (void)n;
    *why = "this build has no pidfd_getfd";
    return -1;
#endif
}

}  // namespace

FdFacts inspect_fd(const std::string &spec) {
    FdFacts f;
    f.json.set("source", spec);
    long pid = -1, n = -1;
    std::string fdinfo;
    if (parse_int(spec, &n)) {
        f.fd = static_cast<int>(n);
        fdinfo = "/proc/self/fdinfo/" + spec;
    } else if (spec.rfind("/proc/", 0) == 0) {
        const std::string rest = spec.substr(6);
        const size_t slash = rest.find("/fd/");
        if (slash == std::string::npos || !parse_int(rest.substr(0, slash), &pid) ||
            !parse_int(rest.substr(slash + 4), &n)) {
            f.json.set("is_dma_buf", false);
            f.json.set("reason", "expected a number or /proc/PID/fd/N, got " + spec);
            return f;
        }
        std::string why;
        f.fd = grab_fd(pid, n, &why);
        if (f.fd < 0) {
            f.json.set("is_dma_buf", false);
            f.json.set("reason", why);
            return f;
        }
        f.owned = true;
        fdinfo = "/proc/" + std::to_string(pid) + "/fdinfo/" + std::to_string(n);
    } else {
        f.json.set("is_dma_buf", false);
        f.json.set("reason", "expected a number or /proc/PID/fd/N, got " + spec);
        return f;
    }
    f.json.set("local_fd", f.fd);  // the fd as this process holds it (a duplicate for /proc paths)
    struct stat st {};
    if (kernel().fstat(f.fd, &st) == 0) f.json.set("inode", static_cast<uint64_t>(st.st_ino));
    read_fdinfo(fdinfo, &f.json);
    const std::string bad = check_dmabuf_fd(f.fd);
    f.is_dma_buf = bad.empty();
    f.json.set("is_dma_buf", f.is_dma_buf);
    if (!f.is_dma_buf) {
        f.json.set("reason", bad);
        return f;
    }
    const int64_t size = dmabuf_size(f.fd);
    f.size = size;
    f.json.set("size", size);
    if (size <= 0) {
        f.is_dma_buf = false;
        f.json.set("is_dma_buf", false);
        f.json.set("reason", size == 0 ? std::string("the dma-buf is empty (lseek reports 0 bytes)")
                                       : "cannot size the dma-buf (lseek: " +
                                             std::string(std::strerror(static_cast<int>(-size))) + ")");
    }
    return f;
}

void release(FdFacts &facts) {
    if (facts.owned && facts.fd >= 0) close(facts.fd);
    facts.fd = -1;
    facts.owned = false;
}

}  // namespace cldmabuf::info
