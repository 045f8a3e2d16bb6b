// sync_file fds (Linux drivers/dma-buf/sync_file.c) through the kernel seam.
#pragma once

namespace cldmabuf::sync {

// SYNC_IOC_FILE_INFO answers on it: the fd is a sync_file.
bool is_sync_file(int fd);
// Bounded wait for POLLIN on a sync_file, then its status: CL_SUCCESS when it
// signalled without error, CL_OUT_OF_RESOURCES on timeout or a fence error
// (one log line each).
int wait_sync_file(int fd, int timeout_ms);

}  // namespace cldmabuf::sync
