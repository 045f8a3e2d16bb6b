#include "layer/egl/egl_objects.hpp"

#include <mutex>
#include <unordered_map>

#include "layer/dispatch.hpp"

namespace cldmabuf::egl {
namespace {

std::mutex objects_mutex;
std::unordered_map<cl_mem, EglObject> objects;

// The ICD no longer uses the import's dma-buf: the linear copy and the
// EGLImage the layer made for it can go.
void CL_CALLBACK on_mem_destroyed(cl_mem mem, void *) {
    EglObject object;
    {
        std::lock_guard lock(objects_mutex);
        auto it = objects.find(mem);
        if (it == objects.end()) return;
        object = it->second;
        objects.erase(it);
    }
    const EglApi *egl = egl_api();
    if (!egl) return;
    if (object.copy) destroy_linear_copy(*egl, object.display, object.copy.get());
    if (object.own_image && egl->DestroyImageKHR) egl->DestroyImageKHR(object.display, object.image);
}

}  // namespace

bool track_object(cl_mem mem, const EglObject &object) {
    {
        std::lock_guard lock(objects_mutex);
        objects[mem] = object;
    }
    if (next().clSetMemObjectDestructorCallback(mem, on_mem_destroyed, nullptr) == CL_SUCCESS) return true;
    {
        std::lock_guard lock(objects_mutex);
        objects.erase(mem);
    }
    next().clReleaseMemObject(mem);
    return false;
}

bool find_object(cl_mem mem, EglObject *out) {
    std::lock_guard lock(objects_mutex);
    auto it = objects.find(mem);
    if (it == objects.end()) return false;
    if (out) *out = it->second;
    return true;
}

}  // namespace cldmabuf::egl
