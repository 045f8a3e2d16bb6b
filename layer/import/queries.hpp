// What clGetMemObjectInfo / clGetImageInfo answer about an import: the
// object as the application created it (its flags and property list, no
// host pointer, no internal buffer under an image) and the layer's own
// CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF.  Everything else goes to the ICD.
#pragma once

#include "CL/cl_ext_cldmabuf.h"
#include "layer/base/cl_compat.h"
#include "layer/base/name_filter.hpp"

namespace cldmabuf {

// The names the layer answers for an import or an allocation (the rest is the ICD's).
inline constexpr cl_uint import_mem_names[] = {CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, CL_MEM_DMA_BUF_EXPORTER_CLDMABUF,
                                       CL_MEM_DMA_BUF_FD_CLDMABUF,          CL_MEM_PROPERTIES,
                                       CL_MEM_FLAGS,                        CL_MEM_HOST_PTR,
                                       CL_MEM_ASSOCIATED_MEMOBJECT};
inline constexpr NameFilter import_mem_name(import_mem_names);
// The answer for a name import_mem_name may hold (out of line; names it does
// not answer go to the ICD).
cl_int import_mem_object_answer(cl_mem mem, cl_mem_info name, size_t size, void *value, size_t *size_ret);

cl_int CL_API_CALL import_mem_object_info(cl_mem mem, cl_mem_info name, size_t size, void *value,
                                          size_t *size_ret);
cl_int CL_API_CALL import_image_info(cl_mem image, cl_image_info name, size_t size, void *value,
                                     size_t *size_ret);

}  // namespace cldmabuf
