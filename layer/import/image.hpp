// Import of a dma-buf fd into an image (clCreateImageWithProperties), with
// the layer's own properties from include/CL/cl_ext_cldmabuf.h.  See
// docs/images.md.
#pragma once

#include "layer/base/cl_compat.h"
#include "layer/import/image_checks.hpp"

namespace cldmabuf {

// The layer's clCreateImageWithProperties.
cl_mem CL_API_CALL create_image_with_properties(cl_context context, const cl_mem_properties *properties,
                                                cl_mem_flags flags, const cl_image_format *format,
                                                const cl_image_desc *desc, void *host_ptr, cl_int *errcode_ret);

}  // namespace cldmabuf
