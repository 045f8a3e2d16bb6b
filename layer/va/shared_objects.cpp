#include "layer/va/shared_objects.hpp"

#include <mutex>
#include <unordered_map>

#include "layer/core/dispatch.hpp"

namespace cldmabuf::va {
namespace {

std::mutex mu;
std::unordered_map<cl_context, VaContext> contexts;
std::unordered_map<cl_mem, std::shared_ptr<VaImage>> images;

void CL_CALLBACK context_gone(cl_context context, void *) {
    std::lock_guard lock(mu);
    contexts.erase(context);
}

// The entry is dropped only if it is still this object's.
void CL_CALLBACK image_gone(cl_mem mem, void *user) {
    std::lock_guard lock(mu);
    auto it = images.find(mem);
    if (it != images.end() && it->second.get() == user) images.erase(it);
}

}  // namespace

void remember_context(cl_context context, const VaContext &info) {
    {
        std::lock_guard lock(mu);
        contexts[context] = info;
    }
    // A new context at a dead one's address replaces its entry above; the
    // callback (OpenCL 3.0) drops it early where the ICD has one.
    if (next().clSetContextDestructorCallback) next().clSetContextDestructorCallback(context, context_gone, nullptr);
}

bool find_context(cl_context context, VaContext *out) {
    std::lock_guard lock(mu);
    auto it = contexts.find(context);
    if (it == contexts.end()) return false;
    if (out) *out = it->second;
    return true;
}

void remember_image(cl_mem mem, const std::shared_ptr<VaImage> &image) {
    {
        std::lock_guard lock(mu);
        images[mem] = image;
    }
    next().clSetMemObjectDestructorCallback(mem, image_gone, image.get());
}

std::shared_ptr<VaImage> find_image(cl_mem mem) {
    std::shared_ptr<VaImage> image;
    {
        std::lock_guard lock(mu);
        auto it = images.find(mem);
        if (it == images.end()) return nullptr;
        image = it->second;
    }
    if (!image->layer_import) return image;
    std::shared_ptr<Import> import = image->import.lock();
    if (!import || imports().find(mem) != import) return nullptr;
    return image;
}

bool flip_acquired(const std::vector<std::shared_ptr<VaImage>> &list, bool set) {
    std::lock_guard lock(mu);
    for (const auto &image : list)
        if (image->acquired == set) return false;
    for (const auto &image : list) image->acquired = set;
    return true;
}

}  // namespace cldmabuf::va
