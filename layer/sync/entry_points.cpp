// The semaphore entry points: argument checks with the spec's errors (one log
// line each), the state change under semaphore_mutex(), and the waits and
// signals as host steps (layer/core/host_step.hpp) on the queue's worker, so a
// wait is bounded by CLDMABUF_FENCE_TIMEOUT_MS and a failure reaches the ICD
// as every other layer step's does.  No thread per semaphore.
#include "layer/sync/entry_points.hpp"

#include <vector>

#include "layer/blit/fence_chain.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/core/host_step.hpp"
#include "layer/icd/devices.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/base/param_answer.hpp"
#include "layer/sync/availability.hpp"
#include "layer/sync/properties.hpp"
#include "layer/sync/semaphore.hpp"

namespace cldmabuf::sync {
namespace {

constexpr uint32_t semaphore_magic = 0x53454d4c;  // "SEML"

cl_int refuse_semaphore_call(const char *call, cl_int err, const char *why) {
    LOG_ERROR("%s: %s", call, why);
    return err;
}

template <typename T>
T *fail_semaphore(cl_int *errcode_ret, cl_int err) {
    if (errcode_ret) *errcode_ret = err;
    return nullptr;
}

// The checks every enqueue shares: queue, list, each semaphore's context and device.
cl_int check_enqueue(const char *call, cl_command_queue queue, cl_uint n, const cl_semaphore_khr *sems) {
    cl_context context = nullptr;
    cl_device_id device = nullptr;
    if (next().clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr) != CL_SUCCESS ||
        next().clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, nullptr) != CL_SUCCESS)
        return refuse_semaphore_call(call, CL_INVALID_COMMAND_QUEUE, "not a valid command queue");
    if (n == 0 || !sems) return refuse_semaphore_call(call, CL_INVALID_VALUE, "no semaphores given");
    for (cl_uint i = 0; i < n; ++i) {
        if (!is_layer_semaphore(sems[i])) return refuse_semaphore_call(call, CL_INVALID_SEMAPHORE_KHR, "not a valid semaphore");
        if (sems[i]->context.get() != context)
            return refuse_semaphore_call(call, CL_INVALID_CONTEXT, "the queue's context is not the semaphore's");
        if (sems[i]->device_listed && sems[i]->device != device)
            return refuse_semaphore_call(call, CL_INVALID_COMMAND_QUEUE, "the queue's device is not the semaphore's device");
    }
    return CL_SUCCESS;
}

}  // namespace

cl_semaphore_khr CL_API_CALL create_semaphore_with_properties(cl_context context,
                                                              const cl_semaphore_properties_khr *props,
                                                              cl_int *errcode_ret) {
    const char *call = "clCreateSemaphoreWithPropertiesKHR";
    std::vector<cl_device_id> devices;
    cl_int err = context ? context_devices(context, &devices) : CL_INVALID_CONTEXT;
    if (!context || err != CL_SUCCESS || devices.empty())
        return fail_semaphore<_cl_semaphore_khr>(errcode_ret, refuse_semaphore_call(call, CL_INVALID_CONTEXT, "not a valid context"));
    if (!layer_semaphores_on_device(devices[0]))
        return fail_semaphore<_cl_semaphore_khr>(
                errcode_ret, refuse_semaphore_call(call, CL_INVALID_OPERATION,
                                    "the platform's ICD has its own semaphores (CLDMABUF_SEMAPHORES=auto): "
                                    "use the function its platform hands out"));
    SemaphoreRequest req;
    const char *why = "";
    err = parse_semaphore_properties(props, devices, can_export_sync_fd(), &req, &why);
    if (err != CL_SUCCESS) return fail_semaphore<_cl_semaphore_khr>(errcode_ret, refuse_semaphore_call(call, err, why));
    if (req.import_sync_fd && !is_sync_file(req.import_fd))
        return fail_semaphore<_cl_semaphore_khr>(errcode_ret,
                                       refuse_semaphore_call(call, CL_INVALID_VALUE, "CL_SEMAPHORE_HANDLE_SYNC_FD_KHR is not a sync_file"));

    std::unique_ptr<_cl_semaphore_khr> s(new (std::nothrow) _cl_semaphore_khr);
    if (!s) return fail_semaphore<_cl_semaphore_khr>(errcode_ret, CL_OUT_OF_HOST_MEMORY);
    s->dispatch = &ours();
    s->magic = semaphore_magic;
    s->context = IcdContext::retain(context);
    s->device = req.device;
    s->device_listed = req.device_listed;
    s->export_sync_fd = req.export_sync_fd;
    s->import_sync_fd = req.import_sync_fd;
    s->properties = std::move(req.properties);
    // A successful import owns the fd (cl_khr_external_semaphore: the
    // application must not use it afterwards); a refused one left it alone.
    if (req.import_sync_fd) s->pending = Payload::imported(req.import_fd);
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return register_semaphore(std::move(s));
}

