// Import of a dma-buf fd into an image (clCreateImageWithProperties), with
// the layer's own properties from include/CL/cl_ext_cldmabuf.h.  See
// docs/images.md.
#pragma once

#include "layer/base/cl_compat.h"
#include "layer/import/image_checks.hpp"
#include "layer/import/request.hpp"

namespace cldmabuf {

// A dma-buf image import (clCreateImageWithProperties, classified by the
// entry): the ICD's own import where it does them (layer/import/native.hpp),
// else the layer's.  The allocator (layer/alloc) imports its dma-bufs here.
cl_mem import_dmabuf_image(cl_context context, DmabufRequest request, cl_mem_flags flags,
                           const cl_image_format *format, const cl_image_desc *desc, void *host_ptr,
                           cl_int *errcode_ret);

}  // namespace cldmabuf
