// Turns a BlitPlan into one complete BCS batch (pure, no kernel access).
//
// Layout (docs/blitter.md): [MI_FLUSH_DW, LRI BCS_SWCTRL set] when a side is
// Y-tiled, one XY_SRC_COPY_BLT per planned blit, [MI_FLUSH_DW, LRI
// BCS_SWCTRL reset], MI_BATCH_BUFFER_END, MI_NOOP pad to 8 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "layer/i915/blit_plan.hpp"

namespace cldmabuf::i915 {

// Dwords the batch for `plan` will take (an upper bound, exact in practice).
size_t batch_dwords_for(const BlitPlan &plan);

// Appends the batch to `out` (cleared first).  src_addr/dst_addr are the GPU
// virtual addresses of the two objects.
void build_batch(std::vector<uint32_t> &out, const BlitPlan &plan, uint64_t src_addr,
                 uint64_t dst_addr);

}  // namespace cldmabuf::i915
