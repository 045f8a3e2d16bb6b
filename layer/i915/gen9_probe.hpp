// Finds a Gen9 i915 render node through the kernel seam, and the node's PCI
// address (stat the node, resolve /sys/dev/char/MAJ:MIN/device: both through
// the seam, layer/base/sysfs_pci.hpp), so that the layer pairs an OpenCL GPU
// device with this node only when it is the same PCI function.
#pragma once

#include <cstdint>
#include <string>

#include "layer/base/sysfs_pci.hpp"

namespace cldmabuf::i915 {

struct Gen9Info {
    std::string path;       // e.g. /dev/dri/renderD128
    int fd = -1;            // open render node (owned by the caller)
    uint16_t vendor_id = 0x8086;
    uint16_t device_id = 0; // I915_PARAM_CHIPSET_ID
    const char *platform = "";  // "SKL", "BXT", "KBL", ...
    bool has_llc = false;   // false on BXT/GLK: batches are mapped WC then
    bool has_pci = false;   // the node's sysfs entry resolved to a PCI function
    PciAddress pci;         // valid when has_pci
};

// Platform name if `device_id` is in the Gen9 table, else nullptr.
const char *gen9_platform(uint16_t device_id);

// Checks an already-open fd: i915, Gen9 id, HAS_BLT, HAS_EXEC_SOFTPIN,
// HAS_EXEC_FENCE, HAS_EXEC_BATCH_FIRST.  0 and fills *info (fd/path left to
// the caller), or -ENODEV.
int probe_gen9_fd(int fd, Gen9Info *info);

// Scans /dev/dri/renderD* in name order and returns the first Gen9 node with
// its fd open and its PCI address recorded, or -ENODEV.
// CLDMABUF_BLT_NODE=/path restricts the scan.
int probe_gen9(Gen9Info *info);

}  // namespace cldmabuf::i915
