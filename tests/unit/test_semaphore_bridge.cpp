// The dma-buf bridge's kernel calls (layer/dmabuf/explicit_fences.hpp,
// layer/sync/dmabuf_bridge.hpp) on the scripted kernel.
#include <catch2/catch_test_macros.hpp>

#include <linux/ioctl.h>  // _IOWR behind the DMA_BUF_IOCTL_* numbers (issue #29)
#include <linux/dma-buf.h>

#include "fake_kernel.hpp"
#include "layer/dmabuf/explicit_fences.hpp"
#include "layer/sync/dmabuf_bridge.hpp"

using namespace unit;

TEST_CASE("explicit fences: EXPORT_SYNC_FILE and IMPORT_SYNC_FILE in the access direction", "[semaphore]") {
    FakeKernel k;
    ScopedKernel scope(&k);
    int fd = -1;
    REQUIRE(cldmabuf::export_dmabuf_fences(5, /*write=*/false, &fd) == 0);
    REQUIRE(k.ioctls.size() == 1);
    CHECK(k.ioctls[0].first == DMA_BUF_IOCTL_EXPORT_SYNC_FILE);
    CHECK((k.ioctls[0].second & 0xffffffffu) == DMA_BUF_SYNC_READ);
    REQUIRE(cldmabuf::import_fence_into_dmabuf(5, 9, /*write=*/true) == 0);
    CHECK(k.ioctls[1].first == DMA_BUF_IOCTL_IMPORT_SYNC_FILE);
    CHECK((k.ioctls[1].second & 0xffffffffu) == DMA_BUF_SYNC_WRITE);
    CHECK((k.ioctls[1].second >> 32) == 9);
    k.ioctl_errnos = {ENOTTY};  // Linux < 6.0
    CHECK(cldmabuf::export_dmabuf_fences(5, true, &fd) == -ENOTTY);
}

TEST_CASE("explicit fences: a kernel without EXPORT_SYNC_FILE is a fallback, not a wait", "[semaphore]") {
    FakeKernel k;
    ScopedKernel scope(&k);
    k.ioctl_errnos = {ENOTTY};
    bool exported = true;
    const int r = cldmabuf::dmabuf_wait_exported_fences(5, true, 100, &exported);
    CHECK(r == -ENOTTY);
    CHECK(cldmabuf::export_unsupported(r));
    CHECK_FALSE(exported);
    CHECK(k.polls == 0);
}

TEST_CASE("explicit fences: no fence source, no release fence and nothing imported", "[semaphore]") {
    FakeKernel k;  // open() fails and /dev/dri is empty: no sw_sync, no vgem
    ScopedKernel scope(&k);
    cldmabuf::sync::DmabufSignal s;
    CHECK(s.attach(5) == -ENODEV);
    CHECK(k.ioctls.empty());
    s.signal();  // harmless
    CHECK(k.ioctls.empty());
}

// ---- acquire's fence wait (layer/handoff/cpu_access.hpp) ----------------------------------

#include "layer/dmabuf/primitives.hpp"
#include "layer/handoff/cpu_access.hpp"
#include "layer/core/import_state.hpp"
#include "layer/core/registry.hpp"

namespace {
struct ForgottenImport : cldmabuf::Import {
    ForgottenImport() { fd = 5; }
    ~ForgottenImport() { cldmabuf::forget_import_state(*this); }
};
}  // namespace

TEST_CASE("acquire fences: the exported sync_file is waited on, and the way is kept for the dma-buf", "[semaphore]") {
    FakeKernel k;
    ScopedKernel scope(&k);
    ForgottenImport import;
    CHECK(cldmabuf::fence_wait_route(import) == cldmabuf::FenceWaitRoute::unknown);
    REQUIRE(cldmabuf::wait_acquire_fences(import, cldmabuf::DMABUF_SYNC_WRITE, "acquire") == CL_SUCCESS);
    REQUIRE(k.ioctls.size() == 1);
    CHECK(k.ioctls[0].first == DMA_BUF_IOCTL_EXPORT_SYNC_FILE);
    CHECK((k.ioctls[0].second & 0xffffffffu) == DMA_BUF_SYNC_WRITE);  // every fence, as POLLOUT
    CHECK(k.polls == 1);
    CHECK(cldmabuf::fence_wait_route(import) == cldmabuf::FenceWaitRoute::sync_file);
    // A sync_file that does not signal in time: today's status.
    k.on_poll = [](struct pollfd *, int) { return 0; };
    CHECK(cldmabuf::wait_acquire_fences(import, cldmabuf::DMABUF_SYNC_READ, "acquire") == CL_OUT_OF_RESOURCES);
    CHECK((k.ioctls[1].second & 0xffffffffu) == DMA_BUF_SYNC_READ);  // the writers only, as POLLIN
}

TEST_CASE("acquire fences: ENOTTY (Linux < 6.0) polls the dma-buf from then on; EMFILE decides nothing",
          "[semaphore]") {
    FakeKernel k;
    ScopedKernel scope(&k);
    ForgottenImport passing, old_kernel;
    k.ioctl_errnos = {EMFILE};
    CHECK(cldmabuf::wait_acquire_fences(passing, cldmabuf::DMABUF_SYNC_READ, "acquire") == CL_SUCCESS);
    CHECK(k.polls == 1);  // the dma-buf, polled this once
    CHECK(cldmabuf::fence_wait_route(passing) == cldmabuf::FenceWaitRoute::unknown);

    k.ioctls.clear();
    k.ioctl_errnos = {ENOTTY};
    CHECK(cldmabuf::wait_acquire_fences(old_kernel, cldmabuf::DMABUF_SYNC_READ, "acquire") == CL_SUCCESS);
    CHECK(cldmabuf::fence_wait_route(old_kernel) == cldmabuf::FenceWaitRoute::poll);
    CHECK(k.ioctls.size() == 1);
    CHECK(cldmabuf::wait_acquire_fences(old_kernel, cldmabuf::DMABUF_SYNC_READ, "acquire") == CL_SUCCESS);
    CHECK(k.ioctls.size() == 1);  // not asked again
    CHECK(k.polls == 3);
    k.on_poll = [](struct pollfd *, int) { return 0; };
    CHECK(cldmabuf::wait_acquire_fences(old_kernel, cldmabuf::DMABUF_SYNC_READ, "acquire") == CL_OUT_OF_RESOURCES);
}

TEST_CASE("acquire fences: a second import of one dma-buf waits the way the first learned, without asking again",
          "[semaphore]") {
    FakeKernel k;
    ScopedKernel scope(&k);
    // Two fds of one dma-buf: one file identity (layer/core/dmabuf_aliases.hpp).
    ForgottenImport first, second;
    for (cldmabuf::Import *i : {static_cast<cldmabuf::Import *>(&first), static_cast<cldmabuf::Import *>(&second)}) {
        i->app_fd_identity = true;
        i->app_fd_id.dev = 7;
        i->app_fd_id.ino = 4242;
    }
    second.fd = 6;
    k.ioctl_errnos = {ENOTTY};
    CHECK(cldmabuf::wait_acquire_fences(first, cldmabuf::DMABUF_SYNC_READ, "acquire") == CL_SUCCESS);
    REQUIRE(k.ioctls.size() == 1);
    CHECK(cldmabuf::fence_wait_route(second) == cldmabuf::FenceWaitRoute::poll);
    CHECK(cldmabuf::wait_acquire_fences(second, cldmabuf::DMABUF_SYNC_READ, "acquire") == CL_SUCCESS);
    CHECK(k.ioctls.size() == 1);  // the dma-buf's kernel answered once for both
}
