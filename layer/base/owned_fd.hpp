// An fd the layer owns: closed through the kernel seam (kernel_ops.hpp) when
// it goes, so an error path cannot leak it and a unit test's fake kernel sees
// every close.  Move-only; release() hands the fd on (to an application, to a
// record that outlives the scope) and the type forgets it.
#pragma once

#include <utility>

#include "layer/base/kernel_ops.hpp"

namespace cldmabuf {

class OwnedFd {
public:
    OwnedFd() = default;
    explicit OwnedFd(int fd) noexcept : fd_(fd) {}
    OwnedFd(OwnedFd &&other) noexcept : fd_(other.release()) {}
    OwnedFd &operator=(OwnedFd &&other) noexcept {
        if (this != &other) reset(other.release());
        return *this;
    }
    OwnedFd(const OwnedFd &) = delete;
    OwnedFd &operator=(const OwnedFd &) = delete;
    ~OwnedFd() { reset(); }

    int get() const noexcept { return fd_; }
    explicit operator bool() const noexcept { return fd_ >= 0; }
    // The fd, no longer owned here (-1 when there was none).
    int release() noexcept { return std::exchange(fd_, -1); }
    // Closes the fd held (if any) and owns `fd` instead.
    void reset(int fd = -1) noexcept {
        const int old = std::exchange(fd_, fd);
        if (old >= 0) kernel().close(old);
    }

private:
    int fd_ = -1;
};

}  // namespace cldmabuf
