// PCI addresses of DRM nodes and OpenCL devices, so that the blitter and the
// EGL path only pair a device with the GPU it really is (docs/blitter.md,
// docs/egl.md).  The node's address comes from sysfs through the kernel seam,
// so the virtual Gen9 and unit fakes can answer it.
#pragma once

#include <cstdint>
#include <string>

#include "layer/cl_compat.h"

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

// An OpenCL device's address from cl_khr_pci_bus_info (CL_DEVICE_PCI_BUS_INFO_KHR,
// asked of the next layer); false when the ICD does not answer it.
bool cl_device_pci_address(cl_device_id device, PciAddress *out);

}  // namespace cldmabuf
