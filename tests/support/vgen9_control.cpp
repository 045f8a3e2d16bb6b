// dlsym look-up of the virtual Gen9's control API (see vgen9_control.hpp).
#include "vgen9_control.hpp"

#include <dlfcn.h>
#include <unistd.h>

namespace cldmabuf::test {

namespace {
template <typename Fn>
void find(Fn *&fn, const char *name) {
    fn = reinterpret_cast<Fn *>(dlsym(RTLD_DEFAULT, name));
}
}  // namespace

Vgen9Control::Vgen9Control() {
    find(node_path, "vgen9_node_path");
    find(fail_ioctl, "vgen9_fail_ioctl");
    find(hang_next, "vgen9_hang_next");
    find(never_signal_next, "vgen9_never_signal_next");
    find(set_delay_ms, "vgen9_set_delay_ms");
    find(set_manual, "vgen9_set_manual");
    find(tick, "vgen9_tick");
    find(drain, "vgen9_drain");
    find(reset, "vgen9_reset");
    find(stats, "vgen9_stats");
    find(set_export_name, "vgen9_set_export_name");
    find(set_log, "vgen9_set_log");
    find(dmabuf_syncs, "vgen9_dmabuf_syncs");
    find(live_contexts, "vgen9_live_contexts");
    find(fence_waiters, "vgen9_fence_waiters");
    find(ready_batches, "vgen9_ready_batches");
    loaded = node_path && fail_ioctl && hang_next && never_signal_next && set_delay_ms && set_manual && tick &&
             drain && reset && stats && set_export_name && set_log && dmabuf_syncs &&
             live_contexts;
}

struct vgen9_stats Vgen9Control::now() const {
    struct vgen9_stats s {};
    if (stats) stats(&s);
    return s;
}

bool Vgen9Control::wait_for_submission(uint64_t since, int timeout_ms) const {
    for (int i = 0; i < timeout_ms * 10 && submitted() == since; ++i) usleep(100);
    return submitted() != since;
}

const Vgen9Control &vgen9() {
    static const Vgen9Control control;
    return control;
}

}  // namespace cldmabuf::test
