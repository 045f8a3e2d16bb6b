// The slots more than one feature has a say in (layer/entry/entry_chains.cpp): one
// entry function each, which calls the features' checks in a written order,
// then the implementation or the ICD.  layer/entry/dispatch_table.cpp puts them in
// the table.
#pragma once

#include "layer/base/cl_compat.h"

// Hidden: layer/queue/passthrough.hpp jumps to them by their address
// relative to the code (a preemptible symbol would need the PLT).
#pragma GCC visibility push(hidden)
namespace cldmabuf::chain {

// clCreate{Buffer,Image}WithProperties (layer/entry/entry_mem_create.cpp):
// the property list classified once, then the allocator, the import, the
// ICD's own import or the ICD.
cl_mem CL_API_CALL create_buffer_with_properties(cl_context context, const cl_mem_properties *properties,
                                                 cl_mem_flags flags, size_t size, void *host_ptr,
                                                 cl_int *errcode_ret);
cl_mem CL_API_CALL create_image_with_properties(cl_context context, const cl_mem_properties *properties,
                                                cl_mem_flags flags, const cl_image_format *format,
                                                const cl_image_desc *desc, void *host_ptr, cl_int *errcode_ret);

cl_int CL_API_CALL read_buffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset, size_t size, void *ptr,
                               cl_uint n, const cl_event *waits, cl_event *event);
cl_int CL_API_CALL read_buffer_rect(cl_command_queue q, cl_mem b, cl_bool blocking, const size_t *buffer_origin,
                                    const size_t *host_origin, const size_t *region, size_t buffer_row_pitch,
                                    size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
                                    void *ptr, cl_uint n, const cl_event *waits, cl_event *event);
cl_int CL_API_CALL write_buffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset, size_t size,
                                const void *ptr, cl_uint n, const cl_event *waits, cl_event *event);
cl_int CL_API_CALL write_buffer_rect(cl_command_queue q, cl_mem b, cl_bool blocking, const size_t *buffer_origin,
                                     const size_t *host_origin, const size_t *region, size_t buffer_row_pitch,
                                     size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
                                     const void *ptr, cl_uint n, const cl_event *waits, cl_event *event);
cl_int CL_API_CALL fill_buffer(cl_command_queue q, cl_mem b, const void *pattern, size_t pattern_size, size_t offset,
                               size_t size, cl_uint n, const cl_event *waits, cl_event *event);
cl_int CL_API_CALL write_image(cl_command_queue q, cl_mem image, cl_bool blocking, const size_t *origin,
                               const size_t *region, size_t row_pitch, size_t slice_pitch, const void *ptr, cl_uint n,
                               const cl_event *waits, cl_event *event);
cl_int CL_API_CALL fill_image(cl_command_queue q, cl_mem image, const void *color, const size_t *origin,
                              const size_t *region, cl_uint n, const cl_event *waits, cl_event *event);
cl_int CL_API_CALL copy_buffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset, size_t dst_offset,
                               size_t size, cl_uint n, const cl_event *waits, cl_event *event);
cl_int CL_API_CALL copy_buffer_rect(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *src_origin,
                                    const size_t *dst_origin, const size_t *region, size_t src_row_pitch,
                                    size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch, cl_uint n,
                                    const cl_event *waits, cl_event *event);
cl_int CL_API_CALL copy_image(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *src_origin,
                              const size_t *dst_origin, const size_t *region, cl_uint n, const cl_event *waits,
                              cl_event *event);
cl_int CL_API_CALL copy_image_to_buffer(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *src_origin,
                                        const size_t *region, size_t dst_offset, cl_uint n, const cl_event *waits,
                                        cl_event *event);
cl_int CL_API_CALL copy_buffer_to_image(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset,
                                        const size_t *dst_origin, const size_t *region, cl_uint n,
                                        const cl_event *waits, cl_event *event);
void *CL_API_CALL map_buffer(cl_command_queue q, cl_mem b, cl_bool blocking, cl_map_flags flags, size_t offset,
                             size_t size, cl_uint n, const cl_event *waits, cl_event *event, cl_int *errcode_ret);
void *CL_API_CALL map_image(cl_command_queue q, cl_mem image, cl_bool blocking, cl_map_flags flags,
                            const size_t *origin, const size_t *region, size_t *row_pitch, size_t *slice_pitch,
                            cl_uint n, const cl_event *waits, cl_event *event, cl_int *errcode_ret);
cl_int CL_API_CALL unmap_mem_object(cl_command_queue q, cl_mem mem, void *mapped_ptr, cl_uint n,
                                    const cl_event *waits, cl_event *event);
cl_int CL_API_CALL acquire_external_mem_objects(cl_command_queue q, cl_uint num_mems, const cl_mem *mems, cl_uint n,
                                                const cl_event *waits, cl_event *event);
cl_int CL_API_CALL release_external_mem_objects(cl_command_queue q, cl_uint num_mems, const cl_mem *mems, cl_uint n,
                                                const cl_event *waits, cl_event *event);

// layer/entry/entry_context.cpp: EGL's context creation (when on), then the record
// of the context's devices (layer/core/context_devices.hpp).
// Interop slots (layer/entry/entry_chains_interop.cpp): VA-API first, then EGL/GL
// sharing where it is built and on, then the import's queries or the ICD.
cl_context CL_API_CALL create_context(const cl_context_properties *properties, cl_uint num_devices,
                                      const cl_device_id *devices,
                                      void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                      void *user_data, cl_int *errcode_ret);
cl_context CL_API_CALL create_context_from_type(const cl_context_properties *properties, cl_device_type type,
                                                void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                                void *user_data, cl_int *errcode_ret);
cl_int CL_API_CALL release_context(cl_context context);
cl_int CL_API_CALL get_context_info(cl_context context, cl_context_info name, size_t size, void *value,
                                    size_t *size_ret);
cl_int CL_API_CALL mem_object_info(cl_mem mem, cl_mem_info name, size_t size, void *value, size_t *size_ret);
cl_int CL_API_CALL image_info(cl_mem image, cl_image_info name, size_t size, void *value, size_t *size_ret);

}  // namespace cldmabuf::chain
#pragma GCC visibility pop
