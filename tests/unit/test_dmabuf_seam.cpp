// The dma-buf primitives through the kernel seam.
#include <catch2/catch_test_macros.hpp>

#include <poll.h>

#include "fake_kernel.hpp"
#include "layer/dmabuf/primitives.hpp"

using namespace cldmabuf;

TEST_CASE("a dma-buf is told apart by its filesystem magic") {
    unit::FakeKernel k;
    unit::ScopedKernel scope(&k);
    k.fs_magic[5] = DMA_BUF_FS_MAGIC;
    k.fs_magic[6] = 0x01021994;  // tmpfs (memfd)
    CHECK(check_dmabuf_fd(5).empty());
    CHECK(check_dmabuf_fd(6).find("not a dma-buf (filesystem magic 0x1021994") != std::string::npos);
    CHECK(check_dmabuf_fd(7).find("not open") != std::string::npos);
    CHECK(check_dmabuf_fd(-3).find("negative") != std::string::npos);
}

TEST_CASE("the size comes from lseek SEEK_END") {
    unit::FakeKernel k;
    unit::ScopedKernel scope(&k);
    k.sizes[5] = 1 << 20;
    CHECK(dmabuf_size(5) == (1 << 20));
    CHECK(dmabuf_size(9) == -ESPIPE);
}

TEST_CASE("DMA_BUF_IOCTL_SYNC is retried on EINTR/EAGAIN and reports other errors") {
    unit::FakeKernel k;
    unit::ScopedKernel scope(&k);
    k.ioctl_errnos = {EINTR, EAGAIN, 0};
    CHECK(dmabuf_sync(5, DMABUF_SYNC_START | DMABUF_SYNC_READ) == 0);
    REQUIRE(k.ioctls.size() == 3);
    CHECK(k.ioctls[2].first == DMABUF_IOCTL_SYNC);
    CHECK(k.ioctls[2].second == (DMABUF_SYNC_START | DMABUF_SYNC_READ));
    k.ioctl_errnos = {EINVAL};
    CHECK(dmabuf_sync(5, 0) == -EINVAL);
}

TEST_CASE("fence waits: the direction picks the poll event, a timeout is -ETIME, EINTR is retried") {
    unit::FakeKernel k;
    unit::ScopedKernel scope(&k);
    short seen = 0;
    k.on_poll = [&](struct pollfd *p, int) { seen = p->events; p->revents = p->events; return 1; };
    CHECK(dmabuf_wait_idle(5, false, 100) == 0);
    CHECK(seen == POLLIN);  // CPU reads wait for the writer only
    CHECK(dmabuf_wait_idle(5, true, 100) == 0);
    CHECK(seen == POLLOUT);  // CPU writes wait for every fence
    int calls = 0;
    k.on_poll = [&](struct pollfd *, int) { ++calls; if (calls == 1) { errno = EINTR; return -1; } return 0; };
    CHECK(dmabuf_wait_idle(5, false, 20) == -ETIME);
    CHECK(calls == 2);
    k.on_poll = [](struct pollfd *p, int) { p->revents = POLLNVAL; return 1; };
    CHECK(dmabuf_wait_idle(5, false, 20) == -EBADF);
}
