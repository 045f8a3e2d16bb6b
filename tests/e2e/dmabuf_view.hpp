// The test's own CPU view of a dma-buf: its own fd (closed with the view, so
// the view keeps the dma-buf alive whatever the layer does with the
// application's number), one shared read-write mapping, and every access
// bracketed by DMA_BUF_IOCTL_SYNC as a well-behaved CPU user must.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "test_dmabufs.hpp"

namespace e2e {

struct DmabufView {
    int fd;
    size_t size;
    unsigned char *bytes;
    uint32_t *words;  // the same mapping, as 32-bit words

    DmabufView(int own_fd, size_t size);  // takes own_fd
    explicit DmabufView(const Dmabuf &buf);  // a dup of buf.fd, all of buf.size
    ~DmabufView();
    DmabufView(const DmabufView &) = delete;
    DmabufView &operator=(const DmabufView &) = delete;

    // DMA_BUF_IOCTL_SYNC START / END for a read or a write.
    void begin(bool write);
    void end(bool write);

    static constexpr size_t kAll = SIZE_MAX;  // every word of the view
    // words[i] = base + i for the first `count` words.
    void fill_words(uint32_t base, size_t count = kAll);
    bool has_words(uint32_t base, size_t count = kAll);
    std::vector<unsigned char> snapshot();
    void fill_random(uint32_t seed);  // std::mt19937(seed), one byte per draw
};

}  // namespace e2e
