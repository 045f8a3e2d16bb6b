#include "layer/core/pci_address.hpp"

#include "layer/core/dispatch.hpp"

namespace cldmabuf {

bool cl_device_pci_address(cl_device_id device, PciAddress *out) {
    cl_device_pci_bus_info_khr pci{};
    if (next().clGetDeviceInfo(device, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof pci, &pci, nullptr) != CL_SUCCESS)
        return false;
    *out = PciAddress{pci.pci_domain, pci.pci_bus, pci.pci_device, pci.pci_function};
    return true;
}

}  // namespace cldmabuf
