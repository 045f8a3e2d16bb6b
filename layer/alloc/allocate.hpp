// The allocation itself: the exporters of exporter_order() tried in turn
// until one hands out a dma-buf.  An exporter that is not there is skipped;
// one that is there but refuses (the size, memory) is remembered and the
// next one tried, so the error the application sees is the first refusal of
// an exporter that exists, else CL_INVALID_OPERATION (none exists).
// The exporters are passed in, so unit tests drive the order with fakes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "layer/alloc/exporter_choice.hpp"
#include "layer/base/cl_compat.h"

namespace cldmabuf {

// 0 and *fd, or -errno with a reason in *why (may stay empty).
using ExporterFn = std::function<int(uint64_t bytes, int *fd, std::string *why)>;

struct ExporterSet {
    ExporterFn i915_gem, dma_heap, udmabuf;
};

struct AllocOutcome {
    cl_int err = CL_INVALID_OPERATION;
    int fd = -1;                                   // the new dma-buf on CL_SUCCESS (the caller owns it)
    AllocExporter exporter = AllocExporter::dma_heap;
    std::string why;                               // on failure: each exporter tried, and what it said
    std::vector<AllocExporter> skipped;            // exporters that were not there or refused, in order
};

AllocOutcome allocate_dmabuf(const std::vector<AllocExporter> &order, uint64_t bytes, const ExporterSet &set);

// The exporters of this process, over the kernel seam.  The i915 one serves
// only when the blitter's Gen9 node serves every device of `devices`
// (layer/blit/device_pairing.hpp); it allocates on that node.
ExporterSet system_exporters(const std::vector<cl_device_id> &devices);

}  // namespace cldmabuf
