#include "layer/core/context_devices.hpp"

#include <mutex>
#include <unordered_map>

namespace cldmabuf {
namespace {

struct Records {
    std::mutex lock;
    std::unordered_map<cl_context, std::vector<cl_device_id>> devices;
};

// Never destroyed: an application may release a context from an atexit
// handler after this library's static destructors ran.
Records &records() {
    static Records *r = new Records;
    return *r;
}

}  // namespace

void remember_context_devices(cl_context context, const cl_device_id *devices, cl_uint n) {
    if (!context || !devices || n == 0) return;
    Records &r = records();
    std::lock_guard<std::mutex> hold(r.lock);
    r.devices[context].assign(devices, devices + n);
}

void forget_context_devices(cl_context context) {
    Records &r = records();
    std::lock_guard<std::mutex> hold(r.lock);
    r.devices.erase(context);
}

bool recorded_context_devices(cl_context context, std::vector<cl_device_id> *out) {
    Records &r = records();
    std::lock_guard<std::mutex> hold(r.lock);
    auto it = r.devices.find(context);
    if (it == r.devices.end()) return false;
    *out = it->second;
    return true;
}

}  // namespace cldmabuf
