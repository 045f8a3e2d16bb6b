// What the copy overrides (layer/copy.cpp for buffers, layer/copy_image.cpp
// for images) share: deciding blitter / ICD / error for a pair of cl_mems,
// and running a planned blit as a host step of the queue (docs/blitter.md,
// "Layer integration" and "Queue ordering and events").
#pragma once

#include <cstdint>
#include <functional>

#include "layer/cl_compat.h"
#include "layer/i915/blt_copy.hpp"

namespace cldmabuf {

// Which kind of object the call names on one side.  An import of the other
// kind goes to the ICD, whose CL_INVALID_MEM_OBJECT then comes back.
enum class MemKind { buffer, image };

// What an eligible copy needs at submission time.
struct BltTarget {
    i915::BltEngine *engine = nullptr;
    i915::BltImport src, dst;
    i915::CopySide src_side, dst_side;  // buffers: size and sub-buffer origin
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

// Enqueues `submit` as a host step of `queue`: it runs once the wait list
// and every earlier command completed; the step's event (type `type`)
// completes when the batch's out-fence signalled, or fails with
// CL_OUT_OF_RESOURCES / CL_OUT_OF_HOST_MEMORY.  `what` names the call in log
// lines; `bytes` is counted in stats().blt_bytes.
cl_int enqueue_blit(cl_command_queue queue, cl_mem src, cl_mem dst, cl_command_type type, cl_uint num_events,
                    const cl_event *wait_list, cl_event *event, const char *what, uint64_t bytes,
                    std::function<int(int *fence)> submit);

}  // namespace cldmabuf
