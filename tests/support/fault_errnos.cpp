#include "fault_errnos.hpp"

#include <cerrno>

namespace cldmabuf::test {

const std::map<std::string, std::vector<int>> kFaultErrnos = {
    {"open", {ENOENT, EACCES, EMFILE, ENOMEM, EINTR, ENODEV, EIO}},
    {"close", {EINTR, EIO, EBADF}},
    {"fcntl", {EMFILE, EBADF, EINVAL}},
    {"ioctl", {EINTR, EAGAIN, ENOMEM, EIO, EFAULT, EBADF, ENODEV, EINVAL, ETIME, ENOTTY}},
    {"mmap", {ENOMEM, EACCES, ENODEV, EINVAL, EAGAIN, EBADF}},
    {"munmap", {}},  // counted, never failed (tests/fault/fault_inject.cpp says why)
    {"poll", {EINTR, EAGAIN, ENOMEM, EFAULT, EINVAL}},
    {"lseek", {EINVAL, ESPIPE, EBADF, ENXIO}},
    {"fstatfs", {EIO, EBADF, ENOSYS, EINTR, ENOMEM}},
    {"fstat", {EBADF, EIO, ENOMEM, EFAULT}},
    {"stat", {ENOENT, EACCES, ENOMEM, EIO}},
    {"read", {EINTR, EIO, EAGAIN, EBADF}},
};

}  // namespace cldmabuf::test
