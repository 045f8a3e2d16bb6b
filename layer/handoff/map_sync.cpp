// Host mapping of an import brackets the CPU's access with
// DMA_BUF_IOCTL_SYNC: START (direction from the map flags) before the
// pointer is handed out, END once it is unmapped.  Only imports whose
// route maps the dma-buf's own pages need it (the zero-copy route, buffers
// and images alike: layer/handoff/handoff_route.hpp, maps_dmabuf).
// Everything else passes straight through: the ICD maps its own copy, or a
// tiled image's shadow.
#include "layer/handoff/map_sync.hpp"

#include <memory>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/core/failed_events.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/handoff/cpu_access.hpp"
#include "layer/handoff/handoff_route.hpp"
#include "layer/handoff/marker_watch.hpp"
#include "layer/core/host_step.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/base/log.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {
namespace {

// The map's own step event never reaches the application, so its side-table
// entry (command type, failure) goes with the layer's reference: the ICD may
// hand the same handle out for its next event, which must not inherit a
// stale failure (an unmap waiting on it was refused with -14).
void drop_gate(IcdEvent &gate) {
    event_types().remove(gate.get());
    gate.reset();
}

uint64_t access_from_map_flags(cl_map_flags flags) {
    uint64_t access = 0;
    if (flags & CL_MAP_READ) access |= DMABUF_SYNC_READ;
    if (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) access |= DMABUF_SYNC_WRITE;
    return access ? access : DMABUF_SYNC_READ;  // flags 0 means read (spec: clEnqueueMapBuffer)
}

std::shared_ptr<Import> zero_copy_import(cl_mem mem) {
    auto import = imports().find(mem);
    return import && route_of(*import).maps_dmabuf() ? import : nullptr;
}

// Outstanding maps of imports: the access direction to close on unmap.
struct MapRecord {
    std::shared_ptr<Import> import;
    uint64_t access;
};
std::mutex maps_mutex;
std::vector<std::pair<void *, MapRecord>> live_maps;

// The map of a zero-copy import, buffer or image: SYNC START in a host
// step, then the ICD's own (non-blocking) map behind it.  `icd_map` enqueues
// that map waiting on the gate event.
void forget_map(void *ptr, const std::shared_ptr<Import> &import) {
    std::lock_guard lock(maps_mutex);
    for (auto it = live_maps.begin(); it != live_maps.end(); ++it) {
        if (it->first == ptr && it->second.import == import) {
            live_maps.erase(it);
            return;
        }
    }
}

template <typename IcdMap>
void *map_with_sync(const std::shared_ptr<Import> &import, cl_mem mem, cl_command_queue queue, cl_bool blocking,
                    cl_map_flags flags, cl_uint num_events, const cl_event *wait_list, cl_event *event,
                    cl_int *errcode_ret, IcdMap icd_map) {
    const uint64_t access = access_from_map_flags(flags);
    // SYNC START runs in queue order (after earlier commands, e.g. a blitter
    // copy into this buffer), and the map itself waits for it.
    HostStep step;
    step.queue = queue;
    step.num_events = num_events;
    step.wait_list = wait_list;
    step.keep_alive = {import->mem};
    step.work = [import, access](cl_int prior) -> cl_int {
        if (prior < 0) return prior;
        return begin_cpu_access(*import, access, "map");
    };
    IcdEvent gate;
    cl_int err = enqueue_host_step(std::move(step), gate.out());
    if (err != CL_SUCCESS) {
        if (errcode_ret) *errcode_ret = err;
        return nullptr;
    }
    IcdEvent map_event;  // the application's when it asked for an event
    void *ptr = icd_map(gate.get(), map_event.out(), &err);
    if (!ptr) {
        drop_gate(gate);
        if (errcode_ret) *errcode_ret = err;
        return nullptr;
    }
    {
        std::lock_guard lock(maps_mutex);
        live_maps.push_back({ptr, MapRecord{import, access}});
    }
    if (blocking) {
        err = next().clWaitForEvents(1, map_event.as_list());
        // The ICD's map may have succeeded over a failed SYNC START (the side-
        // table mode, docs/layer-rules.md): the step's event knows.
        cl_int step_status = CL_SUCCESS;
        const bool step_failed = event_types().failed(gate.get(), &step_status);
        if (err != CL_SUCCESS || step_failed) {
            // The map failed in the queue (e.g. fence timeout): report it like
            // a blocking call does, and hand back no pointer the CPU may use.
            forget_map(ptr, import);
            if (err == CL_SUCCESS) next().clEnqueueUnmapMemObject(queue, mem, ptr, 0, nullptr, nullptr);
            drop_gate(gate);
            if (event) *event = map_event.hand_off();
            if (errcode_ret) *errcode_ret = CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
            return nullptr;
        }
    }
    drop_gate(gate);
    if (event) *event = map_event.hand_off();
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return ptr;
}

}  // namespace