cl_int CL_API_CALL enqueue_wait_semaphores(cl_command_queue queue, cl_uint n, const cl_semaphore_khr *sems,
                                           const cl_semaphore_payload_khr *, cl_uint num_events,
                                           const cl_event *wait_list, cl_event *event) {
    const char *call = "clEnqueueWaitSemaphoresKHR";
    if (cl_int err = check_enqueue(call, queue, n, sems); err != CL_SUCCESS) return err;
    if (cl_int err = check_wait_list(num_events, wait_list); err != CL_SUCCESS) return err;
    std::vector<std::shared_ptr<Payload>> taken;
    {
        std::lock_guard<std::mutex> l(semaphore_mutex());
        for (cl_uint i = 0; i < n; ++i)
            if (!sems[i]->pending)
                return refuse_semaphore_call(call, CL_INVALID_OPERATION,
                              "a binary semaphore with no signal enqueued and no sync_fd imported cannot be waited on");
        for (cl_uint i = 0; i < n; ++i) {
            taken.push_back(std::move(sems[i]->pending));
            sems[i]->pending.reset();
        }
    }
    // One semaphore whose payload is a sync_file with its own status, on a
    // queue that chains: offered to a blitter copy enqueued right after.
    std::shared_ptr<FenceInOffer> offer;
    if (n == 1 && fence_chain_on(queue)) {
        const std::shared_ptr<Payload> &p = taken[0];
        if (const int fd = p->gpu_fence_fd(); fd >= 0)
            offer = std::make_shared<FenceInOffer>(fd, p, [p](int timeout_ms) { return p->wait(timeout_ms); });
    }
    HostStep step;
    step.queue = queue;
    step.num_events = num_events;
    step.wait_list = wait_list;
    step.type = CL_COMMAND_SEMAPHORE_WAIT_KHR;
    step.work = [queue, taken, offer](cl_int prior) -> cl_int {
        if (offer) {
            cl_int status = prior;
            if (prior < 0)
                offer->close();
            else
                status = offer->wait_or_hand_over(fence_timeout_ms());
            forget_fence_in(queue, offer.get());
            return status;
        }
        if (prior < 0) return prior;
        for (const auto &p : taken)
            if (cl_int err = p->wait(fence_timeout_ms()); err != CL_SUCCESS) return err;
        return CL_SUCCESS;
    };
    cl_int err = enqueue_host_step(std::move(step), event);
    if (err != CL_SUCCESS) {
        // Nothing was enqueued: the semaphores keep their payloads.
        std::lock_guard<std::mutex> l(semaphore_mutex());
        for (cl_uint i = 0; i < n; ++i)
            if (!sems[i]->pending) sems[i]->pending = taken[i];
        return err;
    }
    if (offer)
        offer_fence_in(queue, offer);
    else
        break_fence_chain(queue);
    return CL_SUCCESS;
}

