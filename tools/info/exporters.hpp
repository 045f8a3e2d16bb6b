// Who on this machine can hand the layer a dma-buf: the kernel's dma-heaps,
// udmabuf, DRM render nodes (with their drivers from sysfs) and EGL with
// EGL_MESA_image_dma_buf_export.  Everything goes through the layer's kernel
// seam, so the virtual Gen9 (LD_PRELOAD) answers for its fake node too.
#pragma once

#include "layer/i915/gen9_probe.hpp"
#include "tools/info/json.hpp"

namespace cldmabuf::info {

// {"dma_heaps": [...], "udmabuf": bool, "render_nodes": [{node, driver, pci}],
//  "egl": {...}}.  probe_egl false skips loading libEGL (reported as skipped).
Json find_exporters(bool probe_egl);

// {"available": bool, "node", "device_id", "platform", "pci", "reason"}: the
// Gen9 node the layer's blitter would use (layer/i915/gen9_probe), or why none.
// *node receives the node (path empty when there is none; its fd is closed).
Json find_blitter(i915::Gen9Info *node);

}  // namespace cldmabuf::info
