#include "layer/i915/blt_copy.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <sys/stat.h>

#include "layer/dispatch.hpp"
#include "layer/ext/exporter.hpp"
#include "layer/ext/import.hpp"
#include "layer/kernel_ops.hpp"
#include "layer/log.hpp"

namespace cldmabuf::i915 {

BltBackend::~BltBackend() {
    if (engine && error == 0) engine->release(imp);
}

dev_t node_rdev(const Gen9Info &node) {
    struct stat st {};
    return kernel().stat(node.path.c_str(), &st) == 0 ? st.st_rdev : 0;
}

std::string exporter_mismatch(const Import &import, const Gen9Info &node, dev_t rdev) {
    const std::string blitter = "the blitter's GPU is " + node.path + (node.has_pci ? " at " + pci_text(node.pci) : "");
    const std::string buffer = "dma-buf fd " + std::to_string(import.app_fd) + " is exported by ";
    if (import.exporter != ExporterKind::i915) {
        std::string what = exporter_kind_name(import.exporter);
        if (import.exporter == ExporterKind::other) what += " \"" + import.exporter_name + "\"";
        return buffer + what + ", " + blitter;
    }
    if (import.exporter_rdev == 0 || rdev == 0)
        return buffer + "an i915 device that cannot be named (not exactly one i915 node), " + blitter;
    if (import.exporter_rdev != rdev) return buffer + "i915 at " + import.exporter_node + ", " + blitter;
    return {};
}

bool blt_any_exporter() {
    static const bool any = [] {
        const char *v = std::getenv("CLDMABUF_BLT_EXPORTERS");
        if (!v || !*v || !std::strcmp(v, "own")) return false;
        if (!std::strcmp(v, "any")) return true;
        LOG_WARN("CLDMABUF_BLT_EXPORTERS=%s is not own or any: own", v);
        return false;
    }();
    return any;
}

int blt_import_of(Import &import, BltEngine &engine, BltImport *out) {
    std::lock_guard lock(import.backend_mutex);
    auto *state = dynamic_cast<BltBackend *>(import.backend.get());
    if (!state) {
        if (import.backend) return -EBUSY;  // another backend owns the slot
        auto fresh = std::make_unique<BltBackend>();
        fresh->engine = &engine;
        const Gen9Info &node = engine.device_info();
        std::string why = blt_any_exporter() ? std::string() : exporter_mismatch(import, node, node_rdev(node));
        if (!why.empty()) {
            // i915 would import another device's (or a heap's) dma-buf too,
            // but that memory is not this GPU's to copy: the ICD does it.
            fresh->error = -EXDEV;
            // An import still being made (a tiled image) reports the refusal itself.
            if (import.mem)
                LOG_WARN("blitter: copies of %p go to the ICD: %s", static_cast<void *>(import.mem), why.c_str());
        } else {
            fresh->error = engine.import(import.fd, 0, &fresh->imp);
            if (fresh->error != 0)
                LOG_WARN("blitter: PRIME import of dma-buf fd %d failed (%d); copies of %p go to the ICD",
                         import.fd, fresh->error, static_cast<void *>(import.mem));
        }
        state = fresh.get();
        import.backend = std::move(fresh);
    }
    if (state->error != 0) return state->error;
    *out = state->imp;
    return 0;
}

std::string device_mismatch(const DeviceFacts &facts, const Gen9Info &node) {
    if (facts.type & CL_DEVICE_TYPE_CPU) return {};  // same host pages as the dma-buf
    if (!(facts.type & CL_DEVICE_TYPE_GPU)) return "device is not a CPU or a GPU";
    const std::string node_name = node.path + (node.has_pci ? " at " + pci_text(node.pci) : "");
    if (facts.has_pci) {
        if (!node.has_pci)
            return "GPU device at " + pci_text(facts.pci) + " cannot be matched with Gen9 node " + node.path +
                   " (its PCI address is unknown)";
        if (!(facts.pci == node.pci))
            return "GPU device at " + pci_text(facts.pci) + " is not the Gen9 node " + node_name;
        return {};
    }
    // No cl_khr_pci_bus_info: the vendor is all there is to compare.
    if (facts.vendor_id != node.vendor_id) {
        char vendor[16];
        std::snprintf(vendor, sizeof vendor, "0x%04x", facts.vendor_id);
        return std::string("GPU device of vendor ") + vendor + " (no cl_khr_pci_bus_info) is not the Gen9 node " +
               node_name;
    }
    return {};
}

namespace {

DeviceFacts facts_of(cl_device_id device, bool *ok) {
    DeviceFacts f;
    *ok = next().clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof f.type, &f.type, nullptr) == CL_SUCCESS &&
          next().clGetDeviceInfo(device, CL_DEVICE_VENDOR_ID, sizeof f.vendor_id, &f.vendor_id, nullptr) ==
              CL_SUCCESS;
    // A CPU device matches whatever its bus; only GPUs are asked.
    if (*ok && (f.type & CL_DEVICE_TYPE_GPU)) f.has_pci = cl_device_pci_address(device, &f.pci);
    return f;
}

}  // namespace

