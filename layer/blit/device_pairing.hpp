// Which OpenCL devices the Gen9 blitter may copy for: a device must read the
// very pages the BCS writes (docs/blitter.md, "Device matching").
#pragma once

#include <string>

#include "layer/base/cl_compat.h"
#include "layer/i915/gen9_probe.hpp"
#include "layer/core/pci_address.hpp"

namespace cldmabuf {

// What the layer knows of an OpenCL device when it pairs it with the node.
struct DeviceFacts {
    cl_device_type type = 0;
    cl_uint vendor_id = 0;
    bool has_pci = false;  // cl_khr_pci_bus_info answered
    PciAddress pci;
};

// Whether a device with `facts` sees what the Gen9 node `node` writes into a
// zero-copy import.  A CPU device always does (same host pages).  A GPU
// device must be the node's own PCI function: compared through
// cl_khr_pci_bus_info when the ICD answers it (a node whose PCI address is
// unknown then matches nothing), else by vendor 0x8086.  Empty when it
// matches, else the fallback reason, naming both addresses where known.
std::string device_mismatch(const DeviceFacts &facts, const i915::Gen9Info &node);

// What the ICD answers for `device` (type, vendor, PCI address of a GPU);
// *ok false when a query failed.  layer/va pairs VA displays with it too.
DeviceFacts device_facts(cl_device_id device, bool *ok);

// device_mismatch for `device` against BltEngine::instance()'s node, asked
// of the ICD once per root device (a sub-device answers as its root) and
// cached; the first mismatch of a device is logged once.  nullptr when it
// matches, else the reason (stable storage).
const char *blt_device_mismatch(cl_device_id device);

}  // namespace cldmabuf
