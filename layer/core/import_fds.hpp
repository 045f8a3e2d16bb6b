// An import's dma-buf fds and exporter, recorded on its registry entry:
// the layer's own duplicate, the application's number (docs/layer-rules.md,
// "Who owns the fd"), and who exported the buffer (layer/dmabuf/exporter).
#pragma once

#include <string>

#include "layer/core/registry.hpp"
#include "layer/dmabuf/exporter.hpp"
#include "layer/dmabuf/identity.hpp"

namespace cldmabuf {

// ---- who owns the fd (docs/layer-rules.md, "Who owns the fd") ----
// The layer works on its own duplicate from the moment of import: the
// application may keep using, or close, its number.  adopt_dmabuf_fd() dups
// `app_fd` (F_DUPFD_CLOEXEC through the seam) into import.fd and records the
// application's fd and the identity of the dma-buf it named, asked once of
// the dup (layer/dmabuf/identity.hpp; an fstat of `app_fd` itself could meet
// another file if the application closed and reused the number meanwhile).
// `app_owned` = false (clImportMemoryARM) means the layer never closes
// `app_fd`.  0 or -errno.
int adopt_dmabuf_fd(Import &import, int app_fd, bool app_owned = true);
// The identity adopt_dmabuf_fd recorded, or nullptr when fstat did not answer
// (then whoever needs it asks again).
const DmabufIdentity *import_identity(const Import &import);
// Undo of adopt_dmabuf_fd for a refused import: closes the layer's dup only.
void drop_dmabuf_dup(Import &import);
// At destroy: always closes the layer's dup; closes the application's fd only
// when owned and that number still names the dma-buf recorded at import (a
// number the application closed and reused is never closed).  Returns
// whether the application's fd was closed.
bool close_import_fds(Import &import);

// Records `id` on the import.
void set_exporter(Import &import, const ExporterId &id);
// "i915 (/dev/dri/renderD128)", "system heap", "unknown exporter", ...
std::string describe_exporter(const Import &import);

}  // namespace cldmabuf
