#include "layer/blit/eligibility.hpp"

#include <memory>

#include "layer/blit/device_pairing.hpp"
#include "layer/blit/gem_cache.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/icd/devices.hpp"
#include "layer/base/stats.hpp"

namespace cldmabuf {
namespace {

using i915::BltEngine;

// The BCS writes the dma-buf's pages; the copy is only right when the ICD's
// object lives on those very pages.  A copy import keeps a device buffer, and
// a tiled image import lays the ICD's image over a linear shadow (no mapping
// of the dma-buf as pixels), so neither may be blitted as it stands.
const char *not_in_place(const Import &imp) {
    if (imp.route == Route::copy) return "device-copy import";
    if (!imp.mapping || imp.over_tiled_shadow())
        return "import whose ICD storage is not the dma-buf (tiled shadow)";
    return nullptr;
}

// Why the pair (src, dst) cannot take the blitter, or nullptr with *t filled.
// *status receives an argument error the spec names (context/queue), which
// the caller returns instead of copying.
const char *classify(cl_command_queue queue, cl_mem src_mem, MemKind src_kind, cl_mem dst_mem, MemKind dst_kind,
                     const std::shared_ptr<Import> &src, size_t src_base, const std::shared_ptr<Import> &dst,
                     size_t dst_base, BltTarget *t, cl_int *status) {
    *status = CL_SUCCESS;
    if (!src || !dst) return "import mixed with a plain cl_mem";
    // The ICD knows its object types; a wrong one is its CL_INVALID_MEM_OBJECT.
    if (src->is_image != (src_kind == MemKind::image) || dst->is_image != (dst_kind == MemKind::image))
        return "object type the call does not take (ICD reports)";
    if (const char *why = not_in_place(*src)) return why;
    if (const char *why = not_in_place(*dst)) return why;
    BltEngine *engine = BltEngine::instance();
    if (!engine) return "no Gen9 blitter (none found or CLDMABUF_BLT=off)";

    cl_context ctx = nullptr;
    cl_device_id device = nullptr;
    if (next().clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, nullptr) != CL_SUCCESS ||
        !(device = queue_device(queue))) {
        *status = CL_INVALID_COMMAND_QUEUE;
        return "invalid command queue";
    }
    if (src->context != ctx || dst->context != ctx) {
        *status = CL_INVALID_CONTEXT;
        return "context mismatch";
    }
    if (const char *why = blt_device_mismatch(device)) return why;

    // Sub-buffers: their own size, and an origin the device accepts (else
    // the ICD reports CL_MISALIGNED_SUB_BUFFER_OFFSET).
    auto side = [&](cl_mem mem, const Import &imp, size_t base, CopySide *out) -> bool {
        out->base = base;
        if (mem == imp.mem) {
            out->size = imp.size;
            return true;
        }
        size_t size = 0;
        cl_uint align_bits = 0;
        if (next().clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, nullptr) != CL_SUCCESS) return false;
        if (next().clGetDeviceInfo(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits,
                                   nullptr) != CL_SUCCESS)
            return false;
        if (!sub_buffer_origin_aligned(base, align_bits)) return false;
        out->size = size;
        return true;
    };
    if (!side(src_mem, *src, src_base, &t->src_side) || !side(dst_mem, *dst, dst_base, &t->dst_side))
        return "sub-buffer the ICD must judge (size or alignment)";

    if (blt_import_of(*src, *engine, &t->src) != 0 || blt_import_of(*dst, *engine, &t->dst) != 0)
        return "GEM import failed";
    t->engine = engine;
    t->device = device;
    t->src_import = src.get();
    t->dst_import = dst.get();
    t->same_storage = src.get() == dst.get();
    return nullptr;
}

}  // namespace

bool take_blitter(cl_command_queue queue, cl_mem src, MemKind src_kind, cl_mem dst, MemKind dst_kind,
                  BltTarget *t, cl_int *status) {
    *status = CL_SUCCESS;
    if (imports().empty()) return false;
    size_t src_base = 0, dst_base = 0;
    auto si = imports().find(src, &src_base);
    auto di = imports().find(dst, &dst_base);
    if (!si && !di) return false;  // plain objects
    if (const char *why = classify(queue, src, src_kind, dst, dst_kind, si, src_base, di, dst_base, t, status)) {
        if (*status == CL_SUCCESS) stats().count_fallback(why);
        return false;
    }
    return true;
}

}  // namespace cldmabuf
