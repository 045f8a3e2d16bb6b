// Imports the ICD does itself ("never take away what the ICD has").
//
// The layer owns CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR and
// CL_IMPORT_TYPE_DMA_BUF_ARM only where the ICD lacks them.  Every other
// external memory handle type (opaque fd, Win32, ...) goes to the ICD with
// the application's property list untouched; a dma-buf import goes to the
// ICD when it reports DMA_BUF for every device concerned (or, for
// clImportMemoryARM, cl_arm_import_memory_dma_buf), unless
// CLDMABUF_DMABUF_IMPORT=layer or the list uses the layer's own properties
// (CL_MEM_DMA_BUF_*_CLDMABUF); acquire/release of objects the layer did not
// import go to the ICD's own entry points.
//
// The entry classifies the list once (layer/import/request.hpp); these take
// that value.
#pragma once

#include "layer/base/cl_compat.h"
#include "layer/import/request.hpp"

namespace cldmabuf {

// CLDMABUF_DMABUF_IMPORT=icd|layer (read once): who imports a dma-buf when
// the ICD can.  icd (default): the ICD; layer: always the layer.
enum class DmabufImporter { icd, layer };
DmabufImporter dmabuf_importer();

// A handle of a type the layer does not import (opaque fd, Win32, ...): the
// ICD's call with the application's list, unless no device concerned lists
// the type (CL_INVALID_PROPERTY, one log line).
cl_mem icd_handle_buffer(cl_context context, const IcdHandleRequest &request, const cl_mem_properties *properties,
                         cl_mem_flags flags, size_t size, void *host_ptr, cl_int *errcode_ret);
cl_mem icd_handle_image(cl_context context, const IcdHandleRequest &request, const cl_mem_properties *properties,
                        cl_mem_flags flags, const cl_image_format *format, const cl_image_desc *desc, void *host_ptr,
                        cl_int *errcode_ret);

// A dma-buf import the ICD does itself, when it can (above): true means
// "handled", the ICD's result (or refusal) is in *out.
bool native_buffer_import(cl_context context, const DmabufRequest &request, cl_mem_flags flags, size_t size,
                          void *host_ptr, cl_int *errcode_ret, cl_mem *out);
bool native_image_import(cl_context context, const DmabufRequest &request, cl_mem_flags flags,
                         const cl_image_format *format, const cl_image_desc *desc, void *host_ptr,
                         cl_int *errcode_ret, cl_mem *out);
// clImportMemoryARM: first in its entry point, once its list is parsed;
// `type` is the memory type the list names (ArmImportProperties::type, in a
// list the layer refuses too: the ICD judges the list it is given).  True
// means "handled".
bool native_arm_import(cl_context context, cl_import_properties_arm type, cl_mem_flags flags,
                       const cl_import_properties_arm *properties, void *memory, size_t size, cl_int *errcode_ret,
                       cl_mem *out);
// Acquire (true) or release (false) of objects the layer did not import.
// A list that mixes them with the layer's imports is refused
// (CL_INVALID_OPERATION, one log line): the two halves would be two
// commands with no single event to return.
bool native_external_mem_command(bool acquire, cl_command_queue queue, cl_uint num_mem_objects,
                                 const cl_mem *mem_objects, cl_uint num_events, const cl_event *wait_list,
                                 cl_event *event, cl_int *out);

// True when the ICD imports dma-bufs itself for the object (a buffer or
// image the hooks above handed to it).
bool is_native_import(cl_mem mem);

}  // namespace cldmabuf
