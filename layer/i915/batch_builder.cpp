#include "layer/i915/batch_builder.hpp"

namespace cldmabuf::i915 {

size_t batch_dwords_for(const BlitPlan &plan) {
    size_t n = plan.blits.size() * kBltDwords + 2;  // + BBE + pad
    if (plan.needs_swctrl()) n += 2 * (kMiFlushDwDwords + 3);
    return n;
}

void build_batch(std::vector<uint32_t> &out, const BlitPlan &plan, uint64_t src_addr,
                 uint64_t dst_addr) {
    out.clear();
    out.reserve(batch_dwords_for(plan));
    if (plan.needs_swctrl()) {
        emit_mi_flush_dw(out);
        emit_bcs_swctrl(out, plan.src_y_tiled, plan.dst_y_tiled);
    }
    for (const Blit &b : plan.blits) {
        BltCommand c;
        c.bpp = b.bpp;
        c.src_tiling = b.src_tiling;
        c.dst_tiling = b.dst_tiling;
        c.src_pitch = b.src_pitch;
        c.dst_pitch = b.dst_pitch;
        c.dst_x1 = b.dst_x1;
        c.dst_y1 = b.dst_y1;
        c.dst_x2 = b.dst_x2;
        c.dst_y2 = b.dst_y2;
        c.src_x = b.src_x;
        c.src_y = b.src_y;
        c.src_addr = src_addr + b.src_offset;
        c.dst_addr = dst_addr + b.dst_offset;
        emit_xy_src_copy_blt(out, c);
    }
    if (plan.needs_swctrl()) {
        emit_mi_flush_dw(out);
        emit_bcs_swctrl(out, false, false);
    }
    emit_batch_end(out);
}

}  // namespace cldmabuf::i915
