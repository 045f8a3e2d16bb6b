// A dma-buf's identity, from one fstat(2): its inode (st_dev, st_ino) names
// the buffer whatever fd refers to it and is not handed to another file
// while any fd of it is open; st_size is the buffer's size (a dma-buf's
// inode carries it since Linux 5.3; 0 before, when every dma-buf shared one
// anonymous inode).  Once the buffer is gone its number may name another:
// from 5.3 until "dma-buf: ensure unique directory name for dmabuf stats"
// (5.18) the number came from get_next_ino(), a 32-bit counter shared with
// pipes, sockets and every other pseudo-file, which a busy machine wraps in
// hours; since then a 64-bit counter of its own.  st_ctim, set when the
// inode is made and never changed for a dma-buf, tells a recycled number
// apart: a cache that outlives the buffer keys by it too.
//
// An import asks once, on its own duplicate of the fd (adopt_dmabuf_fd,
// layer/core/import_fds.hpp), and hands the answer to the exporter lookup
// and the mapping cache, which are keyed by it: fstat of a dma-buf costs
// 0.7-1 us on the host's kernel, and a video pipeline imports every frame.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include "layer/base/kernel_ops.hpp"

namespace cldmabuf {

struct DmabufIdentity {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    long long born_ns = 0;  // st_ctim
};

// fstat of `fd` through the kernel seam: true with *out filled, else false
// (errno set; a fake seam that does not answer fstat).
inline bool dmabuf_identity(int fd, DmabufIdentity *out) {
    struct stat st {};
    if (kernel().fstat(fd, &st) != 0) return false;
    *out = DmabufIdentity{st.st_dev, st.st_ino, st.st_size,
                          static_cast<long long>(st.st_ctim.tv_sec) * 1000000000LL + st.st_ctim.tv_nsec};
    return true;
}

}  // namespace cldmabuf
