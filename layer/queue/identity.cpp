#include "layer/queue/identity.hpp"

#include <mutex>

#include "layer/core/dispatch.hpp"

namespace cldmabuf {
namespace {

struct Remembered {
    std::mutex mutex;
    cl_command_queue queue = nullptr;
    cl_context context = nullptr;
    cl_device_id device = nullptr;
};

Remembered &remembered() {
    static Remembered *r = new Remembered;  // never destroyed: a late destructor may still release a queue
    return *r;
}

}  // namespace

cl_int queue_context_and_device(cl_command_queue queue, cl_context *context, cl_device_id *device) {
    Remembered &r = remembered();
    {
        std::lock_guard lock(r.mutex);
        if (queue && r.queue == queue) {
            *context = r.context;
            *device = r.device;
            return CL_SUCCESS;
        }
    }
    cl_context c = nullptr;
    cl_device_id d = nullptr;
    if (cl_int err = next().clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof c, &c, nullptr); err != CL_SUCCESS)
        return err;
    if (cl_int err = next().clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof d, &d, nullptr); err != CL_SUCCESS)
        return err;
    *context = c;
    *device = d;
    std::lock_guard lock(r.mutex);
    r.queue = queue;
    r.context = c;
    r.device = d;
    return CL_SUCCESS;
}

void forget_queue_identity(cl_command_queue queue) {
    Remembered &r = remembered();
    std::lock_guard lock(r.mutex);
    if (r.queue == queue) r.queue = nullptr;
}

}  // namespace cldmabuf
