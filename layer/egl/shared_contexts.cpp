#include "layer/egl/shared_contexts.hpp"

#include <mutex>
#include <unordered_map>

#include "layer/core/dispatch.hpp"

namespace cldmabuf::egl {
namespace {

std::mutex shares_mutex;
std::unordered_map<cl_context, GlShare> shares;

void CL_CALLBACK on_context_destroyed(cl_context context, void *) {
    std::lock_guard lock(shares_mutex);
    shares.erase(context);
}

}  // namespace

void remember_share(cl_context context, const GlShare &share) {
    {
        std::lock_guard lock(shares_mutex);
        shares[context] = share;
    }
    if (next().clSetContextDestructorCallback)
        next().clSetContextDestructorCallback(context, on_context_destroyed, nullptr);
}

bool find_share(cl_context context, GlShare *out) {
    std::lock_guard lock(shares_mutex);
    auto it = shares.find(context);
    if (it == shares.end()) return false;
    if (out) *out = it->second;
    return true;
}

}  // namespace cldmabuf::egl
