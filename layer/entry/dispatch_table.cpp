// Everything the layer intercepts, in one place: each slot of the dispatch
// table it replaces and each extension function it hands out by name, with
// the file that implements it.  Every other slot is the target's own
// pointer, copied by init_dispatch (layer/core/dispatch.cpp): those calls never
// enter the layer.
//
// Two kinds of slot:
//   wrap     the layer's function does something around the target's (a
//            check, a correction of the answer, a route to the blitter) and
//            calls it for the rest: set only where the target has the slot,
//            so a slot the target leaves NULL stays NULL.
//   provide  the layer serves the call also where the target has no
//            function: a 3.0 / 2.0 entry point it maps down for an older ICD
//            (layer/icd/slots.hpp), or an extension the layer implements
//            (cl_khr_gl_sharing, cl_khr_egl_image on EGL).
//
// Every clEnqueue* slot goes through the layer, so that the enqueue epoch
// (layer/queue/epoch.hpp) counts every command the application enqueues
// and the blitter's semaphore chain knows when nothing came between: the
// slots no feature has a say in take the counting pass-through
// (layer/queue/passthrough.hpp).
//
// A slot more than one feature has a say in gets one entry function in
// layer/entry/entry_chains.cpp, which runs the features' checks in a written
// order; nothing here wraps another override.  A feature that needs the
// layer's own import (egl, va, clImportMemoryARM) calls layer/import with a
// request it built, never the table filled here (ours()).
// tests/unit/test_dispatch_table.cpp holds the expected list: a slot added
// or dropped here must be added or dropped there.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "layer/blit/copy_overrides.hpp"
#include "layer/queue/looked_up.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/egl/egl.hpp"
#include "layer/entry/entry_chains.hpp"
#include "layer/queue/epoch.hpp"
#include "layer/queue/enqueue_args.hpp"
#include "layer/queue/passthrough.hpp"
#include "layer/core/events.hpp"
#include "layer/entry/dispatch_table.hpp"
#include "layer/icd/profile.hpp"
#include "layer/icd/slots.hpp"
#include "layer/entry/queue_calls.hpp"
#include "layer/entry/extensions.hpp"
#include "layer/import/arm.hpp"
#include "layer/import/buffer.hpp"
#include "layer/import/fresh_handles.hpp"
#include "layer/import/image.hpp"
#include "layer/import/queries.hpp"
#include "layer/sync/availability.hpp"
#include "layer/sync/entry_points.hpp"
#include "layer/va/entry_points.hpp"
#if CLDMABUF_EGL_INTEROP
#include "layer/egl/entry_points.hpp"
#endif

