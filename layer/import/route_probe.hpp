// The image route probe: the one place an import call builds a command
// queue of its own.
//
// Why it cannot be avoided without a change of behaviour: whether an ICD
// keeps a CL_MEM_USE_HOST_PTR image (or an image over a USE_HOST_PTR
// buffer) in place is not in any device query; PoCL 3.1, for one, keeps
// its own storage for some image types and not others.  Only a device-side
// read after a host write shows it, and a device-side read needs a queue.
// The route must be known before the ICD's image exists (it is created
// with the route's flags and host pointer) and is answered at once by
// CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, so the probe cannot wait for the
// application's first queue.  It runs on the layer's own small image over
// ordinary memory, never on the dma-buf, and is cached per (root device,
// route) for the process: at most twice per device.
#pragma once

#include "layer/base/cl_compat.h"
#include "layer/core/registry.hpp"

namespace cldmabuf {

// True when `route` (host_ptr or image_from_buffer) keeps a host write
// visible to a device-side copy out of the image on `device`.
bool probe_route_in_place(cl_context context, cl_device_id device, Route route);

}  // namespace cldmabuf