void *CL_API_CALL enqueue_map_buffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, cl_map_flags flags,
                                     size_t offset, size_t size, cl_uint num_events, const cl_event *wait_list,
                                     cl_event *event, cl_int *errcode_ret) {
    auto import = zero_copy_import(buffer);
    if (!import)
        return next().clEnqueueMapBuffer(queue, buffer, blocking, flags, offset, size, num_events, wait_list, event,
                                         errcode_ret);
    return map_with_sync(import, buffer, queue, blocking, flags, num_events, wait_list, event, errcode_ret,
                         [&](cl_event gate, cl_event *map_event, cl_int *err) {
                             return next().clEnqueueMapBuffer(queue, buffer, CL_FALSE, flags, offset, size, 1, &gate,
                                                              map_event, err);
                         });
}

void *CL_API_CALL enqueue_map_image(cl_command_queue queue, cl_mem image, cl_bool blocking, cl_map_flags flags,
                                    const size_t *origin, const size_t *region, size_t *row_pitch,
                                    size_t *slice_pitch, cl_uint num_events, const cl_event *wait_list,
                                    cl_event *event, cl_int *errcode_ret) {
    std::shared_ptr<Import> import = imports().empty() ? nullptr : zero_copy_import(image);
    if (!import || import->mem != image)
        return next().clEnqueueMapImage(queue, image, blocking, flags, origin, region, row_pitch, slice_pitch,
                                        num_events, wait_list, event, errcode_ret);
    return map_with_sync(import, image, queue, blocking, flags, num_events, wait_list, event, errcode_ret,
                         [&](cl_event gate, cl_event *map_event, cl_int *err) {
                             return next().clEnqueueMapImage(queue, image, CL_FALSE, flags, origin, region, row_pitch,
                                                             slice_pitch, 1, &gate, map_event, err);
                         });
}

cl_int CL_API_CALL enqueue_unmap_mem_object(cl_command_queue queue, cl_mem mem, void *mapped_ptr,
                                            cl_uint num_events, const cl_event *wait_list, cl_event *event) {
    MapRecord record{};
    if (!imports().empty()) {
        std::lock_guard lock(maps_mutex);
        for (auto it = live_maps.begin(); it != live_maps.end(); ++it) {
            if (it->first == mapped_ptr && it->second.import && zero_copy_import(mem) == it->second.import) {
                record = std::move(it->second);
                live_maps.erase(it);
                break;
            }
        }
    }
    if (!record.import) return next().clEnqueueUnmapMemObject(queue, mem, mapped_ptr, num_events, wait_list, event);

    // The application's when the unmap is the command's event; else the
    // layer's until a step's marker waits on it (the ICD holds it as long).
    IcdEvent unmapped;
    cl_int err = next().clEnqueueUnmapMemObject(queue, mem, mapped_ptr, num_events, wait_list, unmapped.out());
    if (err != CL_SUCCESS) {
        std::lock_guard lock(maps_mutex);
        live_maps.push_back({mapped_ptr, std::move(record)});
        return err;
    }
    auto import = record.import;
    const uint64_t access = record.access;
    // The ICD's unmap already complete and no failure owed by the queue:
    // SYNC END at once, and the ICD's event (complete after END) is the
    // command's.
    cl_int ended = CL_SUCCESS;
    const bool at_once =
        status_of(unmapped.get()) == CL_COMPLETE && !(any_queue_failure() && queue_failure(queue) < 0);
    if (at_once) {
        ended = end_cpu_access(*import, access, "unmap");
        if (ended == CL_SUCCESS) {
            if (event) *event = unmapped.hand_off();
            return CL_SUCCESS;
        }
    }
    // Else SYNC END in a step after the unmap (or, once failed at once, the
    // step reports it).  The step's event is the command's, reported as the
    // unmap: a command of any queue that waits on it starts after END, and
    // END's failure is its status.  Later commands of the queue wait for it.
    HostStep step;
    step.queue = queue;
    step.num_events = 1;
    step.wait_list = unmapped.as_list();
    step.type = CL_COMMAND_UNMAP_MEM_OBJECT;
    step.keep_alive = {import->mem};
    if (at_once)
        step.work = [ended](cl_int prior) -> cl_int { return prior < 0 ? prior : ended; };
    else
        step.work = [import, access](cl_int prior) -> cl_int {
            cl_int err = end_cpu_access(*import, access, "unmap");
            return prior < 0 ? prior : err;
        };
    err = enqueue_host_step(std::move(step), event);
    if (err != CL_SUCCESS && !at_once) {
        // The unmap is in the queue, its END not: the CPU access bracket
        // closes now (the application no longer touches the mapping).
        end_cpu_access(*import, access, "unmap");
    }
    return err;
}

}  // namespace cldmabuf
