// Fences of the virtual Gen9: completion through an eventfd (so a sync_file
// fd is pollable for real), merging, bounded waits.
#include <errno.h>
#include <sys/eventfd.h>

#include "vgen9_model.hpp"

namespace vgen9sim {

namespace {
std::atomic<uint64_t> g_seqno{0};
}  // namespace

Fence::Fence() {
    efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    seqno = ++g_seqno;
}

FenceP merge_fences(const std::vector<FenceP> &in) {
    std::vector<FenceP> pending;
    for (auto &f : in)
        if (f && f->get() == 0) pending.push_back(f);
    int err = 0;
    for (auto &f : in)
        if (f && f->get() < 0) err = f->get();
    if (pending.empty()) {
        auto f = std::make_shared<Fence>();
        f->signal(err ? err : 1);
        return f;
    }
    if (pending.size() == 1 && err == 0) return pending[0];
    auto out = std::make_shared<Fence>();
    struct Ctr {
        std::atomic<int> left;
        std::atomic<int> err;
    };
    auto ctr = std::make_shared<Ctr>();
    ctr->left = (int)pending.size();
    ctr->err = err;
    for (auto &p : pending) {
        std::weak_ptr<Fence> wp = p;
        p->on_signal([ctr, out, wp] {
            if (auto s = wp.lock())
                if (s->get() < 0) ctr->err = s->get();
            if (--ctr->left == 0) out->signal(ctr->err ? ctr->err.load() : 1);
        });
    }
    return out;
}

int do_wait_fences(const std::vector<FenceP> &fs, const Clock::time_point *deadline) {
    for (auto &f : fs)
        if (!f->wait_until(deadline)) return -ETIME;
    return 0;
}

}  // namespace vgen9sim
