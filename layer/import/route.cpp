#include "layer/import/route.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "layer/dmabuf/exporter.hpp"
#include "layer/import/zero_copy_check.hpp"
#include "layer/import/devices.hpp"
#include "layer/import/route_probe.hpp"
#include "layer/base/settings.hpp"

namespace cldmabuf {

RoutePolicy route_policy() {
    static const RoutePolicy policy = [] {
        const char *v = setting("CLDMABUF_IMPORT");
        if (v && (!std::strcmp(v, "copy"))) return RoutePolicy::copy;
        if (v && (!std::strcmp(v, "zero-copy") || !std::strcmp(v, "zerocopy"))) return RoutePolicy::zero_copy;
        return RoutePolicy::automatic;
    }();
    return policy;
}

const char *route_name(Route route) {
    switch (route) {
    case Route::host_ptr: return "zero-copy (USE_HOST_PTR image)";
    case Route::image_from_buffer: return "zero-copy (USE_HOST_PTR buffer + image from buffer)";
    case Route::copy: break;
    }
    return "device copy";
}

namespace {

// The first choice from the devices' answers alone, before any check of
// what the ICD really does.
RouteAnswer first_choice(const RouteQuestion &q) {
    const RoutePolicy policy = route_policy();
    if (policy == RoutePolicy::copy) return {Route::copy, "CLDMABUF_IMPORT=copy"};
    if (!q.image && policy == RoutePolicy::zero_copy) return {Route::host_ptr, ""};
    bool shares = true;
    bool from_buffer = q.image && (q.image_type == CL_MEM_OBJECT_IMAGE2D || q.image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER);
    for (cl_device_id d : *q.devices) {
        shares &= device_shares_host_memory(d);
        if (!q.image) continue;
        // USE_HOST_PTR only stays in place at the device's base alignment.
        const size_t base_align = std::max<cl_uint>(device_value<cl_uint>(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN), 8) / 8;
        if (q.base % base_align)
            return {policy == RoutePolicy::zero_copy ? Route::host_ptr : Route::copy,
                    "the plane's address is not aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN (" +
                        std::to_string(base_align) + " bytes)"};
        if (q.image_type == CL_MEM_OBJECT_IMAGE2D) {
            const cl_uint pitch_align = device_value<cl_uint>(d, CL_DEVICE_IMAGE_PITCH_ALIGNMENT);
            const cl_uint addr_align = device_value<cl_uint>(d, CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT);
            from_buffer &= pitch_align != 0 && device_has_extension(d, "cl_khr_image2d_from_buffer") &&
                           q.row_pitch % (size_t{pitch_align} * q.elem) == 0 &&
                           q.base % (size_t{std::max<cl_uint>(addr_align, 1)} * q.elem) == 0;
        }
    }
    if (!shares && policy == RoutePolicy::automatic) return {Route::copy, "a device does not share host memory"};
    return {from_buffer ? Route::image_from_buffer : Route::host_ptr, ""};
}

}  // namespace

RouteAnswer decide_route(const RouteQuestion &q) {
    RouteAnswer answer = first_choice(q);
    if (answer.route == Route::copy || route_policy() != RoutePolicy::automatic) return answer;
    // The device's claim is necessary, not sufficient: does the ICD use a
    // mapping of this exporter's dma-bufs in place?  (An ICD that copies
    // PFNMAP buffers copies them under an image too; a tiled import's image
    // lies over the layer's own shadow, not the dma-buf.)
    if (!q.tiled) {
        for (cl_device_id d : *q.devices) {
            if (check_buffer_zero_copy(q.context, d, q.exporter, q.fd) == ZeroCopyVerdict::copies)
                return {Route::copy,
                        std::string("the ICD keeps its own copy of ") + exporter_kind_name(q.exporter) + " dma-bufs"};
        }
    }
    // Images: whether this ICD keeps a USE_HOST_PTR image (or an image over
    // a USE_HOST_PTR buffer) in place is only seen by running it once.
    if (!q.image || q.image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER) return answer;
    for (cl_device_id d : *q.devices) {
        if (probe_route_in_place(q.context, d, answer.route)) continue;
        // An image over a buffer may still work in place where USE_HOST_PTR images do not, or the reverse.
        const Route other = answer.route == Route::image_from_buffer ? Route::host_ptr : Route::copy;
        answer.why = std::string("the ICD keeps its own copy for ") + route_name(answer.route);
        answer.route = other;
        if (answer.route == Route::copy || !probe_route_in_place(q.context, d, answer.route)) {
            answer.route = Route::copy;
            break;
        }
    }
    return answer;
}

}  // namespace cldmabuf
