// A mapping the layer owns: munmap'ed through the kernel seam
// (kernel_ops.hpp) when it goes.  Move-only; release() hands the range on to
// a record that unmaps it later (a cache, a GEM object's owner).
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <utility>

#include "layer/base/kernel_ops.hpp"

namespace cldmabuf {

class OwnedMapping {
public:
    OwnedMapping() = default;
    // `addr` may be MAP_FAILED or null: then nothing is owned.
    OwnedMapping(void *addr, size_t len) noexcept
        : addr_(addr == MAP_FAILED ? nullptr : addr), len_(addr_ ? len : 0) {}
    OwnedMapping(OwnedMapping &&other) noexcept
        : addr_(std::exchange(other.addr_, nullptr)), len_(std::exchange(other.len_, 0)) {}
    OwnedMapping &operator=(OwnedMapping &&other) noexcept {
        if (this != &other) {
            reset();
            addr_ = std::exchange(other.addr_, nullptr);
            len_ = std::exchange(other.len_, 0);
        }
        return *this;
    }
    OwnedMapping(const OwnedMapping &) = delete;
    OwnedMapping &operator=(const OwnedMapping &) = delete;
    ~OwnedMapping() { reset(); }

    void *get() const noexcept { return addr_; }
    size_t size() const noexcept { return len_; }
    explicit operator bool() const noexcept { return addr_ != nullptr; }
    // The address, no longer owned here (its length was size()).
    void *release() noexcept {
        len_ = 0;
        return std::exchange(addr_, nullptr);
    }
    // Unmaps the range held (if any).
    void reset() noexcept {
        if (addr_) kernel().munmap(addr_, len_);
        addr_ = nullptr;
        len_ = 0;
    }

private:
    void *addr_ = nullptr;
    size_t len_ = 0;
};

}  // namespace cldmabuf
