// PCI addresses of DRM nodes and OpenCL devices, so that the blitter and the
// EGL path only pair a device with the GPU it really is (docs/blitter.md,
// docs/egl.md).  The node's side is layer/base/sysfs_pci.hpp (no OpenCL there, so
// layer/i915 can use it); this header adds the OpenCL device's.
#pragma once

#include "layer/base/cl_compat.h"
#include "layer/base/sysfs_pci.hpp"

namespace cldmabuf {

// An OpenCL device's address from cl_khr_pci_bus_info (CL_DEVICE_PCI_BUS_INFO_KHR,
// asked of the next layer); false when the ICD does not answer it.
bool cl_device_pci_address(cl_device_id device, PciAddress *out);

}  // namespace cldmabuf
