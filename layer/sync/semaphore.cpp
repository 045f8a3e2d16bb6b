#include "layer/sync/semaphore.hpp"

#include <linux/sync_file.h>
#include <poll.h>

#include <chrono>
#include <unordered_set>

#include "layer/core/dispatch.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/cl_compat.h"
#include "layer/base/log.hpp"

namespace cldmabuf::sync {
namespace {

std::mutex g_live_mutex;
std::unordered_set<cl_semaphore_khr> &live() {
    static auto *set = new std::unordered_set<cl_semaphore_khr>;  // outlives static destructors
    return *set;
}

}  // namespace

std::shared_ptr<Payload> Payload::imported(int sync_fd) {
    std::shared_ptr<Payload> p(new Payload);
    p->fd_.reset(sync_fd);
    p->imported_ = true;
    return p;
}

std::shared_ptr<Payload> Payload::layer_signal(LayerFence fence) {
    std::shared_ptr<Payload> p(new Payload);
    p->fd_ = std::move(fence.fence);
    p->fence_ = std::move(fence);
    return p;
}

void Payload::signal(cl_int status) {
    LayerFence fence;
    {
        std::lock_guard<std::mutex> l(m_);
        fixed_ = true;
        fence = std::move(fence_);  // none after a batch fence was adopted: the GPU signals that one
    }
    if (fence.timeline) {
        if (int err = signal_layer_fence(&fence); err < 0)
            LOG_ERROR("semaphore signal: signalling the layer fence failed (errno %d)", -err);
    }
    {
        std::lock_guard<std::mutex> l(m_);
        state_ = status < 0 ? status : 1;
    }
    cv_.notify_all();
}

int Payload::sync_fd() const {
    std::lock_guard<std::mutex> l(m_);
    return fd_.get();
}

int Payload::export_sync_fd() {
    std::lock_guard<std::mutex> l(m_);
    fixed_ = true;
    return fd_ ? kernel().dup(fd_.get()) : -1;
}

int Payload::gpu_fence_fd() const {
    std::lock_guard<std::mutex> l(m_);
    return imported_ || batch_ ? fd_.get() : -1;
}

bool Payload::adopt_batch_fence(int fd) {
    OwnedFd adopted(fd);
    // Closed after the lock, the timeline first (declared last).
    OwnedFd dropped_fd;
    LayerFence dropped;
    {
        std::lock_guard<std::mutex> l(m_);
        if (fixed_ || imported_ || batch_) return false;  // `adopted` closes
        // Never handed out, so nobody waits on the layer's own fence.
        dropped = std::move(fence_);
        fence_ = LayerFence{};
        dropped_fd = std::move(fd_);
        fd_ = std::move(adopted);
        batch_ = true;
    }
    return true;
}

bool Payload::signalled() const {
    std::lock_guard<std::mutex> l(m_);
    if (imported_) return false;
    return state_ != 0;
}

cl_int Payload::wait(int timeout_ms) {
    if (imported_) return wait_sync_file(fd_.get(), timeout_ms);
    std::unique_lock<std::mutex> l(m_);
    if (!cv_.wait_for(l, std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms), [&] { return state_ != 0; })) {
        LOG_ERROR("semaphore wait: its signal did not run within %d ms", timeout_ms);
        return CL_OUT_OF_RESOURCES;
    }
    return state_ < 0 ? state_ : CL_SUCCESS;
}

std::mutex &semaphore_mutex() {
    static auto *m = new std::mutex;
    return *m;
}

cl_semaphore_khr register_semaphore(std::unique_ptr<_cl_semaphore_khr> s) {
    std::lock_guard<std::mutex> l(g_live_mutex);
    live().insert(s.get());
    return s.release();  // the live set's (see release_semaphore_ref)
}

bool is_layer_semaphore(cl_semaphore_khr s) {
    if (!s) return false;
    std::lock_guard<std::mutex> l(g_live_mutex);
    return live().count(s) != 0;
}

bool release_semaphore_ref(cl_semaphore_khr s) {
    std::unique_ptr<_cl_semaphore_khr> last;  // adopted back from the live set on the last reference
    {
        std::lock_guard<std::mutex> l(g_live_mutex);
        if (!s || !live().count(s)) return false;
        if (s->refs.fetch_sub(1) != 1) return true;
        live().erase(s);
        last.reset(s);
    }
    {
        std::lock_guard<std::mutex> l(semaphore_mutex());
        s->pending.reset();
    }
    return true;
}

size_t live_semaphores() {
    std::lock_guard<std::mutex> l(g_live_mutex);
    return live().size();
}

// ---- sync_file payloads

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
