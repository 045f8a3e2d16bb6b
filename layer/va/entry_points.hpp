// cl_intel_va_api_media_sharing over dma-buf (docs/va-api.md): the entry
// points the layer hands out and the slots it has a say in.  Where the
// platform's ICD has the extension itself (Intel's NEO), every call is
// forwarded to it untouched (layer/va/forwarding.hpp).
#pragma once

#include "layer/base/cl_compat.h"
#include "layer/va/va_abi.hpp"

namespace cldmabuf::va {

// Whether the layer offers the extension: libva loads (layer/va/libva.hpp).
bool offered();

// devices.cpp
cl_int CL_API_CALL get_device_ids_from_media_adapter(cl_platform_id platform, cl_va_api_device_source_intel source,
                                                     void *adapter, cl_va_api_device_set_intel set,
                                                     cl_uint num_entries, cl_device_id *devices,
                                                     cl_uint *num_devices);
// surface_import.cpp
cl_mem CL_API_CALL create_from_media_surface(cl_context context, cl_mem_flags flags, VASurfaceID *surface,
                                             cl_uint plane, cl_int *errcode_ret);
// acquire_release.cpp
cl_int CL_API_CALL enqueue_acquire_media_surfaces(cl_command_queue queue, cl_uint num_objects, const cl_mem *mems,
                                                  cl_uint num_events, const cl_event *wait_list, cl_event *event);
cl_int CL_API_CALL enqueue_release_media_surfaces(cl_command_queue queue, cl_uint num_objects, const cl_mem *mems,
                                                  cl_uint num_events, const cl_event *wait_list, cl_event *event);

// format_query.cpp: clGetSupportedVA_APIMediaSurfaceFormatsINTEL (cl_intel_sharing_format_query)
cl_int CL_API_CALL get_supported_media_surface_formats(cl_context context, cl_mem_flags flags,
                                                       cl_mem_object_type image_type, cl_uint plane,
                                                       cl_uint num_entries, ImageFormat *formats,
                                                       cl_uint *num_formats);

// contexts.cpp: the VA properties are taken off the list before `downstream`
// (the next feature's entry, or the ICD's) sees it.
using CreateContextFn = cl_context(CL_API_CALL *)(const cl_context_properties *, cl_uint, const cl_device_id *,
                                                  void(CL_CALLBACK *)(const char *, const void *, size_t, void *),
                                                  void *, cl_int *);
using CreateContextFromTypeFn = cl_context(CL_API_CALL *)(const cl_context_properties *, cl_device_type,
                                                          void(CL_CALLBACK *)(const char *, const void *, size_t,
                                                                              void *),
                                                          void *, cl_int *);
cl_context create_context(const cl_context_properties *properties, cl_uint num_devices, const cl_device_id *devices,
                          void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *), void *user_data,
                          cl_int *errcode_ret, CreateContextFn downstream);
cl_context create_context_from_type(const cl_context_properties *properties, cl_device_type type,
                                    void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                    void *user_data, cl_int *errcode_ret, CreateContextFromTypeFn downstream);
// CL_CONTEXT_PROPERTIES of a VA context: the application's list.  False: not ours to answer.
bool context_info(cl_context context, cl_context_info name, size_t size, void *value, size_t *size_ret,
                  cl_int *err);

// queries.cpp: CL_MEM_VA_API_MEDIA_SURFACE_INTEL, CL_IMAGE_VA_API_PLANE_INTEL
// (and CL_MEM_PROPERTIES empty) on the layer's VA images.  False: not ours.
bool mem_object_info(cl_mem mem, cl_mem_info name, size_t size, void *value, size_t *size_ret, cl_int *err);
bool image_info(cl_mem mem, cl_image_info name, size_t size, void *value, size_t *size_ret, cl_int *err);

}  // namespace cldmabuf::va
