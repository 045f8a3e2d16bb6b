#include "layer/import/zero_copy_check.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "layer/core/dispatch.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/dmabuf/exporter.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/base/owned_mapping.hpp"
#include "layer/base/settings.hpp"

namespace cldmabuf {
namespace {

enum class Mode { on, off, fail };

// fail: CLDMABUF_DEBUG=zero-copy-fail, a test's instrument, over the user's
// on or off.  A refused CLDMABUF_ZERO_COPY_CHECK was logged by the settings
// loader: on.
Mode mode() {
    static const Mode m = [] {
        if (debug_on(DebugWord::zero_copy_fail)) return Mode::fail;
        const char *v = setting("CLDMABUF_ZERO_COPY_CHECK");
        return v && !std::strcmp(v, "off") ? Mode::off : Mode::on;
    }();
    return m;
}

constexpr size_t kProbeBytes = 64;  // clEnqueueFillBuffer's largest pattern is 128 bytes

ZeroCopyVerdict run_check(cl_context context, cl_device_id device, int fd) {
    // Only on an idle dma-buf.  With a producer's fence pending, the probe's
    // DMA_BUF_IOCTL_SYNC would wait for it without the layer's bound (vgem:
    // 10 s, then the fence expires) and the ICD's fill would race the
    // producer's writes.  Not checked now is not cached: the next import of
    // this exporter kind tries again, and until then the device's claim stands.
    if (dmabuf_wait_idle(fd, /*for_write=*/true, 0) != 0) return ZeroCopyVerdict::unknown;
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const OwnedMapping map(kernel().mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), page);
    if (!map) return ZeroCopyVerdict::unknown;  // e.g. a read-only fd
    auto *bytes = static_cast<unsigned char *>(map.get());
    unsigned char saved[kProbeBytes], pattern[kProbeBytes];
    dmabuf_sync(fd, DMABUF_SYNC_READ | DMABUF_SYNC_START);
    std::memcpy(saved, bytes, kProbeBytes);
    dmabuf_sync(fd, DMABUF_SYNC_READ | DMABUF_SYNC_END);
    for (size_t i = 0; i < kProbeBytes; ++i) pattern[i] = static_cast<unsigned char>(~saved[i]);

    ZeroCopyVerdict verdict = ZeroCopyVerdict::unknown;
    cl_int err = CL_SUCCESS;
    IcdMem buffer(
        next().clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, kProbeBytes, map.get(), &err));
    IcdQueue queue(buffer ? next().clCreateCommandQueueWithProperties(context, device, nullptr, &err) : nullptr);
    if (queue &&
        next().clEnqueueFillBuffer(queue.get(), buffer.get(), pattern, kProbeBytes, 0, kProbeBytes, 0, nullptr,
                                   nullptr) == CL_SUCCESS &&
        next().clFinish(queue.get()) == CL_SUCCESS) {
        dmabuf_sync(fd, DMABUF_SYNC_READ | DMABUF_SYNC_START);
        verdict = std::memcmp(bytes, pattern, kProbeBytes) == 0 ? ZeroCopyVerdict::in_place : ZeroCopyVerdict::copies;
        dmabuf_sync(fd, DMABUF_SYNC_READ | DMABUF_SYNC_END);
    }
    queue.reset();
    buffer.reset();  // before the page below goes back to the application's bytes
    // Nothing was enqueued that is still pending (clFinish above, or nothing
    // enqueued at all): the ICD is done with the page.  Restore the bytes
    // whatever happened, a copying ICD may write its copy back on release.
    dmabuf_sync(fd, DMABUF_SYNC_WRITE | DMABUF_SYNC_START);
    if (std::memcmp(bytes, saved, kProbeBytes) != 0) std::memcpy(bytes, saved, kProbeBytes);
    dmabuf_sync(fd, DMABUF_SYNC_WRITE | DMABUF_SYNC_END);
    if (verdict == ZeroCopyVerdict::unknown)
        LOG_WARN("zero-copy check on device %p: the ICD refused the probe (error %d)", static_cast<void *>(device), err);
    return verdict;
}

}  // namespace

ZeroCopyVerdict check_buffer_zero_copy(cl_context context, cl_device_id device, ExporterKind exporter, int fd) {
    if (mode() == Mode::off) return ZeroCopyVerdict::in_place;
    if (auto recorded = recorded_zero_copy(device, exporter)) return *recorded;
    ZeroCopyVerdict verdict = run_check(context, device, fd);
    if (mode() == Mode::fail && verdict != ZeroCopyVerdict::unknown) verdict = ZeroCopyVerdict::copies;
    if (verdict == ZeroCopyVerdict::unknown) return verdict;  // not cached: a later import may be checkable
    LOG_INFO("zero-copy check on device %p for %s dma-bufs: %s", static_cast<void *>(device),
             exporter_kind_name(exporter),
             verdict == ZeroCopyVerdict::in_place ? "the ICD uses the mapping in place"
                                                  : "the ICD keeps its own copy: imports are device copies");
    record_zero_copy(device, exporter, verdict, mode() == Mode::fail ? FactSource::setting : FactSource::probe);
    return verdict;
}

}  // namespace cldmabuf
