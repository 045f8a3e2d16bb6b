// The context slots: clCreateContext, clCreateContextFromType and
// clReleaseContext.  Two features have a say: GL/EGL interop (layer/egl/,
// contexts with CL_GL_CONTEXT_KHR / CL_EGL_DISPLAY_KHR, unless CLDMABUF_EGL=off)
// creates the context, then the layer records the devices the application
// named (layer/core/context_devices.hpp: PoCL reports a context of
// sub-devices as their parent), which the import, acquire/release and
// semaphore checks use.
#include "layer/entry/entry_chains.hpp"

#include "layer/core/dispatch.hpp"
#include "layer/core/context_devices.hpp"
#if CLDMABUF_EGL_INTEROP
#include "layer/egl/egl.hpp"
#include "layer/egl/entry_points.hpp"
#endif

namespace cldmabuf::chain {

cl_context CL_API_CALL create_context(const cl_context_properties *properties, cl_uint num_devices,
                                      const cl_device_id *devices,
                                      void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                      void *user_data, cl_int *errcode_ret) {
    cl_context context = nullptr;
#if CLDMABUF_EGL_INTEROP
    if (egl_mode() != EglMode::off)
        context = egl::create_context(properties, num_devices, devices, notify, user_data, errcode_ret);
    else
#endif
        context = next().clCreateContext(properties, num_devices, devices, notify, user_data, errcode_ret);
    if (context) remember_context_devices(context, devices, num_devices);
    return context;
}

cl_context CL_API_CALL create_context_from_type(const cl_context_properties *properties, cl_device_type type,
                                                void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                                void *user_data, cl_int *errcode_ret) {
    cl_context context = nullptr;
#if CLDMABUF_EGL_INTEROP
    if (egl_mode() != EglMode::off)
        context = egl::create_context_from_type(properties, type, notify, user_data, errcode_ret);
    else
#endif
        context = next().clCreateContextFromType(properties, type, notify, user_data, errcode_ret);
    // Root devices only: the ICD's CL_CONTEXT_DEVICES is right.  A record a
    // freed context left at this address must not stand for this one.
    if (context) forget_context_devices(context);
    return context;
}

cl_int CL_API_CALL release_context(cl_context context) {
    // The last release frees the context and its address may be handed out
    // again; a reference the ICD or the layer holds keeps the record (it is
    // replaced when a new context takes the address, see above).
    cl_uint refs = 0;
    const bool last = next().clGetContextInfo(context, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, nullptr) ==
                          CL_SUCCESS &&
                      refs == 1;
    const cl_int err = next().clReleaseContext(context);
    if (err == CL_SUCCESS && last) forget_context_devices(context);
    return err;
}

}  // namespace cldmabuf::chain
