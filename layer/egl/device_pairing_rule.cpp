#include "layer/egl/device_pairing_rule.hpp"

namespace cldmabuf {

void resolve_display_device(DisplayDevice *d) {
    const std::string &n = d->driver;
    const bool software_driver =
        n == "swrast" || n == "kms_swrast" || n == "llvmpipe" || n == "softpipe" || n == "swr";
    if (d->drm_node.empty() || software_driver) d->software = true;
    d->has_pci = !d->software && drm_node_pci_address(d->drm_node, &d->pci);
}

Match match_device(const DisplayDevice &display, const ClDeviceFacts &device, std::string *why) {
    const bool cpu = (device.type & CL_DEVICE_TYPE_CPU) != 0;
    if (display.software || display.drm_node.empty()) {
        if (cpu) return Match::yes;
        *why = "the EGL display renders in software (" +
               (display.driver.empty() ? std::string("no DRM device") : "driver " + display.driver) +
               "): it pairs only with a CPU OpenCL device";
        return Match::no;
    }
    if (cpu) {
        *why = "the EGL display renders on " + display.drm_node + ", a GPU; the OpenCL device is a CPU";
        return Match::no;
    }
    if (!display.has_pci || !device.has_pci) {
        *why = display.has_pci ? "the OpenCL device does not report its PCI address (cl_khr_pci_bus_info)"
                               : display.drm_node + " has no PCI address";
        *why += ": cannot verify that it is the EGL display's GPU";
        return Match::unverified;
    }
    if (display.pci == device.pci) return Match::yes;
    *why = "the EGL display renders on " + display.drm_node + " (PCI " + pci_text(display.pci) +
           "), the OpenCL device is PCI " + pci_text(device.pci);
    return Match::no;
}

}  // namespace cldmabuf
