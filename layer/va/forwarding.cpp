#include "layer/va/forwarding.hpp"

#include <mutex>
#include <string>
#include <unordered_map>

#include "layer/core/dispatch.hpp"
#include "layer/core/extension_list.hpp"

namespace cldmabuf::va {

bool icd_has_va(cl_platform_id platform) {
    if (!platform) return false;
    static std::mutex mu;
    static std::unordered_map<cl_platform_id, bool> cache;  // platforms live as long as the process
    {
        std::lock_guard lock(mu);
        if (auto it = cache.find(platform); it != cache.end()) return it->second;
    }
    size_t bytes = 0;
    bool has = false;
    if (next().clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, 0, nullptr, &bytes) == CL_SUCCESS && bytes) {
        std::string list(bytes, '\0');
        if (next().clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, bytes, list.data(), nullptr) == CL_SUCCESS)
            has = extension_listed(list.c_str(), "cl_intel_va_api_media_sharing");
    }
    std::lock_guard lock(mu);
    cache[platform] = has;
    return has;
}

void *icd_function(cl_platform_id platform, const char *name) {
    if (!platform || !next().clGetExtensionFunctionAddressForPlatform) return nullptr;
    return next().clGetExtensionFunctionAddressForPlatform(platform, name);
}

cl_platform_id platform_of_device(cl_device_id device) {
    cl_platform_id platform = nullptr;
    if (next().clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr) != CL_SUCCESS)
        return nullptr;
    return platform;
}

cl_platform_id platform_of_context(cl_context context) {
    cl_device_id device = nullptr;
    size_t bytes = 0;
    if (next().clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, nullptr, &bytes) != CL_SUCCESS || bytes == 0)
        return nullptr;
    std::string buf(bytes, '\0');
    if (next().clGetContextInfo(context, CL_CONTEXT_DEVICES, bytes, buf.data(), nullptr) != CL_SUCCESS) return nullptr;
    device = *reinterpret_cast<const cl_device_id *>(buf.data());
    return platform_of_device(device);
}

cl_context context_of_queue(cl_command_queue queue) {
    cl_context context = nullptr;
    if (next().clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr) != CL_SUCCESS)
        return nullptr;
    return context;
}

}  // namespace cldmabuf::va
