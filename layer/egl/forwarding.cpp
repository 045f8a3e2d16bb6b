#include "layer/egl/forwarding.hpp"

#include <map>
#include <mutex>
#include <string>

#include "layer/core/dispatch.hpp"
#include "layer/egl/egl.hpp"

namespace cldmabuf::egl {
namespace {

struct IcdCaps {
    bool egl_image = false;
    bool gl_sharing = false;
};

// Per platform, asked once: the extension string does not change.
std::mutex caps_mutex;
std::map<cl_platform_id, IcdCaps> caps_cache;

IcdCaps icd_caps(cl_platform_id platform) {
    {
        std::lock_guard lock(caps_mutex);
        if (auto it = caps_cache.find(platform); it != caps_cache.end()) return it->second;
    }
    IcdCaps caps;
    size_t n = 0;
    if (platform && next().clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, 0, nullptr, &n) == CL_SUCCESS) {
        std::string s(n, '\0');
        if (next().clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, n, s.data(), nullptr) == CL_SUCCESS) {
            s = " " + std::string(s.c_str()) + " ";
            caps.egl_image = s.find(" cl_khr_egl_image ") != std::string::npos;
            caps.gl_sharing = s.find(" cl_khr_gl_sharing ") != std::string::npos;
        }
    }
    std::lock_guard lock(caps_mutex);
    caps_cache[platform] = caps;
    return caps;
}

}  // namespace

cl_platform_id context_platform(cl_context context) {
    cl_device_id device = nullptr;
    if (next().clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof device, &device, nullptr) != CL_SUCCESS &&
        !device)
        return nullptr;
    cl_platform_id platform = nullptr;
    next().clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr);
    return platform;
}

cl_platform_id device_platform(cl_device_id device) {
    cl_platform_id platform = nullptr;
    next().clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr);
    return platform;
}

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
    return egl_mode() != EglMode::force && platform && icd_caps(platform).egl_image;
}

bool icd_gl_sharing(cl_platform_id platform) {
    return egl_mode() != EglMode::force && platform && icd_caps(platform).gl_sharing;
}

bool forward_gl(cl_context context) { return icd_gl_sharing(context_platform(context)); }

}  // namespace cldmabuf::egl
