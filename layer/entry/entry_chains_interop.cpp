// The slots two interop features have a say in, in one written order:
// VA-API sharing (layer/va/) takes its properties and answers its queries
// first, then EGL/GL sharing (layer/egl/, where built and not
// CLDMABUF_EGL=off), then the import's queries (layer/import/queries.cpp)
// or the ICD.  A context created so is then recorded with the devices the
// application named (layer/core/context_devices.hpp: PoCL reports a context
// of sub-devices as their parent), which the import, acquire/release and
// semaphore checks use; clReleaseContext is in entry_context.cpp.
#include "layer/entry/entry_chains.hpp"

#include "layer/core/context_devices.hpp"
#include "layer/base/name_filter.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/import/queries.hpp"
#include "layer/va/entry_points.hpp"
#if CLDMABUF_EGL_INTEROP
#include "layer/egl/egl.hpp"
#include "layer/egl/entry_points.hpp"
#endif

namespace cldmabuf::chain {
namespace {

bool egl_on() {
#if CLDMABUF_EGL_INTEROP
    return egl_mode() != EglMode::off;
#else
    return false;
#endif
}

cl_context CL_API_CALL after_va_create_context(const cl_context_properties *properties, cl_uint num_devices,
                                               const cl_device_id *devices,
                                               void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                               void *user_data, cl_int *errcode_ret) {
    cl_context context = nullptr;
#if CLDMABUF_EGL_INTEROP
    if (egl_on())
        context = egl::create_context(properties, num_devices, devices, notify, user_data, errcode_ret);
    else
#endif
        context = next().clCreateContext(properties, num_devices, devices, notify, user_data, errcode_ret);
    if (context) remember_context_devices(context, devices, num_devices);
    return context;
}

cl_context CL_API_CALL after_va_create_context_from_type(const cl_context_properties *properties,
                                                         cl_device_type type,
                                                         void(CL_CALLBACK *notify)(const char *, const void *,
                                                                                   size_t, void *),
                                                         void *user_data, cl_int *errcode_ret) {
    cl_context context = nullptr;
#if CLDMABUF_EGL_INTEROP
    if (egl_on())
        context = egl::create_context_from_type(properties, type, notify, user_data, errcode_ret);
    else
#endif
        context = next().clCreateContextFromType(properties, type, notify, user_data, errcode_ret);
    // Root devices only: the ICD's CL_CONTEXT_DEVICES is right.  A record a
    // freed context left at this address must not stand for this one.
    if (context) forget_context_devices(context);
    return context;
}

constexpr cl_uint va_mem_names[] = {CL_MEM_VA_API_MEDIA_SURFACE_INTEL};
constexpr NameFilter interop_mem_name = import_mem_name.with(NameFilter(va_mem_names));

// A name one of the two may answer: VA-API's, then the import's (which gives
// the ICD the names it does not answer).
[[gnu::noinline]] cl_int va_mem_object_info(cl_mem mem, cl_mem_info name, size_t size, void *value,
                                            size_t *size_ret) {
    if (cl_int err; name == CL_MEM_VA_API_MEDIA_SURFACE_INTEL && va::mem_object_info(mem, name, size, value, size_ret, &err))
        return err;
    return import_mem_object_answer(mem, name, size, value, size_ret);
}

[[gnu::noinline]] cl_int va_image_info(cl_mem image, cl_image_info name, size_t size, void *value,
                                       size_t *size_ret) {
    if (cl_int err; va::image_info(image, name, size, value, size_ret, &err)) return err;
    return import_image_info(image, name, size, value, size_ret);
}

}  // namespace

cl_context CL_API_CALL create_context(const cl_context_properties *properties, cl_uint num_devices,
                                      const cl_device_id *devices,
                                      void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                      void *user_data, cl_int *errcode_ret) {
    return va::create_context(properties, num_devices, devices, notify, user_data, errcode_ret,
                              after_va_create_context);
}

cl_context CL_API_CALL create_context_from_type(const cl_context_properties *properties, cl_device_type type,
                                                void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                                void *user_data, cl_int *errcode_ret) {
    return va::create_context_from_type(properties, type, notify, user_data, errcode_ret,
                                        after_va_create_context_from_type);
}

cl_int CL_API_CALL get_context_info(cl_context context, cl_context_info name, size_t size, void *value,
                                    size_t *size_ret) {
    if (cl_int err; va::context_info(context, name, size, value, size_ret, &err)) return err;
#if CLDMABUF_EGL_INTEROP
    if (egl_on()) return egl::get_context_info(context, name, size, value, size_ret);
#endif
    return next().clGetContextInfo(context, name, size, value, size_ret);
}

// Every name but the import's and VA-API's goes straight to the ICD after
// one bit test of both features' names (layer/base/name_filter.hpp: the
// +5-instruction pass-through, `bench-passthrough`'s get_mem_info_size); the
// answers are out of line.
cl_int CL_API_CALL mem_object_info(cl_mem mem, cl_mem_info name, size_t size, void *value, size_t *size_ret) {
    if (interop_mem_name.may_be_ours(name)) return va_mem_object_info(mem, name, size, value, size_ret);
    return next().clGetMemObjectInfo(mem, name, size, value, size_ret);
}

cl_int CL_API_CALL image_info(cl_mem image, cl_image_info name, size_t size, void *value, size_t *size_ret) {
    if (__builtin_expect(name == CL_IMAGE_VA_API_PLANE_INTEL, 0))
        return va_image_info(image, name, size, value, size_ret);
    return import_image_info(image, name, size, value, size_ret);
}

}  // namespace cldmabuf::chain
