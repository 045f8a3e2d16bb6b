// Which exporters the allocator tries, in which order, and what a failure
// means to the application.  Pure (no kernel, no OpenCL call): unit-tested
// in tests/unit/test_alloc_choice.cpp.
//
// Why this order: a GEM object of the Gen9 node is the only one the blitter
// reaches with no foreign-exporter gate (docs/blitter.md), and on an
// integrated GPU it is host memory the CPU device maps too; the system
// dma-heap is the generic exporter every current kernel has; udmabuf over a
// memfd is the last resort (its size is capped by udmabuf.size_limit_mb).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layer/base/cl_compat.h"

namespace cldmabuf {

enum class AllocExporter : cl_uint {
    i915_gem = 2,  // the public CL_DMA_BUF_EXPORTER_*_CLDMABUF values
    dma_heap = 3,
    udmabuf = 4,
};

// What the application asked for: CL_DMA_BUF_EXPORTER_ANY_CLDMABUF or one exporter.
inline constexpr cl_uint kAllocAny = 1;

// "i915 GEM", "system dma-heap", "udmabuf".
const char *alloc_exporter_name(AllocExporter e);

// The CLDMABUF_ALLOC_EXPORTER setting: "auto" (or unset) lets the property
// choose; "i915", "dma-heap", "udmabuf" allow that exporter only.
// `requested` is the property's value.  Fills `order` (possibly empty: the
// setting forbids what the property names, `why` says so) and returns
// CL_SUCCESS, or CL_INVALID_PROPERTY for a value that names no exporter.
cl_int exporter_order(cl_uint requested, const char *setting_value, std::vector<AllocExporter> *order,
                      std::string *why);

// The spec's error for an exporter's -errno: the exporter is not there
// (-ENOENT, -ENODEV, -ENOSYS, -EACCES, -EPERM: CL_INVALID_OPERATION), refuses
// the size (-EINVAL, -E2BIG, -EFBIG, -EOVERFLOW: CL_INVALID_BUFFER_SIZE), or
// is out of memory (-ENOMEM, -ENOSPC and anything else:
// CL_MEM_OBJECT_ALLOCATION_FAILURE).
cl_int alloc_error(int neg_errno);
// True for the "not there" errors: the next exporter is tried silently.
bool exporter_missing(int neg_errno);

}  // namespace cldmabuf
