// Which OpenCL devices may share with an EGL display (docs/egl.md, "GPU
// match").  The decision is a pure function of what EGL and OpenCL report,
// so that it is unit-tested without either.
#pragma once

#include <cstdint>
#include <string>

#include "layer/base/cl_compat.h"
#include "layer/core/pci_address.hpp"

namespace cldmabuf {

// What the EGL display runs on (EGL_EXT_device_query).
struct DisplayDevice {
    bool software = false;     // EGL_MESA_device_software, a software driver, or no DRM node at all
    std::string driver;        // EGL_MESA_query_driver's name ("swrast", "kms_swrast", "iris"...), if known
    std::string drm_node;      // EGL_DRM_RENDER_NODE_FILE_EXT or EGL_DRM_DEVICE_FILE_EXT; empty: none
    std::string primary_node;  // EGL_DRM_DEVICE_FILE_EXT (the card node), if known: GBM's fallback
    bool has_pci = false;      // the node's PCI address, from sysfs
    PciAddress pci;
};

// What an OpenCL device is.
struct ClDeviceFacts {
    cl_device_type type = 0;
    bool has_pci = false;      // cl_khr_pci_bus_info
    PciAddress pci;
};

enum class Match {
    yes,
    unverified,  // a GPU without cl_khr_pci_bus_info, or a node without a PCI address: allowed, with a warning
    no,
};

// Completes `d` from what EGL said (driver, drm_node, software): a display
// with no node or a software driver is software; otherwise the node's PCI
// address is read from sysfs through the kernel seam (layer/pci_address).
void resolve_display_device(DisplayDevice *d);

// A software renderer pairs only with CPU devices; a renderer on a DRM node
// only with a device on the same PCI function.  *why explains anything but yes.
Match match_device(const DisplayDevice &display, const ClDeviceFacts &device, std::string *why);

}  // namespace cldmabuf
