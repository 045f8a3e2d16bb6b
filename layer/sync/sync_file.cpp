#include "layer/sync/sync_file.hpp"

#include <linux/sync_file.h>
#include <poll.h>

#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/base/cl_compat.h"

namespace cldmabuf::sync {

bool is_sync_file(int fd) {
    if (fd < 0) return false;
    sync_file_info info{};
    return kernel_ioctl_retry(fd, SYNC_IOC_FILE_INFO, &info) == 0;
}

int wait_sync_file(int fd, int timeout_ms) {
    short revents = 0;
    int r = kernel_poll_bounded(fd, POLLIN, timeout_ms, &revents);
    if (r == 0) {
        LOG_ERROR("semaphore wait: sync_file fd %d did not signal within %d ms", fd, timeout_ms);
        return CL_OUT_OF_RESOURCES;
    }
    if (r < 0 || (revents & (POLLERR | POLLNVAL))) {
        LOG_ERROR("semaphore wait: poll on sync_file fd %d failed (%d)", fd, r);
        return CL_OUT_OF_RESOURCES;
    }
    sync_file_info info{};
    if (kernel_ioctl_retry(fd, SYNC_IOC_FILE_INFO, &info) == 0 && info.status < 0) {
        LOG_ERROR("semaphore wait: sync_file fd %d signalled with error %d", fd, info.status);
        return CL_OUT_OF_RESOURCES;
    }
    return CL_SUCCESS;
}

}  // namespace cldmabuf::sync
