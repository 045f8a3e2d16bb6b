#include "layer/blit/queue_context.hpp"

#include <unordered_map>

namespace cldmabuf {
namespace {

// A queue the application holds: its references (-1: a queue the layer did
// not see created, never dropped here) and its holder (null before the
// first blit).
struct Entry {
    long app_refs = -1;
    std::shared_ptr<QueueBltContext> holder;
};

std::mutex entries_mutex;
std::unordered_map<cl_command_queue, Entry> &entries() {
    static auto *map = new std::unordered_map<cl_command_queue, Entry>;  // outlives exit
    return *map;
}
}  // namespace

QueueBltContext::~QueueBltContext() {
    engine_->close_context(&ctx_);
}

int QueueBltContext::get(i915::BltContext *out) {
    std::lock_guard l(m_);
    if (ctx_.id == 0)
        if (int r = engine_->open_context(&ctx_); r != 0) return r;
    *out = ctx_;
    return 0;
}

int QueueBltContext::cancel() {
    std::lock_guard l(m_);
    if (ctx_.id == 0) return 0;  // nothing was submitted since the last cancel
    if (ctx_.cancel_support != 0) return ctx_.cancel_support;
    engine_->close_context(&ctx_);
    return 0;
}

std::shared_ptr<QueueBltContext> queue_blt_context(cl_command_queue queue) {
    i915::BltEngine *engine = i915::BltEngine::instance();
    if (!engine) return nullptr;
    std::lock_guard l(entries_mutex);
    auto &held = entries()[queue].holder;
    if (!held) held = std::make_shared<QueueBltContext>(engine);
    return held;
}

void note_queue_created(cl_command_queue queue) {
    std::shared_ptr<QueueBltContext> gone;  // destroyed outside the lock (an ioctl)
    std::lock_guard l(entries_mutex);
    Entry &e = entries()[queue];
    gone = std::move(e.holder);
    e = Entry{1, nullptr};
}

void note_queue_retained(cl_command_queue queue) {
    std::lock_guard l(entries_mutex);
    auto it = entries().find(queue);
    if (it != entries().end() && it->second.app_refs > 0) ++it->second.app_refs;
}

void note_queue_released(cl_command_queue queue) {
    std::shared_ptr<QueueBltContext> gone;  // destroyed outside the lock (an ioctl)
    {
        std::lock_guard l(entries_mutex);
        auto it = entries().find(queue);
        if (it == entries().end() || it->second.app_refs <= 0 || --it->second.app_refs > 0) return;
        gone = std::move(it->second.holder);
        entries().erase(it);
    }
}

}  // namespace cldmabuf
