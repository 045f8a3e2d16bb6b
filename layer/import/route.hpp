// The one decision of every import: which Route (layer/core/registry.hpp) the
// ICD's object takes to the dma-buf's pages, and why.  Buffers and images,
// KHR and ARM imports all ask decide_route(); the answer is what
// CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF reports and what the import's log
// line says.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layer/base/cl_compat.h"
#include "layer/core/registry.hpp"

namespace cldmabuf {

// CLDMABUF_IMPORT=auto|zero-copy|copy (read once).  A request, not a route:
// zero-copy still leaves host_ptr or image_from_buffer to the geometry, and
// auto leaves everything to the devices and the probes.
enum class RoutePolicy { automatic, zero_copy, copy };
RoutePolicy route_policy();

// What the decision looks at.  `image` is false for buffers; the image
// fields are read only when it is true.
struct RouteQuestion {
    cl_context context = nullptr;
    const std::vector<cl_device_id> *devices = nullptr;
    ExporterKind exporter = ExporterKind::unknown;
    int fd = -1;  // the layer's dup, for the per-exporter zero-copy check
    bool image = false;
    cl_mem_object_type image_type = 0;
    size_t elem = 0;           // bytes per pixel
    size_t row_pitch = 0;      // of the surface the ICD's image is laid over
    uintptr_t base = 0;        // that surface's first pixel
    bool tiled = false;        // over the layer's linear shadow: no exporter check
};

struct RouteAnswer {
    Route route = Route::copy;
    std::string why;  // empty when nothing stood in the way of the first choice
};

// Asks the ICD (device queries, the per-exporter buffer check of
// layer/import/zero_copy_check.hpp, and for images the cached probe of
// route_probe.hpp); never fails: when in doubt the route is copy.
RouteAnswer decide_route(const RouteQuestion &q);

// For log lines.
const char *route_name(Route route);

}  // namespace cldmabuf
