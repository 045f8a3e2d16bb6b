#include "layer/egl/forwarding.hpp"

#include "layer/core/dispatch.hpp"
#include "layer/egl/egl.hpp"
#include "layer/icd/devices.hpp"
#include "layer/icd/profile.hpp"

namespace cldmabuf::egl {

cl_platform_id context_platform(cl_context context) {
    cl_device_id device = nullptr;
    if (next().clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof device, &device, nullptr) != CL_SUCCESS &&
        !device)
        return nullptr;
    return cldmabuf::device_platform(device);
}

cl_platform_id device_platform(cl_device_id device) { return cldmabuf::device_platform(device); }

cl_context queue_context(cl_command_queue queue) {
    cl_context context = nullptr;
    if (next().clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr) != CL_SUCCESS)
        return nullptr;
    return context;
}

cl_context mem_context(cl_mem mem) {
    cl_context context = nullptr;
    if (next().clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof context, &context, nullptr) != CL_SUCCESS)
        return nullptr;
    return context;
}

bool icd_egl_image(cl_platform_id platform) {
    return egl_mode() != EglMode::force && platform && profile_native_egl_image(platform);
}

bool icd_gl_sharing(cl_platform_id platform) {
    return egl_mode() != EglMode::force && platform && profile_native_gl_sharing(platform);
}

bool forward_gl(cl_context context) { return icd_gl_sharing(context_platform(context)); }

}  // namespace cldmabuf::egl
