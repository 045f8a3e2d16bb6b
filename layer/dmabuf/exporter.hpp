// Who exported a dma-buf, and which device is behind it where that can be
// known.  The kernel prints the exporter's name in /proc/self/fdinfo/<fd>
// ("exp_name:", dma_buf_show_fdinfo, Linux >= 5.x); read through the kernel
// seam so the virtual Gen9 and unit fakes can answer it.
//
// Why: the blitter may only take buffers its own GPU exported (another
// device's memory is not its to copy), and whether an ICD really uses a
// mapping in place depends on what backs it (PFNMAP heaps vs pages), so the
// zero-copy check is cached per exporter kind (layer/import/zero_copy_check).
#pragma once

#include <string>
#include <sys/types.h>

#include "layer/dmabuf/identity.hpp"


namespace cldmabuf {

enum class ExporterKind {
    unknown,      // no exp_name (fdinfo unreadable, or not a dma-buf fd)
    i915,         // i915's own PRIME export ("i915")
    system_heap,  // dma-heap "system" / "system-uncached"
    cma_heap,     // other dma-heaps ("linux,cma", "reserved", ...)
    udmabuf,      // udmabuf (a sealed memfd)
    drm_generic,  // "drm": drm_gem_prime_export (vgem, amdgpu, virtio-gpu, ...); device not named
    other,        // any other exporter name
};

struct ExporterId {
    ExporterKind kind = ExporterKind::unknown;
    std::string name;   // exp_name as printed, empty when unknown
    std::string node;   // the exporting device's DRM render node, when known
    dev_t rdev = 0;     // that node's st_rdev, 0 when unknown
};

// The exp_name value in an fdinfo text, or empty.
std::string parse_exp_name(const std::string &fdinfo);
ExporterKind exporter_kind_of(const std::string &exp_name);
const char *exporter_kind_name(ExporterKind kind);

// Reads /proc/self/fdinfo/<fd> (cached per dma-buf inode, 256 entries).  For an i915 export the device is named only
// when exactly one i915 render node exists (scanned once per process): an
// i915 dma-buf can only come from an i915 device, and PRIME_FD_TO_HANDLE
// succeeding on a node proves nothing (i915 imports foreign dma-bufs too).
// `known`: `fd`'s identity where the caller has it (layer/dmabuf/identity.hpp),
// else it is asked here.
ExporterId identify_exporter(int fd, const DmabufIdentity *known = nullptr);

// Unit tests swap kernels and tests of the virtual Gen9 re-label its
// exporter: forget the cached i915 node scan and exporters.
void forget_exporters();

}  // namespace cldmabuf
