// A GEM handle the layer owns on a DRM node (i915, vgem): GEM_CLOSE'd through
// the kernel seam when it goes.  The node's fd is not owned (whoever holds the
// handle keeps its node open longer).  Move-only; release() hands the handle
// to a record that closes it later.
#pragma once

#include <drm.h>

#include <cstdint>
#include <utility>

#include "layer/base/kernel_ops.hpp"

namespace cldmabuf {

class GemHandle {
public:
    GemHandle() = default;
    GemHandle(int node_fd, uint32_t handle) noexcept : node_fd_(node_fd), handle_(handle) {}
    GemHandle(GemHandle &&other) noexcept
        : node_fd_(other.node_fd_), handle_(std::exchange(other.handle_, 0)) {}
    GemHandle &operator=(GemHandle &&other) noexcept {
        if (this != &other) {
            reset();
            node_fd_ = other.node_fd_;
            handle_ = std::exchange(other.handle_, 0);
        }
        return *this;
    }
    GemHandle(const GemHandle &) = delete;
    GemHandle &operator=(const GemHandle &) = delete;
    ~GemHandle() { reset(); }

    uint32_t get() const noexcept { return handle_; }
    explicit operator bool() const noexcept { return handle_ != 0; }
    // The handle, no longer owned here (0 when there was none).
    uint32_t release() noexcept { return std::exchange(handle_, 0); }
    void reset() noexcept {
        if (handle_ == 0) return;
        drm_gem_close c{};
        c.handle = std::exchange(handle_, 0);
        kernel_ioctl_retry(node_fd_, DRM_IOCTL_GEM_CLOSE, &c);
    }

private:
    int node_fd_ = -1;
    uint32_t handle_ = 0;  // 0 is never a GEM handle
};

}  // namespace cldmabuf
