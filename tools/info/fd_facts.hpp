// What an fd is, for `cldmabuf-info --fd N` or `--fd /proc/PID/fd/N`: the
// dma-buf checks the layer itself makes (filesystem magic, lseek size, through
// the kernel seam) plus what the kernel's fdinfo says about the exporter.
#pragma once

#include <string>

#include "tools/info/json.hpp"

namespace cldmabuf::info {

struct FdFacts {
    Json json = Json::object();  // fd, source, inode, size, exp_name, is_dma_buf, reason
    int fd = -1;                 // an fd this process can use (owned when `owned`)
    bool owned = false;
    bool is_dma_buf = false;
    long long size = -1;
};

// `spec` is a number (an fd of this process) or /proc/PID/fd/N (duplicated
// with pidfd_getfd, which needs ptrace rights on PID).  Never throws; a bad
// spec comes back with is_dma_buf false and the reason.
FdFacts inspect_fd(const std::string &spec);
void release(FdFacts &facts);

}  // namespace cldmabuf::info
