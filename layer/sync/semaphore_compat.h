/* Names of cl_khr_semaphore 1.0 / cl_khr_external_semaphore_sync_fd 1.0.1
 * that Debian 12's opencl-c-headers (3.0~2023.02.06, the 0.9 drafts) lack.
 * Values from the Khronos registry (OpenCL-Docs xml/cl.xml). */
#ifndef CLDMABUF_SYNC_SEMAPHORE_COMPAT_H
#define CLDMABUF_SYNC_SEMAPHORE_COMPAT_H

#include "layer/base/cl_compat.h"

#ifndef CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR
#define CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR 0x2053
#endif
#ifndef CL_SEMAPHORE_DEVICE_HANDLE_LIST_END_KHR
#define CL_SEMAPHORE_DEVICE_HANDLE_LIST_END_KHR 0
#endif
#ifndef CL_SEMAPHORE_EXPORTABLE_KHR
#define CL_SEMAPHORE_EXPORTABLE_KHR 0x2054
#endif
#ifndef CL_SEMAPHORE_HANDLE_SYNC_FD_KHR
#define CL_SEMAPHORE_HANDLE_SYNC_FD_KHR 0x2058
#endif
#ifndef CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR
#define CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR 0x2055
#endif
#ifndef cl_khr_external_semaphore_sync_fd_reimport
typedef cl_properties cl_semaphore_reimport_properties_khr;
#define cl_khr_external_semaphore_sync_fd_reimport 1
#endif

#endif /* CLDMABUF_SYNC_SEMAPHORE_COMPAT_H */
