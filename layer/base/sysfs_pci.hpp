// PCI addresses as sysfs spells them, and the one behind a DRM node (read
// through the kernel seam, so the virtual Gen9 and unit fakes answer it).
// Free of OpenCL so that layer/i915 can name its node's address;
// layer/core/pci_address.hpp adds an OpenCL device's.
#pragma once

#include <cstdint>
#include <string>

namespace cldmabuf {

struct PciAddress {
    uint32_t domain = 0, bus = 0, device = 0, function = 0;
    bool operator==(const PciAddress &) const = default;
};

// "0000:00:02.0" -> address; false when malformed.
bool parse_pci_address(const std::string &text, PciAddress *out);
// The address as sysfs spells it ("0000:00:02.0").
std::string pci_text(const PciAddress &a);

// The PCI address of a DRM device node: stat the node, resolve
// /sys/dev/char/MAJ:MIN/device and parse its last component.  false when the
// node is not a character device or not on PCI (vgem, a platform device).
bool drm_node_pci_address(const std::string &node, PciAddress *out);

}  // namespace cldmabuf
