// Whether an ICD really uses a dma-buf mapping in place (CL_MEM_USE_HOST_PTR)
// on a device, checked rather than assumed.
//
// Why: CL_DEVICE_HOST_UNIFIED_MEMORY or a CPU device says the device can
// reach host memory, not that the ICD uses *this* memory in place.  An ICD
// that backs CL_MEM_USE_HOST_PTR with userptr falls back to a copy of its own
// when the mapping is VM_PFNMAP (some exporters map that way), and never says
// so.  An import reported as zero-copy would then miss every write made
// after creation.
//
// How: a CL_MEM_USE_HOST_PTR buffer over a second, small mapping of the
// import's own dma-buf (its first 64 bytes); the ICD fills it on the device
// (clEnqueueFillBuffer) and the layer reads the bytes through its mapping.
// The bytes are restored afterwards, before the import is handed out.  One
// check per (root device, exporter kind) per process, recorded in the
// device's profile (layer/icd/profile.hpp).
#pragma once

#include "layer/base/cl_compat.h"
#include "layer/core/registry.hpp"
#include "layer/icd/profile.hpp"

namespace cldmabuf {

// ZeroCopyVerdict: layer/icd/profile.hpp.
// CLDMABUF_ZERO_COPY_CHECK=on (default) | off (trust the device's claim
// unchecked); CLDMABUF_DEBUG=zero-copy-fail (a test's instrument): every
// check reports `copies`.
ZeroCopyVerdict check_buffer_zero_copy(cl_context context, cl_device_id device, ExporterKind exporter, int fd);

}  // namespace cldmabuf
