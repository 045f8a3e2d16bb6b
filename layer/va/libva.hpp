// libva, loaded at run time: users without libva pay nothing and the layer
// has no link dependency on it.  Only libva's public API is called, so any
// VA driver (iHD, radeonsi, Mesa's, tests/va's virtual one) serves.
#pragma once

#include <string>

#include "layer/va/va_abi.hpp"

namespace cldmabuf::va {

struct Libva {
    int (*display_is_valid)(VADisplay);
    VAStatus (*export_surface_handle)(VADisplay, VASurfaceID, uint32_t mem_type, uint32_t flags, void *descriptor);
    VAStatus (*sync_surface)(VADisplay, VASurfaceID);
    VAStatus (*create_surfaces)(VADisplay, unsigned int format, unsigned int width, unsigned int height,
                                VASurfaceID *surfaces, unsigned int num_surfaces, void *attribs,
                                unsigned int num_attribs);
    VAStatus (*destroy_surfaces)(VADisplay, VASurfaceID *surfaces, int num_surfaces);
    const char *(*error_str)(VAStatus);
    // libva >= 2.9 (may be null): the bounded wait; drivers without it answer
    // VA_STATUS_ERROR_UNIMPLEMENTED and vaSyncSurface serves.
    VAStatus (*sync_surface2)(VADisplay, VASurfaceID, uint64_t timeout_ns);
};

// libva.so.2 with every function above, or nullptr (logged once) when it
// cannot be loaded: the extension is then not offered.
// CLDMABUF_VA_LIBRARY names another library (tests).
const Libva *libva();

// "VA_STATUS_ERROR_... (n)" for log lines.
std::string status_text(const Libva &api, VAStatus status);

}  // namespace cldmabuf::va
