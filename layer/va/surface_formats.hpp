// The VA surface formats whose planes the layer can share, with the DRM
// format libva drivers export each plane as (vaExportSurfaceHandle with
// separate layers: iHD, Mesa, the virtual driver).  Each plane's OpenCL
// image format is the one clCreateFromVA_APIMediaSurfaceINTEL imports it as
// (drm_plane_format, layer/va/surface_export.hpp), so what the format query
// lists and what the import takes cannot drift apart.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layer/va/va_abi.hpp"

namespace cldmabuf::va {

struct SurfaceFormat {
    ImageFormat va;            // as vaQueryImageFormats describes it
    uint32_t planes;           // layers of a separate-layers export
    uint32_t plane_drm[3];     // DRM format of each layer
};

// The table, and its length.
const SurfaceFormat *surface_formats(size_t *count);

}  // namespace cldmabuf::va
