// layer/base/owned_fd, owned_mapping, gem_handle: each closes what it owns
// exactly once, through the kernel seam, and nothing once released or moved.
#include <catch2/catch_test_macros.hpp>

#include <drm.h>

#include <vector>

#include "fake_kernel.hpp"
#include "layer/base/gem_handle.hpp"
#include "layer/base/owned_fd.hpp"
#include "layer/base/owned_mapping.hpp"

namespace {

struct RecordingKernel : unit::FakeKernel {
    std::vector<int> closed;
    std::vector<std::pair<void *, size_t>> unmapped;
    int close(int fd) override {
        closed.push_back(fd);
        return 0;
    }
    int munmap(void *addr, size_t len) override {
        unmapped.emplace_back(addr, len);
        return 0;
    }
};

void *address(uintptr_t a) { return reinterpret_cast<void *>(a); }

}  // namespace

using cldmabuf::GemHandle;
using cldmabuf::OwnedFd;
using cldmabuf::OwnedMapping;

TEST_CASE("an owned fd is closed once, through the seam", "[owned]") {
    RecordingKernel k;
    unit::ScopedKernel scope(&k);
    {
        OwnedFd a(7);
        OwnedFd b(std::move(a));
        CHECK(a.get() == -1);
        CHECK(b.get() == 7);
        OwnedFd c(9);
        c = std::move(b);  // 9 goes, 7 moves on
        CHECK(k.closed == std::vector<int>{9});
        OwnedFd none;
        CHECK_FALSE(none);
    }
    CHECK(k.closed == std::vector<int>{9, 7});
}

TEST_CASE("a released fd is not closed; reset closes the old one", "[owned]") {
    RecordingKernel k;
    unit::ScopedKernel scope(&k);
    {
        OwnedFd a(4);
        CHECK(a.release() == 4);
        OwnedFd b(5);
        b.reset(6);
        CHECK(k.closed == std::vector<int>{5});
    }
    CHECK(k.closed == std::vector<int>{5, 6});
}

TEST_CASE("an owned mapping is unmapped once with its length; MAP_FAILED owns nothing", "[owned]") {
    RecordingKernel k;
    unit::ScopedKernel scope(&k);
    {
        OwnedMapping failed(MAP_FAILED, 4096);
        CHECK_FALSE(failed);
        OwnedMapping m(address(0x10000), 8192);
        OwnedMapping moved(std::move(m));
        CHECK_FALSE(m);
        CHECK(moved.size() == 8192);
        OwnedMapping kept(address(0x20000), 4096);
        CHECK(kept.release() == address(0x20000));
    }
    REQUIRE(k.unmapped.size() == 1);
    CHECK(k.unmapped[0].first == address(0x10000));
    CHECK(k.unmapped[0].second == 8192);
}

TEST_CASE("an owned GEM handle is GEM_CLOSE'd once on its node", "[owned]") {
    RecordingKernel k;
    unit::ScopedKernel scope(&k);
    {
        GemHandle a(3, 42);
        GemHandle b(std::move(a));
        GemHandle kept(3, 43);
        CHECK(kept.release() == 43);
        GemHandle none;
        CHECK_FALSE(none);
    }
    REQUIRE(k.ioctls.size() == 1);
    CHECK(k.ioctls[0].first == DRM_IOCTL_GEM_CLOSE);
    CHECK(k.ioctls[0].second == 42);  // drm_gem_close's first u64: the handle (and its padding)
    CHECK(k.ioctl_fds == std::vector<int>{3});
}
