#include "layer/blit/exporter_gate.hpp"

#include <cstdlib>
#include <cstring>

#include <sys/stat.h>

#include "layer/dmabuf/exporter.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/core/pci_address.hpp"
#include "layer/base/settings.hpp"

namespace cldmabuf {

dev_t node_rdev(const i915::Gen9Info &node) {
    struct stat st {};
    return kernel().stat(node.path.c_str(), &st) == 0 ? st.st_rdev : 0;
}

std::string exporter_mismatch(const Import &import, const i915::Gen9Info &node, dev_t rdev) {
    const std::string blitter = "the blitter's GPU is " + node.path + (node.has_pci ? " at " + pci_text(node.pci) : "");
    const std::string buffer = "dma-buf fd " + std::to_string(import.app_fd) + " is exported by ";
    if (import.exporter != ExporterKind::i915) {
        std::string what = exporter_kind_name(import.exporter);
        if (import.exporter == ExporterKind::other) what += " \"" + import.exporter_name + "\"";
        return buffer + what + ", " + blitter;
    }
    if (import.exporter_rdev == 0 || rdev == 0)
        return buffer + "an i915 device that cannot be named (not exactly one i915 node), " + blitter;
    if (import.exporter_rdev != rdev) return buffer + "i915 at " + import.exporter_node + ", " + blitter;
    return {};
}

bool blt_any_exporter() {
    static const bool any = [] {
        const char *v = setting("CLDMABUF_BLT_EXPORTERS");
        if (!v || !*v || !std::strcmp(v, "own")) return false;
        if (!std::strcmp(v, "any")) return true;
        LOG_WARN("CLDMABUF_BLT_EXPORTERS=%s is not own or any: own", v);
        return false;
    }();
    return any;
}

}  // namespace cldmabuf
