#include "layer/dmabuf/primitives.hpp"

#include <poll.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "layer/base/kernel_ops.hpp"
#include "layer/base/settings.hpp"

namespace cldmabuf {

std::string check_dmabuf_fd(int fd) {
    if (fd < 0) return "fd " + std::to_string(fd) + " is negative";
    struct statfs st {};
    if (kernel().fstatfs(fd, &st) != 0)
        return "fd " + std::to_string(fd) + " is not open (" + std::strerror(errno) + ")";
    if (static_cast<long>(st.f_type) != DMA_BUF_FS_MAGIC) {
        char magic[32];
        std::snprintf(magic, sizeof magic, "0x%lx", static_cast<unsigned long>(st.f_type));
        return "fd " + std::to_string(fd) + " is not a dma-buf (filesystem magic " + magic +
               ", a dma-buf has 0x444d4142)";
    }
    return {};
}

int64_t dmabuf_size(int fd) {
    off_t end = kernel().lseek(fd, 0, SEEK_END);
    if (end < 0) return -errno;
    kernel().lseek(fd, 0, SEEK_SET);  // dma-buf accepts only these two forms
    return end;
}

int dmabuf_sync(int fd, uint64_t flags) {
    struct {
        uint64_t flags;
    } arg{flags};
    return kernel_ioctl_retry(fd, DMABUF_IOCTL_SYNC, &arg) == 0 ? 0 : -errno;
}

int dmabuf_wait_idle(int fd, bool for_write, int timeout_ms) {
    short revents = 0;
    const int r = kernel_poll_bounded(fd, for_write ? POLLOUT : POLLIN, timeout_ms, &revents);
    if (r < 0) return r;
    if (r == 0) return -ETIME;
    return revents & (POLLERR | POLLNVAL) ? -EBADF : 0;
}

int fence_timeout_ms() {
    static const int value = [] {
        const char *v = setting("CLDMABUF_FENCE_TIMEOUT_MS");
        if (!v || !*v) return 1000;
        char *end = nullptr;
        long ms = std::strtol(v, &end, 10);
        return (end && *end == 0 && ms >= 0 && ms < 3600 * 1000) ? static_cast<int>(ms) : 1000;
    }();
    return value;
}

}  // namespace cldmabuf