cl_int CL_API_CALL enqueue_signal_semaphores(cl_command_queue queue, cl_uint n, const cl_semaphore_khr *sems,
                                             const cl_semaphore_payload_khr *, cl_uint num_events,
                                             const cl_event *wait_list, cl_event *event) {
    const char *call = "clEnqueueSignalSemaphoresKHR";
    if (cl_int err = check_enqueue(call, queue, n, sems); err != CL_SUCCESS) return err;
    if (cl_int err = check_wait_list(num_events, wait_list); err != CL_SUCCESS) return err;
    std::vector<std::shared_ptr<Payload>> made;
    for (cl_uint i = 0; i < n; ++i) {
        LayerFence fence;
        if (sems[i]->export_sync_fd) {
            if (int e = create_layer_fence(&fence); e < 0) {
                LOG_ERROR("%s: no layer fence (sw_sync or vgem) for an exportable semaphore (errno %d)", call, -e);
                return CL_OUT_OF_RESOURCES;
            }
        }
        made.push_back(Payload::layer_signal(std::move(fence)));
    }
    {
        std::lock_guard<std::mutex> l(semaphore_mutex());
        for (cl_uint i = 0; i < n; ++i) {
            bool repeated = false;
            for (cl_uint j = 0; j < i; ++j) repeated = repeated || sems[j] == sems[i];
            if (repeated || sems[i]->pending)
                return refuse_semaphore_call(call, CL_INVALID_OPERATION,
                              "a binary semaphore already signalled or with a signal pending");
        }
        for (cl_uint i = 0; i < n; ++i) sems[i]->pending = made[i];
    }
    // A blitter copy right before on this queue: its batch fence becomes
    // the payloads' sync_file once the batch is submitted.
    std::shared_ptr<BatchFence> batch = fence_chain_on(queue) ? take_batch_fence(queue) : nullptr;
    HostStep step;
    step.queue = queue;
    step.num_events = num_events;
    step.wait_list = wait_list;
    step.type = CL_COMMAND_SEMAPHORE_SIGNAL_KHR;
    step.work = [made](cl_int prior) -> cl_int {
        // Signalled also after a failure, with its status: a waiter fails
        // at once instead of running into the timeout, and an exported
        // sync_file never stays pending.
        for (const auto &p : made) p->signal(prior < 0 ? prior : CL_SUCCESS);
        return prior < 0 ? prior : CL_SUCCESS;
    };
    cl_int err = enqueue_host_step(std::move(step), event);
    if (err != CL_SUCCESS) {
        std::lock_guard<std::mutex> l(semaphore_mutex());
        for (cl_uint i = 0; i < n; ++i)
            if (sems[i]->pending == made[i]) sems[i]->pending.reset();
        return err;
    }
    // Asked now that the signal is in the queue: a command that landed
    // between the copy and it has counted by now.
    if (batch && nothing_between(batch->epoch()))
        for (const auto &p : made) batch->attach([p](int fd) { return p->adopt_batch_fence(fd); });
    else
        break_fence_chain(queue);
    return CL_SUCCESS;
}

cl_int CL_API_CALL get_semaphore_info(cl_semaphore_khr s, cl_semaphore_info_khr name, size_t size, void *value,
                                      size_t *size_ret) {
    if (!is_layer_semaphore(s)) return refuse_semaphore_call("clGetSemaphoreInfoKHR", CL_INVALID_SEMAPHORE_KHR, "not a valid semaphore");
    switch (name) {
    case CL_SEMAPHORE_CONTEXT_KHR: {
        const cl_context context = s->context.get();
        return answer(&context, sizeof context, size, value, size_ret);
    }
    case CL_SEMAPHORE_REFERENCE_COUNT_KHR: {
        const cl_uint refs = s->refs.load();
        return answer(&refs, sizeof refs, size, value, size_ret);
    }
    case CL_SEMAPHORE_PROPERTIES_KHR:
        return answer(s->properties.data(), s->properties.size() * sizeof(cl_semaphore_properties_khr), size, value,
                      size_ret);
    case CL_SEMAPHORE_TYPE_KHR: {
        const cl_semaphore_type_khr type = CL_SEMAPHORE_TYPE_BINARY_KHR;
        return answer(&type, sizeof type, size, value, size_ret);
    }
    case CL_SEMAPHORE_PAYLOAD_KHR: {
        // Binary: 1 once a signal ran and no wait or export took it, else 0.
        cl_semaphore_payload_khr payload = 0;
        {
            std::lock_guard<std::mutex> l(semaphore_mutex());
            payload = s->pending && s->pending->signalled() ? 1 : 0;
        }
        return answer(&payload, sizeof payload, size, value, size_ret);
    }
    case CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR:
        // The device the semaphore is associated with: the listed one, or the
        // one-device context's (the CTS queries it either way).
        return answer(&s->device, sizeof s->device, size, value, size_ret);
    case CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR: {
        const cl_external_semaphore_handle_type_khr types[] = {CL_SEMAPHORE_HANDLE_SYNC_FD_KHR};
        return answer(types, s->export_sync_fd ? sizeof types : 0, size, value, size_ret);
    }
    case CL_SEMAPHORE_EXPORTABLE_KHR: {
        const cl_bool exportable = s->export_sync_fd ? CL_TRUE : CL_FALSE;
        return answer(&exportable, sizeof exportable, size, value, size_ret);
    }
    default: return refuse_semaphore_call("clGetSemaphoreInfoKHR", CL_INVALID_VALUE, "unknown cl_semaphore_info_khr");
    }
}

