// sw_sync timelines of the virtual Gen9 (the model: Timeline in
// vgen9_model.hpp).  The kernel's behaviour, errno for errno where the sim
// can fail: CREATE_FENCE makes a sync_file fd for a point (already signalled
// when the timeline passed it), INC advances the value and signals every
// point it reached.  VGEN9_SW_SYNC=0 takes the file away (ENOENT), as on a
// kernel without CONFIG_SW_SYNC.
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vgen9_internal.hpp"
#include "vgen9_ioctl_table.hpp"
#include "vgen9_sw_sync_uapi.h"

namespace vgen9sim {

int sw_sync_open(int flags, int *out) {
    const char *env = getenv("VGEN9_SW_SYNC");
    if (env && !strcmp(env, "0")) {
        errno = ENOENT;
        *out = -1;
        return 1;
    }
    struct stat st;
    if (real().stat(kSwSyncPath, &st) == 0) return 0;  // a real sw_sync this process can see
    State &s = S();
    int fd = memfd_create("vgen9-sw-sync", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
    if (fd < 0) {
        *out = -1;
        return 1;
    }
    std::lock_guard<std::mutex> l(s.mu);
    s.sw_sync_fds[fd] = std::make_shared<Timeline>();
    log_event("open %s -> fd %d", kSwSyncPath, fd);
    *out = fd;
    return 1;
}

int ioctl_sw_sync_create_fence(IoctlCall &c) {
    auto *d = static_cast<vgen9_sw_sync_create_fence_data *>(c.arg);
    auto f = std::make_shared<Fence>();
    if ((int32_t)(d->value - c.timeline->value) <= 0)
        f->signal(1);  // sync_pt_create on a point the timeline passed
    else
        c.timeline->pts.emplace_back(d->value, f);
    int fd = -1;
    new_fence_fd(c.s, f, &fd);
    if (fd < 0) return -EMFILE;
    d->fence = fd;
    return 0;
}

int ioctl_sw_sync_inc(IoctlCall &c) {
    const uint32_t inc = *static_cast<const __u32 *>(c.arg);
    Timeline &t = *c.timeline;
    t.value += inc;
    std::vector<FenceP> reached;
    for (auto it = t.pts.begin(); it != t.pts.end();) {
        if ((int32_t)(it->first - t.value) <= 0) {
            reached.push_back(it->second);
            it = t.pts.erase(it);
        } else {
            ++it;
        }
    }
    c.l.unlock();  // fence callbacks may take the lock
    for (auto &f : reached) f->signal(1);
    c.l.lock();
    return 0;
}

}  // namespace vgen9sim
