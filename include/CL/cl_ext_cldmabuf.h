/* cldmabuf's public additions to the OpenCL API.
 *
 * Layer-specific properties and flags understood by libcldmabuf.so on top of
 * cl_khr_external_memory / cl_khr_external_memory_dma_buf.  Values come from
 * a range no Khronos header uses. */
#ifndef CL_EXT_CLDMABUF_H
#define CL_EXT_CLDMABUF_H

#include <CL/cl.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* CL_EXT_CLDMABUF_H */
