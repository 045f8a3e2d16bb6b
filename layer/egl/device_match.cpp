#include "layer/egl/device_match.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cctype>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cldmabuf {

namespace {
std::string pci_text(const PciAddress &a) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", a.domain, a.bus, a.device, a.function);
    return buf;
}
}  // namespace

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

bool parse_pci_address(const std::string &text, PciAddress *out) {
    // sysfs spells it DDDD:BB:SS.F (domain, bus, slot, function; hex).
    if (text.size() != 12 || text[4] != ':' || text[7] != ':' || text[10] != '.') return false;
    for (size_t i = 0; i < text.size(); ++i)
        if (i != 4 && i != 7 && i != 10 && !std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
    auto hex = [&](size_t pos, size_t len) {
        return static_cast<uint32_t>(std::strtoul(text.substr(pos, len).c_str(), nullptr, 16));
    };
    const PciAddress a{hex(0, 4), hex(5, 2), hex(8, 2), hex(11, 1)};
    if (a.device > 0x1f || a.function > 7) return false;
    *out = a;
    return true;
}

bool drm_node_pci_address(const std::string &node, PciAddress *out) {
    struct stat st;
    if (stat(node.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) return false;
    char link[64], resolved[PATH_MAX];
    std::snprintf(link, sizeof link, "/sys/dev/char/%u:%u/device", major(st.st_rdev), minor(st.st_rdev));
    if (!realpath(link, resolved)) return false;
    const char *base = std::strrchr(resolved, '/');
    return base && parse_pci_address(base + 1, out);
}

}  // namespace cldmabuf
