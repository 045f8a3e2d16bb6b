// One entry function per slot that more than one feature has a say in, so
// that the order the checks run in is written down here, the same for every
// slot, rather than left to the order in which features install wrappers:
//
//   1. the read-only guard (layer/handoff/read_only_guard.hpp): a host-enqueued
//      write into a CL_MEM_READ_ONLY zero-copy import would make the ICD
//      write a read-only mapping; refused before anything else runs;
//   2. the host-access flags (layer/handoff/host_access.hpp) of a copy-route buffer
//      import: the ICD's buffer was created without them, so the layer holds
//      the application to them;
//   3. the feature that does the work (the blitter's copy, the map's
//      DMA_BUF_IOCTL_SYNC), or the ICD through next().
//
// Every command that passes 1 and 2 is counted in flight (layer/queue/epoch.hpp)
// from before 3 until 3 returned, except a copy, whose count is the
// blitter's call (only a copy the blitter does not take counts; one it takes
// may be chained to a semaphore).  The unmap and the external-memory
// acquire and release are here for that count alone.
//
// While no import exists none of this applies: layer/entry/dispatch_table.cpp
// installs each read, write, fill and map entry behind checked_enqueue
// (layer/queue/passthrough.hpp), which counts as landed and forwards at once
// then and jumps here otherwise, so a program that never imports pays one compare and
// one branch over a counted slot (a pass-through's bound: layer/base/name_filter.hpp).
//
// 1 and 2 never both refuse (one is about zero-copy imports, the other
// about copy-route ones), so their order decides no refusal's log line.
#include "layer/entry/entry_chains.hpp"

#include "layer/blit/copy_overrides.hpp"
#include "layer/core/command_dependencies.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/handoff/acquire_opening.hpp"
#include "layer/queue/epoch.hpp"
#include "layer/handoff/acquire_release.hpp"
#include "layer/handoff/map_sync.hpp"
#include "layer/handoff/read_only_guard.hpp"
#include "layer/handoff/host_access.hpp"

namespace cldmabuf::chain {
namespace {

// What the command may wait for, recorded once the ICD took it
// (layer/core/command_dependencies.hpp); the ICD's answer passed on.
cl_int recorded(cl_int result, cl_command_queue q, cl_uint n, const cl_event *waits, const cl_event *event) {
    note_enqueued(q, n, waits, event, result == CL_SUCCESS);
    return result;
}

void *recorded_map(void *mapped, cl_command_queue q, cl_uint n, const cl_event *waits, const cl_event *event) {
    note_enqueued(q, n, waits, event, mapped != nullptr);
    return mapped;
}

// A refused map: the spec's error in errcode_ret, no pointer.
void *refused_map(cl_int err, cl_int *errcode_ret) {
    if (errcode_ret) *errcode_ret = err;
    return nullptr;
}

}  // namespace

// ---- host reads and writes: 1, 2, then the ICD ----------------------------------------

cl_int CL_API_CALL read_buffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset, size_t size, void *ptr,
                               cl_uint n, const cl_event *waits, cl_event *event) {
    if (cl_int err = refuse_host_access(b, true, false, "clEnqueueReadBuffer"); err != CL_SUCCESS) return err;
    CountedCommand counted;  // in flight until the ICD's call returned (layer/queue/epoch.hpp)
    return recorded(next().clEnqueueReadBuffer(q, b, blocking, offset, size, ptr, n, waits, event),
                    q, n, waits, event);
}

cl_int CL_API_CALL read_buffer_rect(cl_command_queue q, cl_mem b, cl_bool blocking, const size_t *buffer_origin,
                                    const size_t *host_origin, const size_t *region, size_t buffer_row_pitch,
                                    size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
                                    void *ptr, cl_uint n, const cl_event *waits, cl_event *event) {
    if (cl_int err = refuse_host_access(b, true, false, "clEnqueueReadBufferRect"); err != CL_SUCCESS) return err;
    CountedCommand counted;  // in flight until the ICD's call returned (layer/queue/epoch.hpp)
    const cl_int result = next().clEnqueueReadBufferRect(q, b, blocking, buffer_origin, host_origin, region,
                                                         buffer_row_pitch, buffer_slice_pitch, host_row_pitch,
                                                         host_slice_pitch, ptr, n, waits, event);
    return recorded(result, q, n, waits, event);
}

cl_int CL_API_CALL write_buffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset, size_t size,
                                const void *ptr, cl_uint n, const cl_event *waits, cl_event *event) {
    constexpr const char *what = "clEnqueueWriteBuffer";
    if (cl_int err = refuse_read_only_write(b, what); err != CL_SUCCESS) return err;
    if (cl_int err = refuse_host_access(b, false, true, what); err != CL_SUCCESS) return err;
    CountedCommand counted;  // in flight until the ICD's call returned (layer/queue/epoch.hpp)
    return recorded(next().clEnqueueWriteBuffer(q, b, blocking, offset, size, ptr, n, waits, event),
                    q, n, waits, event);
}

