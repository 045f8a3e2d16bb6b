#include "layer/egl/object_records.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "layer/core/dispatch.hpp"

namespace cldmabuf::egl {
namespace {

struct Tracked {
    EglObject object;
    uint64_t token = 0;  // the destructor callback that owns this record
};

std::mutex objects_mutex;
std::unordered_map<cl_mem, Tracked> objects;
uint64_t next_token = 1;

// The callback's own copy of the record: NVIDIA calls destructor callbacks
// late and may have given the handle to a newer object meanwhile, whose
// record replaced this one's.  The record goes only while it is
// this object's; the linear copy and the EGLImage destroyed are always this
// object's own.
struct Owned {
    uint64_t token;
    EglObject object;
};

// The ICD no longer uses the import's dma-buf: the linear copy and the
// EGLImage the layer made for it can go.
void CL_CALLBACK on_mem_destroyed(cl_mem mem, void *data) {
    std::unique_ptr<Owned> own(static_cast<Owned *>(data));
    {
        std::lock_guard lock(objects_mutex);
        auto it = objects.find(mem);
        if (it != objects.end() && it->second.token == own->token) objects.erase(it);
    }
    const EglObject &object = own->object;
    const EglApi *egl = egl_api();
    if (!egl) return;
    if (object.copy) destroy_linear_copy(*egl, object.display, object.copy.get());
    if (object.own_image && egl->DestroyImageKHR) egl->DestroyImageKHR(object.display, object.image);
}

}  // namespace

bool track_object(IcdMem &mem, const EglObject &object) {
    auto own = std::make_unique<Owned>(Owned{0, object});
    {
        std::lock_guard lock(objects_mutex);
        own->token = next_token++;
        objects[mem.get()] = Tracked{object, own->token};
    }
    if (next().clSetMemObjectDestructorCallback(mem.get(), on_mem_destroyed, own.get()) == CL_SUCCESS) {
        own.release();  // the callback's now
        return true;
    }
    {
        std::lock_guard lock(objects_mutex);
        auto it = objects.find(mem.get());
        if (it != objects.end() && it->second.token == own->token) objects.erase(it);
    }
    mem.reset();
    return false;
}

bool find_object(cl_mem mem, EglObject *out) {
    std::lock_guard lock(objects_mutex);
    auto it = objects.find(mem);
    if (it == objects.end()) return false;
    if (out) *out = it->second.object;
    return true;
}

}  // namespace cldmabuf::egl
