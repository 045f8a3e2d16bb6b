// One layer-owned thread for host-side work that must run in queue order:
// fence waits, DMA_BUF_IOCTL_SYNC, BLT fence waits.  Jobs only ever block on
// kernel fences with a bounded timeout, never on OpenCL events, so a single
// FIFO thread cannot deadlock against the ICD.
#pragma once

#include <functional>

namespace cldmabuf {

void post_to_worker(std::function<void()> job);
// Finish queued jobs and stop the thread (clDeinitLayer / exit).
void shutdown_worker();

}  // namespace cldmabuf
