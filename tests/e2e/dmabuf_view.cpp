// See dmabuf_view.hpp.
#include "dmabuf_view.hpp"

#include <catch2/catch_test_macros.hpp>

#include <linux/ioctl.h>  // _IOWR behind the DMA_BUF_IOCTL_* numbers (issue #29)
#include <linux/dma-buf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <random>

namespace e2e {

namespace tsup = cldmabuf::test;

DmabufView::DmabufView(int own_fd, size_t sz) : fd(own_fd), size(sz) {
    bytes = static_cast<unsigned char *>(mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    REQUIRE(bytes != MAP_FAILED);
    words = reinterpret_cast<uint32_t *>(bytes);
}

DmabufView::DmabufView(const Dmabuf &buf) : DmabufView(buf.dup_fd(), buf.size) {}

DmabufView::~DmabufView() {
    munmap(bytes, size);
    close(fd);
}

void DmabufView::begin(bool write) {
    tsup::sync(fd, (write ? DMA_BUF_SYNC_WRITE : DMA_BUF_SYNC_READ) | DMA_BUF_SYNC_START);
}

void DmabufView::end(bool write) {
    tsup::sync(fd, (write ? DMA_BUF_SYNC_WRITE : DMA_BUF_SYNC_READ) | DMA_BUF_SYNC_END);
}

void DmabufView::fill_words(uint32_t base, size_t count) {
    count = std::min(count, size / 4);
    begin(true);
    for (size_t i = 0; i < count; ++i) words[i] = base + static_cast<uint32_t>(i);
    end(true);
}

bool DmabufView::has_words(uint32_t base, size_t count) {
    count = std::min(count, size / 4);
    begin(false);
    bool ok = true;
    for (size_t i = 0; i < count && ok; ++i) ok = words[i] == base + static_cast<uint32_t>(i);
    end(false);
    return ok;
}

std::vector<unsigned char> DmabufView::snapshot() {
    begin(false);
    std::vector<unsigned char> v(bytes, bytes + size);
    end(false);
    return v;
}

void DmabufView::fill_random(uint32_t seed) {
    std::mt19937 rng(seed);
    begin(true);
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<unsigned char>(rng());
    end(true);
}

}  // namespace e2e
