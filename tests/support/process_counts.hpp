// Snapshots of what this process holds, for the leak checks of every suite:
// its open fds and its file-backed mappings other than loaded code
// (/proc/self/fd, /proc/self/maps).  No OpenCL: the settled forms, which wait
// for the layer to be quiet first, are in settled_counts.hpp.
#pragma once

#include <string>

namespace cldmabuf::test {

int count_open_fds();  // -1 when /proc/self/fd cannot be read
int count_mappings();  // see process_counts.cpp for what counts
bool fd_is_open(int fd);
// One line per open fd, "N -> target" (a leak check's message names what is left).
std::string describe_open_fds();

}  // namespace cldmabuf::test
