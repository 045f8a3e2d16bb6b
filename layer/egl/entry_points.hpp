// layer/egl's entry points, one file per concern; layer/entry/dispatch_table.cpp
// puts them in the dispatch table and hands them out by name.
#pragma once

#include "layer/base/cl_compat.h"

#include <CL/cl_egl.h>
#include <CL/cl_gl.h>

namespace cldmabuf::egl {

// cl_khr_egl_image (egl_image_import.cpp).
cl_mem CL_API_CALL create_from_egl_image(cl_context context, CLeglDisplayKHR display, CLeglImageKHR image,
                                         cl_mem_flags flags, const cl_egl_image_properties_khr *properties,
                                         cl_int *errcode_ret);

// cl_khr_gl_sharing: memory objects (gl_objects.cpp).
cl_mem CL_API_CALL create_from_gl_texture(cl_context context, cl_mem_flags flags, cl_GLenum target,
                                          cl_GLint miplevel, cl_GLuint texture, cl_int *errcode_ret);
cl_mem CL_API_CALL create_from_gl_texture_2d(cl_context context, cl_mem_flags flags, cl_GLenum target,
                                             cl_GLint miplevel, cl_GLuint texture, cl_int *errcode_ret);
cl_mem CL_API_CALL create_from_gl_texture_3d(cl_context context, cl_mem_flags flags, cl_GLenum target,
                                             cl_GLint miplevel, cl_GLuint texture, cl_int *errcode_ret);
cl_mem CL_API_CALL create_from_gl_renderbuffer(cl_context context, cl_mem_flags flags, cl_GLuint renderbuffer,
                                               cl_int *errcode_ret);
cl_mem CL_API_CALL create_from_gl_buffer(cl_context context, cl_mem_flags flags, cl_GLuint buffer,
                                         cl_int *errcode_ret);

// Acquire/release of EGL and GL objects (gl_acquire_release.cpp).
cl_int CL_API_CALL enqueue_acquire_egl_objects(cl_command_queue queue, cl_uint n, const cl_mem *mems,
                                               cl_uint num_events, const cl_event *wait_list, cl_event *event);
cl_int CL_API_CALL enqueue_release_egl_objects(cl_command_queue queue, cl_uint n, const cl_mem *mems,
                                               cl_uint num_events, const cl_event *wait_list, cl_event *event);
cl_int CL_API_CALL enqueue_acquire_gl_objects(cl_command_queue queue, cl_uint n, const cl_mem *mems,
                                              cl_uint num_events, const cl_event *wait_list, cl_event *event);
cl_int CL_API_CALL enqueue_release_gl_objects(cl_command_queue queue, cl_uint n, const cl_mem *mems,
                                              cl_uint num_events, const cl_event *wait_list, cl_event *event);

// Queries: on GL objects (gl_objects.cpp), on GL context properties
// (gl_sharing_contexts.cpp).
cl_int CL_API_CALL get_gl_object_info(cl_mem mem, cl_gl_object_type *type, cl_GLuint *name);
cl_int CL_API_CALL get_gl_texture_info(cl_mem mem, cl_gl_texture_info param, size_t size, void *value,
                                       size_t *size_ret);
cl_int CL_API_CALL get_gl_context_info(const cl_context_properties *properties, cl_gl_context_info name,
                                       size_t size, void *value, size_t *size_ret);

// cl_khr_gl_sharing: contexts (gl_sharing_contexts.cpp).
cl_context CL_API_CALL create_context(const cl_context_properties *properties, cl_uint num_devices,
                                      const cl_device_id *devices,
                                      void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                      void *user_data, cl_int *errcode_ret);
cl_context CL_API_CALL create_context_from_type(const cl_context_properties *properties, cl_device_type type,
                                                void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                                void *user_data, cl_int *errcode_ret);
cl_int CL_API_CALL get_context_info(cl_context context, cl_context_info name, size_t size, void *value,
                                    size_t *size_ret);

// cl_khr_gl_event (gl_event.cpp).
cl_event CL_API_CALL create_event_from_gl_sync(cl_context context, cl_GLsync sync, cl_int *errcode_ret);

}  // namespace cldmabuf::egl
