// Import of a dma-buf fd into a buffer (clCreateBufferWithProperties).  The
// import pipeline's own headers are included below, so that the parts of the
// layer that include this header get the pipeline's names from it.
#pragma once

#include "layer/base/cl_compat.h"
#include "layer/icd/devices.hpp"
#include "layer/import/record.hpp"
#include "layer/core/refuse.hpp"
#include "layer/import/route.hpp"
#include "layer/core/registry.hpp"
#include "layer/import/request.hpp"

namespace cldmabuf {

// A dma-buf buffer import (clCreateBufferWithProperties, classified by the
// entry): the ICD's own import where it does them (layer/import/native.hpp),
// else the layer's.  The allocator (layer/alloc) imports its dma-bufs here.
cl_mem import_dmabuf_buffer(cl_context context, DmabufRequest request, cl_mem_flags flags, size_t size,
                            void *host_ptr, cl_int *errcode_ret);
// The layer's clCreateSubBuffer.
cl_mem CL_API_CALL create_sub_buffer(cl_mem parent, cl_mem_flags flags, cl_buffer_create_type type,
                                     const void *info, cl_int *errcode_ret);

}  // namespace cldmabuf
