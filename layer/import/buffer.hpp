// Import of a dma-buf fd into a cl_mem (clCreateBufferWithProperties).
#pragma once

#include <string>
#include <vector>

#include "layer/cl_compat.h"
#include "layer/registry.hpp"

namespace cldmabuf {

// CLDMABUF_IMPORT=auto|zero-copy|copy: how imports reach the ICD.  auto picks
// zero-copy when every device that may use the object has host-unified memory.
enum class StrategyChoice { automatic, zero_copy, copy };
StrategyChoice strategy_choice();

// True when `device` shares memory with the host (CL_DEVICE_HOST_UNIFIED_MEMORY,
// or a CPU device).
bool device_shares_host_memory(cl_device_id device);

// Maps the first `bytes` of the import's dma-buf (page-rounded) into
// import->mapping: writable when the fd allows it, read-only for an object
// the device only reads.  0 or errno.
int map_dmabuf(Import &import, int fd, size_t bytes, cl_mem_flags flags);
// Gives the mapping back (layer/ext/mapping_cache): kept for a later import
// of the same dma-buf when `keep` and CLDMABUF_MAP_CACHE_MB allows, else
// unmapped.  Failed imports pass keep = false.
void unmap_dmabuf(Import &import, bool keep = true);

// A refused import: one log line (`what` names the kind), counted, the
// spec's code through errcode_ret.  Returns NULL for the caller to return.
cl_mem refuse_import(cl_int *errcode_ret, cl_int err, const char *what, const std::string &why);

// A CL_MEM_READ_ONLY import (or a sub-buffer of one) that the ICD uses in
// place over the layer's read-only mapping: host-enqueued writes into it
// (write, fill, a copy into it, a CL_MAP_WRITE map) would make the ICD write
// read-only memory, so they must be refused with CL_INVALID_OPERATION
// (layer/ext/read_only_guard.cpp).
bool import_refuses_host_writes(cl_mem mem);
// Wraps the write, fill, copy and map slots of `table` as they are when
// called: install after every other override of those slots.
void install_read_only_guard(cl_icd_dispatch &table);

// The root device of `device` (itself unless a sub-device).  Root devices
// live as long as their platform, so their handles are a stable cache key;
// a released sub-device's address may be handed to another device.
cl_device_id root_device_of(cl_device_id device);

// Devices of a context, through the ICD.
cl_int context_devices(cl_context context, std::vector<cl_device_id> *out);

// True when `device` is in `list` (no ICD call: `device` may be garbage).
bool device_in(const std::vector<cl_device_id> &list, cl_device_id device);
// The same, also accepting a sub-device of a listed device.  Asks the ICD
// about `device`, so only for a device the ICD handed out (a queue's).
// PoCL 3.1 reports a sub-device context's CL_CONTEXT_DEVICES as the parent.
bool device_or_parent_in(const std::vector<cl_device_id> &list, cl_device_id device);

}  // namespace cldmabuf
