#include "layer/core/import_fds.hpp"

#include <sys/stat.h>

#include <cerrno>

#include "layer/base/kernel_ops.hpp"

namespace cldmabuf {

int adopt_dmabuf_fd(Import &import, int app_fd, bool app_owned) {
    const int dup = kernel().dup(app_fd);
    if (dup < 0) return -errno;
    import.fd = dup;
    import.app_fd = app_fd;
    import.app_fd_owned = app_owned;
    import.app_fd_identity = dmabuf_identity(dup, &import.app_fd_id);
    return 0;
}

const DmabufIdentity *import_identity(const Import &import) {
    return import.app_fd_identity ? &import.app_fd_id : nullptr;
}

void drop_dmabuf_dup(Import &import) {
    if (import.fd >= 0) kernel().close(import.fd);
    import.fd = -1;
}

bool close_import_fds(Import &import) {
    // Compared while the layer's dup still pins the dma-buf, so that its
    // inode number cannot have been handed to a new file in between.
    // Without an identity recorded at import (a seam that cannot fstat) the
    // number cannot be proven ours: leaving it open leaks at worst one fd,
    // closing it could close someone else's file.
    struct stat st {};
    const bool ours = import.app_fd_owned && import.app_fd >= 0 && import.app_fd_identity &&
                      kernel().fstat(import.app_fd, &st) == 0 && st.st_dev == import.app_fd_id.dev &&
                      st.st_ino == import.app_fd_id.ino;
    drop_dmabuf_dup(import);
    if (!ours) return false;
    kernel().close(import.app_fd);
    import.app_fd = -1;
    return true;
}

void set_exporter(Import &import, const ExporterId &id) {
    import.exporter = id.kind;
    import.exporter_name = id.name;
    import.exporter_node = id.node;
    import.exporter_rdev = id.rdev;
}

std::string describe_exporter(const Import &import) {
    std::string s = exporter_kind_name(import.exporter);
    if (import.exporter == ExporterKind::other) s += " \"" + import.exporter_name + "\"";
    if (import.exporter == ExporterKind::i915)
        s += import.exporter_node.empty() ? " (device unknown: not exactly one i915 node)"
                                          : " (" + import.exporter_node + ")";
    return s;
}

}  // namespace cldmabuf
