// recvmsg(): a dma-buf (or sync_file, or the render node) another process --
// or another thread over a socketpair -- sends with SCM_RIGHTS arrives as a
// new fd of the same open file.  The kernel hands over the same dma-buf; the
// virtual Gen9 tracks its files by fd number, so each received fd is matched
// to a tracked one by inode (the sim's files are memfds) and tracked as its
// dup.  Without this an fd passed the way compositors and camera services
// pass them would not be a dma-buf here, where on a real kernel it is.
#include <dlfcn.h>
#include <sys/socket.h>

#include <cstring>

#include "vgen9_internal.hpp"

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT ssize_t recvmsg(int sock, struct msghdr *msg, int flags) {
    static auto next = reinterpret_cast<ssize_t (*)(int, struct msghdr *, int)>(dlsym(RTLD_NEXT, "recvmsg"));
    const ssize_t r = next(sock, msg, flags);
    if (r < 0 || !msg || !msg->msg_control) return r;
    for (cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        const size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < n; ++i) {
            int fd = -1;
            std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (fd >= 0) vgen9sim::on_received(fd);
        }
    }
    return r;
}