// A sub-device answers as its root device (root_device_of): the same PCI
// function.  Root devices live as long as their platform, so their handles are
// a key that no other device can take over; a released sub-device's address can.
const char *blt_device_mismatch(cl_device_id queue_device) {
    static std::mutex mu;
    // A deque keeps each reason at its address while more devices are added.
    static std::deque<std::pair<cl_device_id, std::string>> cache;
    const cl_device_id device = root_device_of(queue_device);
    {
        std::lock_guard lock(mu);
        for (const auto &[d, why] : cache)
            if (d == device) return why.empty() ? nullptr : why.c_str();
    }
    std::string why;
    bool ok = false;
    const DeviceFacts facts = facts_of(device, &ok);
    BltEngine *engine = BltEngine::instance();
    if (!ok) why = "device query failed";
    else if (!engine) why = "no Gen9 blitter";
    else why = device_mismatch(facts, engine->device_info());
    if (!why.empty()) LOG_WARN("blitter: copies on device %p go to the ICD: %s", static_cast<void *>(device), why.c_str());
    std::lock_guard lock(mu);
    cache.emplace_back(device, std::move(why));
    return cache.back().second.empty() ? nullptr : cache.back().second.c_str();
}

// ---- argument checks ---------------------------------------------------------

namespace {

bool in_bounds(uint64_t off, uint64_t len, uint64_t size) { return off <= size && len <= size - off; }

bool mul_add(uint64_t a, uint64_t b, uint64_t c, uint64_t *out) {
    uint64_t m;
    if (__builtin_mul_overflow(a, b, &m)) return false;
    return !__builtin_add_overflow(m, c, out);
}

// Byte offset of origin and one past the last byte of a rect side, or false on overflow.
bool rect_span(const uint64_t origin[3], const uint64_t region[3], uint64_t rp, uint64_t sp, uint64_t *first,
               uint64_t *end) {
    uint64_t off = origin[0], t;
    if (!mul_add(origin[1], rp, off, &t)) return false;
    if (!mul_add(origin[2], sp, t, &off)) return false;
    uint64_t last;
    if (!mul_add(region[2] - 1, sp, off, &t)) return false;
    if (!mul_add(region[1] - 1, rp, t, &last)) return false;
    if (__builtin_add_overflow(last, region[0], &last)) return false;
    *first = off;
    *end = last;
    return true;
}

}  // namespace

cl_int check_copy_buffer(const CopySide &src, const CopySide &dst, bool same_storage, uint64_t src_offset,
                         uint64_t dst_offset, uint64_t size) {
    if (!in_bounds(src_offset, size, src.size) || !in_bounds(dst_offset, size, dst.size)) return CL_INVALID_VALUE;
    if (same_storage && size) {
        const uint64_t s = src.base + src_offset, d = dst.base + dst_offset;
        if (s < d + size && d < s + size) return CL_MEM_COPY_OVERLAP;
    }
    return CL_SUCCESS;
}

cl_int normalize_rect(const size_t *src_origin, const size_t *dst_origin, const size_t *region,
                      size_t src_row_pitch, size_t src_slice_pitch, size_t dst_row_pitch,
                      size_t dst_slice_pitch, const CopySide &src, const CopySide &dst, RectArgs *out) {
    if (!src_origin || !dst_origin || !region) return CL_INVALID_VALUE;
    RectArgs r;
    for (int i = 0; i < 3; ++i) {
        r.src_origin[i] = src_origin[i];
        r.dst_origin[i] = dst_origin[i];
        r.region[i] = region[i];
        if (region[i] == 0) return CL_INVALID_VALUE;
    }
    auto pitches = [&](size_t row, size_t slice, uint64_t *rp, uint64_t *sp) {
        if (row != 0 && row < region[0]) return false;
        *rp = row ? row : region[0];
        uint64_t min_slice;
        if (__builtin_mul_overflow(uint64_t(region[1]), *rp, &min_slice)) return false;
        if (slice != 0 && (slice < min_slice || slice % *rp != 0)) return false;
        *sp = slice ? slice : min_slice;
        return true;
    };
    if (!pitches(src_row_pitch, src_slice_pitch, &r.src_row_pitch, &r.src_slice_pitch) ||
        !pitches(dst_row_pitch, dst_slice_pitch, &r.dst_row_pitch, &r.dst_slice_pitch))
        return CL_INVALID_VALUE;
    uint64_t first, end;
    if (!rect_span(r.src_origin, r.region, r.src_row_pitch, r.src_slice_pitch, &first, &end) || end > src.size)
        return CL_INVALID_VALUE;
    if (!rect_span(r.dst_origin, r.region, r.dst_row_pitch, r.dst_slice_pitch, &first, &end) || end > dst.size)
        return CL_INVALID_VALUE;
    *out = r;
    return CL_SUCCESS;
}

bool rects_overlap(const RectArgs &r, const CopySide &src, const CopySide &dst) {
    uint64_t s_first, s_end, d_first, d_end;
    rect_span(r.src_origin, r.region, r.src_row_pitch, r.src_slice_pitch, &s_first, &s_end);
    rect_span(r.dst_origin, r.region, r.dst_row_pitch, r.dst_slice_pitch, &d_first, &d_end);
    s_first += src.base, s_end += src.base, d_first += dst.base, d_end += dst.base;
    if (!(s_first < d_end && d_first < s_end)) return false;  // spans apart
    // Rows of each side are disjoint and ascending (pitch >= width, slice
    // pitch >= height * row pitch), so walk both lists in order.
    const uint64_t w = r.region[0], h = r.region[1], rows = r.region[1] * r.region[2];
    auto row_start = [&](uint64_t i, uint64_t first, uint64_t rp, uint64_t sp) {
        return first + (i / h) * sp + (i % h) * rp;
    };
    uint64_t i = 0, j = 0;
    while (i < rows && j < rows) {
        const uint64_t a = row_start(i, s_first, r.src_row_pitch, r.src_slice_pitch);
        const uint64_t b = row_start(j, d_first, r.dst_row_pitch, r.dst_slice_pitch);
        if (a < b + w && b < a + w) return true;
        if (a + w <= b) ++i; else ++j;
    }
    return false;
}

}  // namespace cldmabuf::i915
