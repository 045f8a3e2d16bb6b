// What the layer knows of the objects it allocated (CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF):
// the exporter, a dup of the dma-buf fd of its own (for
// CL_MEM_DMA_BUF_FD_CLDMABUF: the import owns the fd it was given, and an
// ICD that imported it natively may have consumed it), and the caller's
// property list.  Kept apart from the import registry because a native
// import (layer/import/native) has no registry record.  Entries go with the
// object's destructor callback, which closes its own dup and drops the entry
// only while it is still its own (a late callback, after the ICD gave the
// handle to a newer allocation, leaves that one alone).
#pragma once

#include <vector>

#include "layer/base/cl_compat.h"

namespace cldmabuf {

// The exporters the allocator has (layer/alloc/exporter_choice.hpp chooses).
enum class AllocExporter : cl_uint {
    i915_gem = 2,  // the public CL_DMA_BUF_EXPORTER_*_CLDMABUF values
    dma_heap = 3,
    udmabuf = 4,
};
// "i915 GEM", "system dma-heap", "udmabuf".
const char *alloc_exporter_name(AllocExporter e);

struct Allocated {
    int fd = -1;  // the layer's own dup; closed when the object is destroyed
    AllocExporter exporter = AllocExporter::dma_heap;
    std::vector<cl_mem_properties> properties;  // as the caller gave them, with the terminating 0
};

// Records `mem` and registers the destructor callback that forgets it.
// Takes `entry.fd` (the callback closes it when the object goes).
// CL_OUT_OF_RESOURCES when the callback cannot be registered: then nothing
// is recorded and the fd is closed.
cl_int record_allocated(cl_mem mem, Allocated entry);
// Live allocated objects (leak checks in tests).
size_t allocated_count();
// The ICD created a new object with handle `mem`: an entry under it is an
// old allocation's whose destructor callback has not run yet (it still
// closes that one's fd).  Called by fresh_mem (layer/import/fresh_handles.hpp).
void retire_allocated(cl_mem mem);

// clGetMemObjectInfo for the allocator's names and, on an allocated object,
// CL_MEM_PROPERTIES.  True when it answered (*err set); false: not ours.
//   CL_MEM_DMA_BUF_EXPORTER_CLDMABUF  cl_uint, CL_INVALID_VALUE if not allocated by the layer
//   CL_MEM_DMA_BUF_FD_CLDMABUF        cl_int, a new fd the caller owns; none is made
//                                     when `value` is NULL or too small
bool allocated_mem_info(cl_mem mem, cl_mem_info name, size_t size, void *value, size_t *size_ret, cl_int *err);

}  // namespace cldmabuf
