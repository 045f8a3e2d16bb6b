// What clGetMemObjectInfo / clGetImageInfo answer about an import: the
// object as the application created it (its flags and property list, no
// host pointer, no internal buffer under an image) and the layer's own
// CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF.  Everything else goes to the ICD.
#pragma once

#include "layer/base/cl_compat.h"

namespace cldmabuf {

cl_int CL_API_CALL import_mem_object_info(cl_mem mem, cl_mem_info name, size_t size, void *value,
                                          size_t *size_ret);
cl_int CL_API_CALL import_image_info(cl_mem image, cl_image_info name, size_t size, void *value,
                                     size_t *size_ret);

}  // namespace cldmabuf