cl_int CL_API_CALL write_buffer_rect(cl_command_queue q, cl_mem b, cl_bool blocking, const size_t *buffer_origin,
                                     const size_t *host_origin, const size_t *region, size_t buffer_row_pitch,
                                     size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
                                     const void *ptr, cl_uint n, const cl_event *waits, cl_event *event) {
    constexpr const char *what = "clEnqueueWriteBufferRect";
    if (cl_int err = refuse_read_only_write(b, what); err != CL_SUCCESS) return err;
    if (cl_int err = refuse_host_access(b, false, true, what); err != CL_SUCCESS) return err;
    CountedCommand counted;  // in flight until the ICD's call returned (layer/queue/epoch.hpp)
    const cl_int result = next().clEnqueueWriteBufferRect(q, b, blocking, buffer_origin, host_origin, region,
                                                          buffer_row_pitch, buffer_slice_pitch, host_row_pitch,
                                                          host_slice_pitch, ptr, n, waits, event);
    return recorded(result, q, n, waits, event);
}

// ---- fills and image writes: 1, then the ICD (CL_MEM_HOST_* does not cover them) ------

cl_int CL_API_CALL fill_buffer(cl_command_queue q, cl_mem b, const void *pattern, size_t pattern_size, size_t offset,
                               size_t size, cl_uint n, const cl_event *waits, cl_event *event) {
    if (cl_int err = refuse_read_only_write(b, "clEnqueueFillBuffer"); err != CL_SUCCESS) return err;
    CountedCommand counted;  // in flight until the ICD's call returned (layer/queue/epoch.hpp)
    return recorded(next().clEnqueueFillBuffer(q, b, pattern, pattern_size, offset, size, n, waits, event),
                    q, n, waits, event);
}

cl_int CL_API_CALL write_image(cl_command_queue q, cl_mem image, cl_bool blocking, const size_t *origin,
                               const size_t *region, size_t row_pitch, size_t slice_pitch, const void *ptr, cl_uint n,
                               const cl_event *waits, cl_event *event) {
    if (cl_int err = refuse_read_only_write(image, "clEnqueueWriteImage"); err != CL_SUCCESS) return err;
    CountedCommand counted;  // in flight until the ICD's call returned (layer/queue/epoch.hpp)
    const cl_int result =
        next().clEnqueueWriteImage(q, image, blocking, origin, region, row_pitch, slice_pitch, ptr, n, waits, event);
    return recorded(result, q, n, waits, event);
}

cl_int CL_API_CALL fill_image(cl_command_queue q, cl_mem image, const void *color, const size_t *origin,
                              const size_t *region, cl_uint n, const cl_event *waits, cl_event *event) {
    if (cl_int err = refuse_read_only_write(image, "clEnqueueFillImage"); err != CL_SUCCESS) return err;
    CountedCommand counted;  // in flight until the ICD's call returned (layer/queue/epoch.hpp)
    return recorded(next().clEnqueueFillImage(q, image, color, origin, region, n, waits, event),
                    q, n, waits, event);
}

// ---- copies: 1 on the destination, then the blitter (which passes the rest on) -------

cl_int CL_API_CALL copy_buffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset, size_t dst_offset,
                               size_t size, cl_uint n, const cl_event *waits, cl_event *event) {
    if (cl_int err = refuse_read_only_write(dst, "clEnqueueCopyBuffer"); err != CL_SUCCESS) return err;
    return recorded(enqueue_copy_buffer(q, src, dst, src_offset, dst_offset, size, n, waits, event),
                    q, n, waits, event);
}

cl_int CL_API_CALL copy_buffer_rect(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *src_origin,
                                    const size_t *dst_origin, const size_t *region, size_t src_row_pitch,
                                    size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch, cl_uint n,
                                    const cl_event *waits, cl_event *event) {
    if (cl_int err = refuse_read_only_write(dst, "clEnqueueCopyBufferRect"); err != CL_SUCCESS) return err;
    const cl_int result = enqueue_copy_buffer_rect(q, src, dst, src_origin, dst_origin, region, src_row_pitch,
                                                   src_slice_pitch, dst_row_pitch, dst_slice_pitch, n, waits, event);
    return recorded(result, q, n, waits, event);
}