namespace cldmabuf {
namespace {

template <typename Fn>
void wrap(Fn &slot, std::type_identity_t<Fn> fn) {
    if (slot) slot = fn;
}

template <typename Fn>
void provide(Fn &slot, std::type_identity_t<Fn> fn) {
    slot = fn;
}

// ---- extension functions handed out by name ----------------------------------------------

struct NamedFunction {
    const char *name;
    void *fn;
};

template <typename Fn>
void *as_address(Fn *fn) {
    return reinterpret_cast<void *>(fn);
}

// An enqueue the layer does not look into (a semaphore wait, the VA-API and
// GL/EGL acquires and releases): recorded as a command that may wait for
// anything (layer/core/command_dependencies.hpp).
template <auto Fn>
struct Opaque;

template <typename R, typename... Args, R(CL_API_CALL *Fn)(Args...)>
struct Opaque<Fn> {
    static R CL_API_CALL call(Args... args) {
        const R result = Fn(args...);
        note_enqueue_call(result == CL_SUCCESS, CommandShape::plain, true, args...);
        return result;
    }
};

template <auto Fn>
constexpr auto opaque_enqueue = &Opaque<Fn>::call;

// cl_khr_external_memory, cl_arm_import_memory_dma_buf, cl_intel_va_api_media_sharing: on every ICD.
const NamedFunction layer_functions[] = {
    // layer/handoff/acquire_release.cpp: bounded fence wait + DMA_BUF_IOCTL_SYNC START / END in queue
    // order, counted in the enqueue epoch first (layer/entry/entry_chains.cpp)
    {"clEnqueueAcquireExternalMemObjectsKHR", as_address(chain::acquire_external_mem_objects)},
    {"clEnqueueReleaseExternalMemObjectsKHR", as_address(chain::release_external_mem_objects)},
    // layer/import/arm.cpp: CL_IMPORT_TYPE_DMA_BUF_ARM over the layer's KHR import
    {"clImportMemoryARM", as_address(import_memory_arm)},
    // layer/va/ (docs/va-api.md): cl_intel_va_api_media_sharing over dma-buf;
    // each forwards to the ICD's own where the platform's ICD has the extension.
    {"clGetDeviceIDsFromVA_APIMediaAdapterINTEL", as_address(va::get_device_ids_from_media_adapter)},  // devices.cpp
    {"clCreateFromVA_APIMediaSurfaceINTEL", as_address(va::create_from_media_surface)},         // surface_import.cpp
    // acquire_release.cpp
    {"clEnqueueAcquireVA_APIMediaSurfacesINTEL", as_address(opaque_enqueue<va::enqueue_acquire_media_surfaces>)},
    {"clEnqueueReleaseVA_APIMediaSurfacesINTEL", as_address(opaque_enqueue<va::enqueue_release_media_surfaces>)},
    // cl_intel_sharing_format_query's VA-API query
    {"clGetSupportedVA_APIMediaSurfaceFormatsINTEL", as_address(va::get_supported_media_surface_formats)},  // format_query.cpp
};

// cl_khr_semaphore, cl_khr_external_semaphore(_sync_fd) (layer/sync/entry_points.cpp):
// where the platform's ICD has no cl_khr_semaphore or CLDMABUF_DEBUG=semaphores-force
// (sync::hand_out_semaphore_functions); the ICD's own otherwise.
const NamedFunction semaphore_functions[] = {
    {"clCreateSemaphoreWithPropertiesKHR", as_address(sync::create_semaphore_with_properties)},
    {"clEnqueueWaitSemaphoresKHR", as_address(opaque_enqueue<sync::enqueue_wait_semaphores>)},
    {"clEnqueueSignalSemaphoresKHR", as_address(sync::enqueue_signal_semaphores)},
    {"clGetSemaphoreInfoKHR", as_address(sync::get_semaphore_info)},
    {"clRetainSemaphoreKHR", as_address(sync::retain_semaphore)},
    {"clReleaseSemaphoreKHR", as_address(sync::release_semaphore)},
    {"clGetSemaphoreHandleForTypeKHR", as_address(sync::get_semaphore_handle_for_type)},
    {"clReImportSemaphoreSyncFdKHR", as_address(sync::reimport_semaphore_sync_fd)},
};

#if CLDMABUF_EGL_INTEROP
// cl_khr_egl_image, cl_khr_gl_sharing, cl_khr_gl_event (layer/egl/): unless CLDMABUF_EGL=off.
const NamedFunction egl_functions[] = {
    {"clCreateFromEGLImageKHR", as_address(egl::create_from_egl_image)},               // egl_image_import.cpp
    // gl_acquire_release.cpp
    {"clEnqueueAcquireEGLObjectsKHR", as_address(opaque_enqueue<egl::enqueue_acquire_egl_objects>)},
    // gl_acquire_release.cpp
    {"clEnqueueReleaseEGLObjectsKHR", as_address(opaque_enqueue<egl::enqueue_release_egl_objects>)},
    {"clGetGLContextInfoKHR", as_address(egl::get_gl_context_info)},                   // gl_sharing_contexts.cpp
    {"clCreateEventFromGLsyncKHR", as_address(egl::create_event_from_gl_sync)},        // gl_event.cpp
};
#endif

void *find(const NamedFunction *list, size_t n, const char *name) {
    for (size_t i = 0; i < n; ++i)
        if (!std::strcmp(list[i].name, name)) return list[i].fn;
    return nullptr;
}

void *semaphore_function(const char *name) {
    return name ? find(semaphore_functions, std::size(semaphore_functions), name) : nullptr;
}

// An enqueue handed to the application from below the layer would be called
// without passing through it: it goes out behind a counting trampoline
// (layer/queue/looked_up.hpp), or, where none is left, the enqueue epoch
// cannot count it.
// An enqueue that has a slot in the table (GL sharing's acquire and release,
// the EGL ones) is handed out as the layer's slot, whatever the next table
// answered: it counts once (a trampoline in front of a loader dispatcher
// that calls the slot would count it twice) and keeps the layer's handling
// of the objects.
void *own_slot(const char *name) {
    if (!std::strcmp(name, "clEnqueueAcquireGLObjects")) return reinterpret_cast<void *>(ours().clEnqueueAcquireGLObjects);
    if (!std::strcmp(name, "clEnqueueReleaseGLObjects")) return reinterpret_cast<void *>(ours().clEnqueueReleaseGLObjects);
    return nullptr;
}

void *handed_down(const char *name, void *fn) {
    if (!fn || !unseen_enqueue_name(name)) return fn;
    if (void *own = own_slot(name)) return own;
    if (void *counted = counted_extension(name, fn)) {
        note_unrecorded_enqueue();  // counted, but its wait list is not known
        return counted;
    }
    note_unseen_enqueue(name);
    return fn;
}

// Ours first; every other name goes down the chain (the loader answers its own).
void *CL_API_CALL get_extension_function_address_for_platform(cl_platform_id platform, const char *name) {
    if (void *fn = layer_extension_function(name)) return fn;
    if (void *fn = semaphore_function(name); fn && sync::hand_out_semaphore_functions(platform, false)) return fn;
    return handed_down(name, next().clGetExtensionFunctionAddressForPlatform(platform, name));
}

void *CL_API_CALL get_extension_function_address(const char *name) {
    if (void *fn = layer_extension_function(name)) return fn;
    void *icd = next().clGetExtensionFunctionAddress(name);
    if (void *fn = semaphore_function(name); fn && sync::hand_out_semaphore_functions(nullptr, icd != nullptr))
        return fn;
    return handed_down(name, icd);
}

}  // namespace

void *layer_extension_function(const char *name) {
    if (!name) return nullptr;
    if (void *fn = find(layer_functions, std::size(layer_functions), name)) return fn;
#if CLDMABUF_EGL_INTEROP
    if (egl_mode() != EglMode::off) return find(egl_functions, std::size(egl_functions), name);
#endif
    return nullptr;
}

// ---- the slots -------------------------------------------------------------------------

void fill_layer_table(cl_icd_dispatch &t) {
    // Enqueues no feature has a say in: counted in the enqueue epoch, then
    // the target's (layer/queue/passthrough.hpp).  The D3D10/D3D11/DX9
    // slots are not among them: on Linux the headers give them no function
    // type and no loader exports them.  The GL/EGL ones are egl's (below,
    // egl counts them) unless CLDMABUF_EGL=off.
    using D = cl_icd_dispatch;
    wrap(t.clEnqueueReadImage, counted_enqueue<&D::clEnqueueReadImage>);
    wrap(t.clEnqueueNDRangeKernel, counted_enqueue<&D::clEnqueueNDRangeKernel>);
    wrap(t.clEnqueueTask, counted_enqueue<&D::clEnqueueTask>);
    wrap(t.clEnqueueNativeKernel, counted_enqueue<&D::clEnqueueNativeKernel>);
    wrap(t.clEnqueueMarker, counted_enqueue<&D::clEnqueueMarker>);
    wrap(t.clEnqueueWaitForEvents, counted_enqueue<&D::clEnqueueWaitForEvents>);
    wrap(t.clEnqueueBarrier, counted_enqueue<&D::clEnqueueBarrier>);
    wrap(t.clEnqueueMigrateMemObjects, counted_enqueue<&D::clEnqueueMigrateMemObjects>);
    wrap(t.clEnqueueMarkerWithWaitList, counted_enqueue<&D::clEnqueueMarkerWithWaitList>);
    wrap(t.clEnqueueBarrierWithWaitList, counted_enqueue<&D::clEnqueueBarrierWithWaitList>);
    wrap(t.clEnqueueSVMFree, counted_enqueue<&D::clEnqueueSVMFree>);
    wrap(t.clEnqueueSVMMemcpy, counted_enqueue<&D::clEnqueueSVMMemcpy>);
    wrap(t.clEnqueueSVMMemFill, counted_enqueue<&D::clEnqueueSVMMemFill>);
    wrap(t.clEnqueueSVMMap, counted_enqueue<&D::clEnqueueSVMMap>);
    wrap(t.clEnqueueSVMUnmap, counted_enqueue<&D::clEnqueueSVMUnmap>);
    wrap(t.clEnqueueSVMMigrateMem, counted_enqueue<&D::clEnqueueSVMMigrateMem>);
#if CLDMABUF_EGL_INTEROP
    const bool egl_has_them = egl_mode() != EglMode::off;
#else
    const bool egl_has_them = false;
#endif
    if (!egl_has_them) {
        wrap(t.clEnqueueAcquireGLObjects, counted_enqueue<&D::clEnqueueAcquireGLObjects>);
        wrap(t.clEnqueueReleaseGLObjects, counted_enqueue<&D::clEnqueueReleaseGLObjects>);
        wrap(t.clEnqueueAcquireEGLObjectsKHR, counted_enqueue<&D::clEnqueueAcquireEGLObjectsKHR>);
        wrap(t.clEnqueueReleaseEGLObjectsKHR, counted_enqueue<&D::clEnqueueReleaseEGLObjectsKHR>);
    }

    // Platform and device queries (layer/entry/extensions.cpp): the layer's
    // extensions in both lists, the handle types, CL_PLATFORM_STATS_CLDMABUF.
    wrap(t.clGetPlatformInfo, get_platform_info);
    wrap(t.clGetDeviceInfo, get_device_info);
    // Extension functions by name (above).
    wrap(t.clGetExtensionFunctionAddressForPlatform, get_extension_function_address_for_platform);
    wrap(t.clGetExtensionFunctionAddress, get_extension_function_address);

    // The list classified once, then alloc/, import/ or the ICD
    // (entry_mem_create.cpp); below OpenCL 3.0 the next table maps the call
    // to clCreateBuffer / clCreateImage.
    provide(t.clCreateBufferWithProperties, chain::create_buffer_with_properties);
    provide(t.clCreateImageWithProperties, chain::create_image_with_properties);
    wrap(t.clCreateSubBuffer, create_sub_buffer);        // buffer.cpp: sub-buffers of imports recorded once
    // queries.cpp: the object as the application made it, no internal buffer
    // under an image; layer/va/queries.cpp first (layer/entry/entry_chains_interop.cpp)
    wrap(t.clGetMemObjectInfo, chain::mem_object_info);
    wrap(t.clGetImageInfo, chain::image_info);

    // Stale handles (layer/import/fresh_handles.hpp): a memory
    // object the ICD creates may have a dead import's handle, which the
    // registry then retires; the application's retains and releases count
    // its references on imports (its last release retires the entry).  The
    // layer's own creation entries above call fresh_mem() themselves.
    wrap(t.clCreateBuffer, fresh_mem_slot<&D::clCreateBuffer>);
    wrap(t.clCreateImage, fresh_mem_slot<&D::clCreateImage>);
    wrap(t.clCreateImage2D, fresh_mem_slot<&D::clCreateImage2D>);
    wrap(t.clCreateImage3D, fresh_mem_slot<&D::clCreateImage3D>);
    wrap(t.clCreatePipe, fresh_mem_slot<&D::clCreatePipe>);
    wrap(t.clRetainMemObject, retain_mem_object);
    wrap(t.clReleaseMemObject, release_mem_object);
    if (!egl_has_them) {  // else egl's entries (below) call fresh_mem() where they forward
        wrap(t.clCreateFromGLBuffer, fresh_mem_slot<&D::clCreateFromGLBuffer>);
        wrap(t.clCreateFromGLTexture, fresh_mem_slot<&D::clCreateFromGLTexture>);
        wrap(t.clCreateFromGLTexture2D, fresh_mem_slot<&D::clCreateFromGLTexture2D>);
        wrap(t.clCreateFromGLTexture3D, fresh_mem_slot<&D::clCreateFromGLTexture3D>);
        wrap(t.clCreateFromGLRenderbuffer, fresh_mem_slot<&D::clCreateFromGLRenderbuffer>);
        wrap(t.clCreateFromEGLImageKHR, fresh_mem_slot<&D::clCreateFromEGLImageKHR>);
    }

    // Events and queues (layer/core/events.cpp): command types, failed host
    // steps, step timestamps, the failure clFinish owes.
    wrap(t.clGetEventInfo, get_event_info);
    wrap(t.clRetainEvent, retain_event);        // the application's references on the layer's events
    wrap(t.clReleaseEvent, release_event);      // ... its last release drops the entry
    wrap(t.clCreateUserEvent, create_user_event);  // a reused handle starts clean
    wrap(t.clWaitForEvents, wait_for_events);
    wrap(t.clSetUserEventStatus, set_user_event_status);  // a failure resolves the steps it terminated
    wrap(t.clSetEventCallback, set_event_callback);
    wrap(t.clGetEventProfilingInfo, get_event_profiling_info);
    wrap(t.clFinish, finish_queue);
    wrap(t.clCreateCommandQueue, create_command_queue);
    provide(t.clCreateCommandQueueWithProperties, create_command_queue_with_properties);  // below 2.0: mapped down
    wrap(t.clRetainCommandQueue, retain_command_queue);
    wrap(t.clReleaseCommandQueue, release_command_queue);

    // Host reads and writes (layer/entry/entry_chains.cpp: read-only guard, then
    // host-access flags, then the count and the ICD).
    wrap(t.clEnqueueReadBuffer, checked_enqueue<&D::clEnqueueReadBuffer, chain::read_buffer>);
    wrap(t.clEnqueueReadBufferRect, checked_enqueue<&D::clEnqueueReadBufferRect, chain::read_buffer_rect>);
    wrap(t.clEnqueueWriteBuffer, checked_enqueue<&D::clEnqueueWriteBuffer, chain::write_buffer>);
    wrap(t.clEnqueueWriteBufferRect, checked_enqueue<&D::clEnqueueWriteBufferRect, chain::write_buffer_rect>);
    wrap(t.clEnqueueFillBuffer, checked_enqueue<&D::clEnqueueFillBuffer, chain::fill_buffer>);
    wrap(t.clEnqueueWriteImage, checked_enqueue<&D::clEnqueueWriteImage, chain::write_image>);
    wrap(t.clEnqueueFillImage, checked_enqueue<&D::clEnqueueFillImage, chain::fill_image>);

    // Copies (layer/entry/entry_chains.cpp: read-only guard on the destination,
    // then layer/blit/buffer_copy.cpp, image_copy.cpp: the Gen9 blitter, or
    // the count and the ICD).
    wrap(t.clEnqueueCopyBuffer, chain::copy_buffer);
    wrap(t.clEnqueueCopyBufferRect, chain::copy_buffer_rect);
    wrap(t.clEnqueueCopyImage, chain::copy_image);
    wrap(t.clEnqueueCopyImageToBuffer, chain::copy_image_to_buffer);
    wrap(t.clEnqueueCopyBufferToImage, chain::copy_buffer_to_image);

    // Maps (layer/entry/entry_chains.cpp: read-only guard, host-access flags, the
    // count, then layer/handoff/map_sync.cpp: DMA_BUF_IOCTL_SYNC around a
    // zero-copy import's map).
    wrap(t.clEnqueueMapBuffer, checked_enqueue<&D::clEnqueueMapBuffer, chain::map_buffer>);
    wrap(t.clEnqueueMapImage, checked_enqueue<&D::clEnqueueMapImage, chain::map_image>);
    wrap(t.clEnqueueUnmapMemObject, chain::unmap_mem_object);  // then map_sync.cpp: SYNC END after the unmap

    // A context's last release drops the record of its devices
    // (layer/entry/entry_context.cpp; creation is below, after egl's slots).
    wrap(t.clReleaseContext, chain::release_context);

#if CLDMABUF_EGL_INTEROP
    // GL/EGL interop (layer/egl/, docs/egl.md), unless CLDMABUF_EGL=off.
    // Where the ICD has the extension itself, each call forwards to it
    // (egl/forwarding.cpp).
    if (egl_mode() != EglMode::off) {
        provide(t.clCreateFromEGLImageKHR, egl::create_from_egl_image);                // egl_image_import.cpp
        // gl_acquire_release.cpp
        provide(t.clEnqueueAcquireEGLObjectsKHR, opaque_enqueue<egl::enqueue_acquire_egl_objects>);
        // gl_acquire_release.cpp
        provide(t.clEnqueueReleaseEGLObjectsKHR, opaque_enqueue<egl::enqueue_release_egl_objects>);
        provide(t.clCreateFromGLTexture, egl::create_from_gl_texture);                 // gl_objects.cpp
        provide(t.clCreateFromGLTexture2D, egl::create_from_gl_texture_2d);            // gl_objects.cpp
        provide(t.clCreateFromGLTexture3D, egl::create_from_gl_texture_3d);            // gl_objects.cpp
        provide(t.clCreateFromGLRenderbuffer, egl::create_from_gl_renderbuffer);       // gl_objects.cpp
        provide(t.clCreateFromGLBuffer, egl::create_from_gl_buffer);                   // gl_objects.cpp
        // gl_acquire_release.cpp
        provide(t.clEnqueueAcquireGLObjects, opaque_enqueue<egl::enqueue_acquire_gl_objects>);
        // gl_acquire_release.cpp
        provide(t.clEnqueueReleaseGLObjects, opaque_enqueue<egl::enqueue_release_gl_objects>);
        provide(t.clGetGLObjectInfo, egl::get_gl_object_info);                         // gl_objects.cpp
        provide(t.clGetGLTextureInfo, egl::get_gl_texture_info);                       // gl_objects.cpp
        provide(t.clGetGLContextInfoKHR, egl::get_gl_context_info);                    // gl_sharing_contexts.cpp
        provide(t.clCreateEventFromGLsyncKHR, egl::create_event_from_gl_sync);         // gl_event.cpp
    }
#endif
    // Contexts with CL_CONTEXT_VA_API_DISPLAY_INTEL (layer/va/contexts.cpp),
    // then CL_GL_CONTEXT_KHR / CL_EGL_DISPLAY_KHR (egl/gl_sharing_contexts.cpp, when
    // EGL interop is on): the ICD creates the context without them, then the
    // layer records the devices the application named
    // (layer/entry/entry_chains_interop.cpp).
    wrap(t.clCreateContext, chain::create_context);
    wrap(t.clCreateContextFromType, chain::create_context_from_type);
    wrap(t.clGetContextInfo, chain::get_context_info);
}

using dispatch_tables::guarded_next;
using dispatch_tables::layer_dispatch;

const cl_icd_dispatch *init_dispatch(const cl_icd_dispatch *target, cl_uint num_entries) {
    std::memset(&layer_dispatch, 0, sizeof layer_dispatch);
    std::memset(&guarded_next, 0, sizeof guarded_next);
    // A loader built against older headers may have fewer slots than we do;
    // copy what it has and leave the rest NULL (it never calls them).
    size_t slots = std::min<size_t>(num_entries, sizeof layer_dispatch / sizeof(void *));
    std::memcpy(&layer_dispatch, target, slots * sizeof(void *));
    std::memcpy(&guarded_next, target, slots * sizeof(void *));
    guard_icd_slots(guarded_next, target, static_cast<cl_uint>(slots));
    install_icd_profile();  // the host steps' failure mode comes from the platform's profile
    fill_layer_table(layer_dispatch);
    return &layer_dispatch;
}

}  // namespace cldmabuf
