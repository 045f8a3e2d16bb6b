#include "layer/i915/blt_engine.hpp"

#include <linux/sync_file.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "layer/i915/batch_builder.hpp"
#include "layer/i915/execbuf.hpp"
#include "layer/i915/gem.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/settings.hpp"

namespace cldmabuf::i915 {
namespace {

bool in_bounds(uint64_t off, uint64_t len, uint64_t size) {
    return off <= size && len <= size - off;
}

}  // namespace

BltEngine *BltEngine::instance() {
    static std::once_flag once;
    static BltEngine *engine = nullptr;
    std::call_once(once, [] {
        if (const char *env = setting("CLDMABUF_BLT"); env && std::strcmp(env, "off") == 0)
            return;
        engine = create().release();  // lives for the process
    });
    return engine;
}

std::unique_ptr<BltEngine> BltEngine::create(int *err) {
    Gen9Info info;
    int r = probe_gen9(&info);
    std::unique_ptr<GemDevice> dev;
    if (r == 0) r = GemDevice::create(info, &dev);  // takes info.fd
    if (err) *err = r;
    if (r != 0) return nullptr;
    std::unique_ptr<BltEngine> e(new BltEngine());
    e->dev_ = std::move(dev);
    return e;
}

BltEngine::~BltEngine() = default;

int BltEngine::import(int dmabuf_fd, uint64_t size, BltImport *out) {
    std::lock_guard lock(mu_);
    BltImport imp;
    const int r = dev_->import_dmabuf(dmabuf_fd, size, &imp.handle, &imp.gpu_addr, &imp.size);
    if (r == 0) *out = imp;
    return r;
}

void BltEngine::release(const BltImport &imp) {
    std::lock_guard lock(mu_);
    dev_->release(imp.handle);
}

int BltEngine::create_shadow(uint64_t bytes, BltShadow *out) {
    std::lock_guard lock(mu_);
    ShadowBuffer s;
    if (int r = dev_->create_shadow(bytes, &s); r != 0) return r;
    out->obj = {s.handle, s.gpu_addr, s.size};
    out->map = s.map;
    return 0;
}

void BltEngine::release_shadow(const BltShadow &shadow) {
    std::lock_guard lock(mu_);
    dev_->destroy_shadow({shadow.obj.handle, shadow.obj.gpu_addr, shadow.obj.size, shadow.map});
}

int BltEngine::open_context(BltContext *out) {
    std::lock_guard lock(mu_);
    BltContext c;
    if (int r = dev_->create_context(&c.id, &c.cancel_support); r != 0) return r;
    *out = c;
    return 0;
}

void BltEngine::close_context(BltContext *ctx) {
    if (!ctx || ctx->id == 0) return;
    std::lock_guard lock(mu_);
    dev_->destroy_context(ctx->id);
    ctx->id = 0;
}

int BltEngine::submit_plan(const BltImport &src, const BltImport &dst, const BlitPlan &plan,
                           int *out_fence, int in_fence, const BltContext *ctx) {
    if (!out_fence) return -EINVAL;
    uint64_t src_end, dst_end;
    plan_extent(plan, &src_end, &dst_end);
    if (!plan.blits.empty() && (src_end > src.size || dst_end > dst.size)) return -EINVAL;

    std::lock_guard lock(mu_);
    thread_local std::vector<uint32_t> dwords;
    build_batch(dwords, plan, src.gpu_addr, dst.gpu_addr);
    const size_t bytes = dwords.size() * sizeof(uint32_t);
    BatchBuffer *bb = nullptr;
    if (int r = dev_->acquire_batch(bytes, &bb); r != 0) return r;
    std::memcpy(bb->map, dwords.data(), bytes);

    ExecObject objs[3];
    unsigned n = 0;
    objs[n++] = {bb->handle, bb->gpu_addr, false};
    if (src.handle == dst.handle) {
        objs[n++] = {dst.handle, dst.gpu_addr, true};
    } else {
        objs[n++] = {src.handle, src.gpu_addr, false};
        objs[n++] = {dst.handle, dst.gpu_addr, true};
    }
    const int r = exec_blt(dev_->fd(), ctx ? ctx->id : dev_->context(), objs, n, static_cast<uint32_t>(bytes),
                           out_fence, in_fence);
    dev_->retire_batch(bb, r == 0);
    if (r != 0) return r;
    ++stats_.submits;
    stats_.blits += plan.blits.size();
    stats_.bytes += plan.bytes;
    return 0;
}

int BltEngine::submit_copy_buffer(const BltImport &src, const BltImport &dst, uint64_t src_off,
                                  uint64_t dst_off, uint64_t size, int *out_fence, int in_fence,
                                  const BltContext *ctx) {
    if (!in_bounds(src_off, size, src.size) || !in_bounds(dst_off, size, dst.size)) return -EINVAL;
    if (src.handle == dst.handle && size &&
        src_off < dst_off + size && dst_off < src_off + size)
        return -EINVAL;  // overlapping: the blitter has no overlap order (layer/blit answers the spec)
    thread_local BlitPlan plan;
    BufferCopy req{src_off, dst_off, size};
    if (int r = plan_copy_buffer(req, &plan); r != 0) return r;
    return submit_plan(src, dst, plan, out_fence, in_fence, ctx);
}

int BltEngine::submit_copy_rect(const BltImport &src, const BltImport &dst, const RectCopy &rect,
                                int *out_fence, int in_fence, const BltContext *ctx) {
    thread_local BlitPlan plan;
    if (int r = plan_copy_rect(rect, &plan); r != 0) return r;
    return submit_plan(src, dst, plan, out_fence, in_fence, ctx);
}

int BltEngine::submit_copy_2d(const BltImport &src, const BltImport &dst, const ImageCopy &copy,
                              int *out_fence, int in_fence, const BltContext *ctx) {
    thread_local BlitPlan plan;
    if (int r = plan_copy_2d(copy, &plan); r != 0) return r;
    return submit_plan(src, dst, plan, out_fence, in_fence, ctx);
}

int BltEngine::wait_fence(int fence_fd, int timeout_ms) {
    if (fence_fd < 0) return -EBADF;
    short revents = 0;
    const int r = kernel_poll_bounded(fence_fd, POLLIN, timeout_ms, &revents);
    if (r <= 0) return r;  // 0: still busy at the deadline
    if (revents & POLLNVAL) return -EBADF;
    sync_file_info info;
    std::memset(&info, 0, sizeof(info));
    if (kernel_ioctl_retry(fence_fd, SYNC_IOC_FILE_INFO, &info) != 0) {
        // Not a sync_file we can query: poll said readable, call it done.
        return 1;
    }
    if (info.status < 0) return info.status;
    return info.status == 1 ? 1 : 0;
}

int BltEngine::cancel_outstanding() {
    std::lock_guard lock(mu_);  // no batch is submitted to the old context meanwhile
    return dev_->cancel_context();
}

int BltEngine::cancel_support() const {
    std::lock_guard lock(mu_);
    return dev_->cancel_support();
}

BltEngine::Stats BltEngine::stats() const {
    std::lock_guard lock(mu_);
    return stats_;
}

const Gen9Info &BltEngine::device_info() const { return dev_->info(); }

size_t BltEngine::live_imports() const {
    std::lock_guard lock(mu_);
    return dev_->imports();
}

size_t BltEngine::live_shadows() const {
    std::lock_guard lock(mu_);
    return dev_->shadows();
}

size_t BltEngine::live_contexts() const {
    std::lock_guard lock(mu_);
    return dev_->contexts();
}

size_t BltEngine::batch_buffers() const {
    std::lock_guard lock(mu_);
    return dev_->batches();
}

}  // namespace cldmabuf::i915
