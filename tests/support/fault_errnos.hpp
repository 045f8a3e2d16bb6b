// The fault sweeps' errno table: what the kernel can answer for each libc
// function tests/fault/libcldmabuf-fault.so wraps (man pages; the fault issue's
// list for ioctls, plus ENOTTY).  The host sweep (tests/e2e/test_fault_sweep.cpp)
// and the EGL sweep (tests/egl/test_egl_fault_sweep.cpp) fail each call once
// with each of these.  EINTR/EAGAIN of an ioctl is retried by
// kernel_ioctl_retry, so a single one must complete correctly.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace cldmabuf::test {

extern const std::map<std::string, std::vector<int>> kFaultErrnos;

}  // namespace cldmabuf::test
