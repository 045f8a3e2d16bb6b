// clCreateBufferWithProperties / clCreateImageWithProperties with
// CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF (include/CL/cl_ext_cldmabuf.h,
// docs/allocator.md), as the entry classified it (layer/import/request.hpp):
// the layer allocates the memory as a dma-buf (exporter_order ->
// allocate_dmabuf) and imports it through the ordinary import pipeline
// (import_dmabuf_buffer / _image, layer/import/) as if the application had
// passed the fd, with the import owning that fd.  A refusal before the import logs one line
// here; a refusal of the import is the import's one line; either way the new
// dma-buf is closed again.
#pragma once

#include "layer/base/cl_compat.h"
#include "layer/import/request.hpp"

namespace cldmabuf {

cl_mem create_allocated_buffer(cl_context context, const AllocationRequest &request, cl_mem_flags flags,
                               size_t size, void *host_ptr, cl_int *errcode_ret);
// Linear 2D images only (the pitch is image_row_pitch, or the row's bytes).
cl_mem create_allocated_image(cl_context context, const AllocationRequest &request, cl_mem_flags flags,
                              const cl_image_format *format, const cl_image_desc *desc, void *host_ptr,
                              cl_int *errcode_ret);

}  // namespace cldmabuf