cl_int CL_API_CALL retain_semaphore(cl_semaphore_khr s) {
    if (!is_layer_semaphore(s)) return refuse_semaphore_call("clRetainSemaphoreKHR", CL_INVALID_SEMAPHORE_KHR, "not a valid semaphore");
    s->refs.fetch_add(1);
    return CL_SUCCESS;
}

cl_int CL_API_CALL release_semaphore(cl_semaphore_khr s) {
    if (!release_semaphore_ref(s))
        return refuse_semaphore_call("clReleaseSemaphoreKHR", CL_INVALID_SEMAPHORE_KHR, "not a valid semaphore");
    return CL_SUCCESS;
}

cl_int CL_API_CALL get_semaphore_handle_for_type(cl_semaphore_khr s, cl_device_id device,
                                                 cl_external_semaphore_handle_type_khr type, size_t size,
                                                 void *handle, size_t *size_ret) {
    const char *call = "clGetSemaphoreHandleForTypeKHR";
    if (!is_layer_semaphore(s)) return refuse_semaphore_call(call, CL_INVALID_SEMAPHORE_KHR, "not a valid semaphore");
    if (device != s->device) return refuse_semaphore_call(call, CL_INVALID_DEVICE, "not the semaphore's device");
    if (type != CL_SEMAPHORE_HANDLE_SYNC_FD_KHR || !s->export_sync_fd)
        return refuse_semaphore_call(call, CL_INVALID_VALUE, "the semaphore was not created exportable as this handle type");
    if (handle && size < sizeof(int)) return refuse_semaphore_call(call, CL_INVALID_VALUE, "handle_size is less than sizeof(int)");
    if (size_ret) *size_ret = sizeof(int);
    if (!handle) return CL_SUCCESS;
    std::lock_guard<std::mutex> l(semaphore_mutex());
    if (!s->pending || s->pending->sync_fd() < 0)
        return refuse_semaphore_call(call, CL_INVALID_OPERATION, "no signal enqueued to export (a sync_fd is one signal)");
    int fd = s->pending->export_sync_fd();
    if (fd < 0) return refuse_semaphore_call(call, CL_OUT_OF_RESOURCES, "dup of the sync_file failed");
    // Copy transference: the exported signal is the application's now.
    s->pending.reset();
    *static_cast<int *>(handle) = fd;
    return CL_SUCCESS;
}

cl_int CL_API_CALL reimport_semaphore_sync_fd(cl_semaphore_khr s, cl_semaphore_reimport_properties_khr *props,
                                              int fd) {
    const char *call = "clReImportSemaphoreSyncFdKHR";
    if (!is_layer_semaphore(s)) return refuse_semaphore_call(call, CL_INVALID_SEMAPHORE_KHR, "not a valid semaphore");
    if (!s->import_sync_fd)
        return refuse_semaphore_call(call, CL_INVALID_SEMAPHORE_KHR, "the semaphore was not created with a sync_fd import");
    if (props && *props) return refuse_semaphore_call(call, CL_INVALID_VALUE, "re-import properties are not supported");
    if (!is_sync_file(fd)) return refuse_semaphore_call(call, CL_INVALID_VALUE, "fd is not a sync_file");
    std::lock_guard<std::mutex> l(semaphore_mutex());
    s->pending = Payload::imported(fd);
    return CL_SUCCESS;
}

}  // namespace cldmabuf::sync
