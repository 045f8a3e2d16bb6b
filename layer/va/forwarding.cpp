#include "layer/va/forwarding.hpp"

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/icd/devices.hpp"
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

}  // namespace cldmabuf::va
