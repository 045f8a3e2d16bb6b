/* Fallbacks for OpenCL headers older than the layer needs.
 *
 * Debian 12's opencl-c-headers (3.0~2023.02.06) predate
 * CL_MEM_DEVICE_HANDLE_LIST_KHR (it names 0x2051 CL_DEVICE_HANDLE_LIST_KHR),
 * CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR and
 * the cl_loader_layers 1.0.1 entry points.  Values are from the Khronos
 * registry (OpenCL-Docs xml/cl.xml). */
#ifndef CLDMABUF_CL_COMPAT_H
#define CLDMABUF_CL_COMPAT_H

#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_icd.h>
#include <CL/cl_layer.h>

#ifndef CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR
#define CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR 0x2067
#endif
#ifndef CL_MEM_DEVICE_HANDLE_LIST_KHR
#define CL_MEM_DEVICE_HANDLE_LIST_KHR 0x2051
#endif
#ifndef CL_MEM_DEVICE_HANDLE_LIST_END_KHR
#define CL_MEM_DEVICE_HANDLE_LIST_END_KHR 0
#endif
#ifndef CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR
#define CL_DEVICE_EXTERNAL_MEMORY_IMPORT_ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR 0x2052
#endif
#ifndef CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR
#define CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR 0x2044
#endif
#ifndef CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR
#define CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR 0x204F
#endif
#ifndef CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR
#define CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR 0x2047
#endif
#ifndef CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR
#define CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR 0x2048
#endif

/* cl_loader_layers 1.0.1 (OpenCL-Docs extensions/cl_loader_layers.asciidoc). */
#ifndef CL_LAYER_NAME
#define CL_LAYER_NAME 0x4241
#endif
#if !defined(CL_LAYER_PROPERTIES_LIST_END)
typedef intptr_t cl_layer_properties;
#define CL_LAYER_PROPERTIES_LIST_END ((cl_layer_properties)0)
#define CLDMABUF_DECLARE_LAYER_PROPERTIES_API 1
#endif

#ifndef CL_VERSION_MAJOR_BITS_KHR
#define CL_MAKE_VERSION_KHR(major, minor, patch) \
    ((((major) & 0x3FFu) << 22) | (((minor) & 0x3FFu) << 12) | ((patch) & 0xFFFu))
#endif

#endif /* CLDMABUF_CL_COMPAT_H */
