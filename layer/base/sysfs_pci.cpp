#include "layer/base/sysfs_pci.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cctype>
#include <cstdio>

#include "layer/base/kernel_ops.hpp"

namespace cldmabuf {

std::string pci_text(const PciAddress &a) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", a.domain, a.bus, a.device, a.function);
    return buf;
}

bool parse_pci_address(const std::string &text, PciAddress *out) {
    // dddd:bb:dd.f, hex digits, exactly 12 characters.
    if (text.size() != 12 || text[4] != ':' || text[7] != ':' || text[10] != '.') return false;
    auto hex = [&](size_t pos, size_t len) -> int64_t {
        uint32_t v = 0;
        for (size_t i = pos; i < pos + len; ++i) {
            const unsigned char c = static_cast<unsigned char>(text[i]);
            if (!std::isxdigit(c)) return -1;
            v = v * 16 + static_cast<uint32_t>(std::isdigit(c) ? c - '0' : std::tolower(c) - 'a' + 10);
        }
        return v;
    };
    const int64_t d = hex(0, 4), b = hex(5, 2), dev = hex(8, 2), f = hex(11, 1);
    if (d < 0 || b < 0 || dev < 0 || f < 0 || dev > 0x1f || f > 7) return false;
    *out = PciAddress{uint32_t(d), uint32_t(b), uint32_t(dev), uint32_t(f)};
    return true;
}

bool drm_node_pci_address(const std::string &node, PciAddress *out) {
    struct stat st;
    if (kernel().stat(node.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) return false;
    char link[64];
    std::snprintf(link, sizeof link, "/sys/dev/char/%u:%u/device", major(st.st_rdev), minor(st.st_rdev));
    const std::string resolved = kernel().real_path(link);
    const size_t slash = resolved.rfind('/');
    return slash != std::string::npos && parse_pci_address(resolved.substr(slash + 1), out);
}

}  // namespace cldmabuf
