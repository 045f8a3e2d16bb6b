// Which copies go to the Gen9 blitter, and why not: for a pair of cl_mems,
// the blitter, the ICD (a counted fallback with its reason) or the spec's
// error (docs/blitter.md, "Layer integration").
#pragma once

#include "layer/blit/copy_checks.hpp"
#include "layer/base/cl_compat.h"
#include "layer/i915/blt_engine.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {

// Which kind of object the call names on one side.  An import of the other
// kind goes to the ICD, whose CL_INVALID_MEM_OBJECT then comes back.
enum class MemKind { buffer, image };

// What an eligible copy needs at submission time.
struct BltTarget {
    i915::BltEngine *engine = nullptr;
    i915::BltImport src, dst;
    CopySide src_side, dst_side;  // buffers: size and sub-buffer origin
    const Import *src_import = nullptr, *dst_import = nullptr;  // alive while the cl_mems are
    cl_device_id device = nullptr;
    bool same_storage = false;  // both sides inside the same import
};

// Whether a copy between src and dst goes to the blitter (true, *t filled),
// to the ICD (false, *status CL_SUCCESS; a fallback of an import is counted
// in stats with its reason), or is refused with the spec's error (false,
// *status).  Plain cl_mems cost two map lookups while imports exist, one
// relaxed load otherwise.
bool take_blitter(cl_command_queue queue, cl_mem src, MemKind src_kind, cl_mem dst, MemKind dst_kind,
                  BltTarget *t, cl_int *status);

}  // namespace cldmabuf