cl_int CL_API_CALL copy_image(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *src_origin,
                              const size_t *dst_origin, const size_t *region, cl_uint n, const cl_event *waits,
                              cl_event *event) {
    if (cl_int err = refuse_read_only_write(dst, "clEnqueueCopyImage"); err != CL_SUCCESS) return err;
    return recorded(enqueue_copy_image(q, src, dst, src_origin, dst_origin, region, n, waits, event),
                    q, n, waits, event);
}

cl_int CL_API_CALL copy_image_to_buffer(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *src_origin,
                                        const size_t *region, size_t dst_offset, cl_uint n, const cl_event *waits,
                                        cl_event *event) {
    if (cl_int err = refuse_read_only_write(dst, "clEnqueueCopyImageToBuffer"); err != CL_SUCCESS) return err;
    return recorded(enqueue_copy_image_to_buffer(q, src, dst, src_origin, region, dst_offset, n, waits, event),
                    q, n, waits, event);
}

cl_int CL_API_CALL copy_buffer_to_image(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset,
                                        const size_t *dst_origin, const size_t *region, cl_uint n,
                                        const cl_event *waits, cl_event *event) {
    if (cl_int err = refuse_read_only_write(dst, "clEnqueueCopyBufferToImage"); err != CL_SUCCESS) return err;
    return recorded(enqueue_copy_buffer_to_image(q, src, dst, src_offset, dst_origin, region, n, waits, event),
                    q, n, waits, event);
}

// ---- maps: 1 (write maps), 2 (buffers), then the map sync (which passes the rest on) --

void *CL_API_CALL map_buffer(cl_command_queue q, cl_mem b, cl_bool blocking, cl_map_flags flags, size_t offset,
                             size_t size, cl_uint n, const cl_event *waits, cl_event *event, cl_int *errcode_ret) {
    constexpr const char *what = "clEnqueueMapBuffer";
    if (cl_int err = refuse_read_only_map(b, flags, what); err != CL_SUCCESS) return refused_map(err, errcode_ret);
    if (cl_int err = refuse_host_map(b, flags, what); err != CL_SUCCESS) return refused_map(err, errcode_ret);
    CountedCommand counted;  // in flight until the ICD's call returned (layer/queue/epoch.hpp)
    return recorded_map(enqueue_map_buffer(q, b, blocking, flags, offset, size, n, waits, event, errcode_ret),
                        q, n, waits, event);
}

void *CL_API_CALL map_image(cl_command_queue q, cl_mem image, cl_bool blocking, cl_map_flags flags,
                            const size_t *origin, const size_t *region, size_t *row_pitch, size_t *slice_pitch,
                            cl_uint n, const cl_event *waits, cl_event *event, cl_int *errcode_ret) {
    if (cl_int err = refuse_read_only_map(image, flags, "clEnqueueMapImage"); err != CL_SUCCESS)
        return refused_map(err, errcode_ret);
    CountedCommand counted;  // in flight until the ICD's call returned (layer/queue/epoch.hpp)
    void *mapped = enqueue_map_image(q, image, blocking, flags, origin, region, row_pitch, slice_pitch, n, waits,
                                     event, errcode_ret);
    return recorded_map(mapped, q, n, waits, event);
}

// ---- the unmap and the external-memory handoff: the count, then the handoff -----------

cl_int CL_API_CALL unmap_mem_object(cl_command_queue q, cl_mem mem, void *mapped_ptr, cl_uint n,
                                    const cl_event *waits, cl_event *event) {
    CountedCommand counted;  // in flight until the ICD's call returned (layer/queue/epoch.hpp)
    return recorded(enqueue_unmap_mem_object(q, mem, mapped_ptr, n, waits, event),
                    q, n, waits, event);
}

cl_int CL_API_CALL acquire_external_mem_objects(cl_command_queue q, cl_uint num_mems, const cl_mem *mems, cl_uint n,
                                                const cl_event *waits, cl_event *event) {
    CountedCommand counted;  // in flight until the ICD's call returned (layer/queue/epoch.hpp)
    OpeningsMadeHere made;  // the acquire's own openings, which its record names
    const cl_int result = enqueue_acquire_external_mem_objects(q, num_mems, mems, n, waits, event);
    note_enqueued(q, n, waits, event, result == CL_SUCCESS, CommandShape::plain, made.serials());
    return result;
}

cl_int CL_API_CALL release_external_mem_objects(cl_command_queue q, cl_uint num_mems, const cl_mem *mems, cl_uint n,
                                                const cl_event *waits, cl_event *event) {
    CountedCommand counted;  // in flight until the ICD's call returned (layer/queue/epoch.hpp)
    return recorded(enqueue_release_external_mem_objects(q, num_mems, mems, n, waits, event),
                    q, n, waits, event);
}

}  // namespace cldmabuf::chain
