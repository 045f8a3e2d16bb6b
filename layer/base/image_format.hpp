// Facts of an OpenCL image format that need no ICD: what every image path
// (import, allocation, blitter copies) asks.
#pragma once

#include <cstddef>

#include "layer/base/cl_compat.h"

namespace cldmabuf {

// Bytes per pixel of an image format, 0 when the order/type pair is not one
// the OpenCL spec defines.
size_t image_element_size(const cl_image_format &format);

}  // namespace cldmabuf
