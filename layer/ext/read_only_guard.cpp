// Host-enqueued writes into a CL_MEM_READ_ONLY import that the ICD uses in
// place.  Such an import's mapping is read-only (layer/ext/import.cpp,
// map_dmabuf: nothing the ICD does may write the producer's buffer through
// it), so an ICD that services clEnqueueWriteBuffer or clEnqueueFillBuffer by
// writing the host memory would fault.  These commands are refused instead,
// with CL_INVALID_OPERATION and one log line: the dma-buf is read-only for
// this object.  Copies into such an import and CL_MAP_WRITE maps of it are
// refused the same way.  Installed last (layer/dispatch.cpp), so it wraps
// whatever the copy and map overrides put in those slots.
#include <cstring>

#include "layer/dispatch.hpp"
#include "layer/ext/import.hpp"
#include "layer/log.hpp"
#include "layer/registry.hpp"

namespace cldmabuf {

bool import_refuses_host_writes(cl_mem mem) {
    if (imports().empty()) return false;
    auto import = imports().find(mem);
    return import && import->mapping && !import->mapped_writable && import->strategy == ImportStrategy::zero_copy;
}

namespace {

cl_int refuse(cl_mem mem, const char *what) {
    LOG_ERROR("%s refused: %p is a CL_MEM_READ_ONLY dma-buf import used in place over a read-only mapping; "
              "import it CL_MEM_READ_WRITE to write it from the host",
              what, static_cast<void *>(mem));
    return CL_INVALID_OPERATION;
}

// The slots as they were before the guard (another override, or the ICD).
cl_icd_dispatch before;

cl_int CL_API_CALL write_buffer(cl_command_queue q, cl_mem mem, cl_bool blocking, size_t offset, size_t size,
                                const void *ptr, cl_uint n, const cl_event *waits, cl_event *event) {
    if (import_refuses_host_writes(mem)) return refuse(mem, "clEnqueueWriteBuffer");
    return before.clEnqueueWriteBuffer(q, mem, blocking, offset, size, ptr, n, waits, event);
}

cl_int CL_API_CALL write_buffer_rect(cl_command_queue q, cl_mem mem, cl_bool blocking, const size_t *buffer_origin,
                                     const size_t *host_origin, const size_t *region, size_t buffer_row_pitch,
                                     size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
                                     const void *ptr, cl_uint n, const cl_event *waits, cl_event *event) {
    if (import_refuses_host_writes(mem)) return refuse(mem, "clEnqueueWriteBufferRect");
    return before.clEnqueueWriteBufferRect(q, mem, blocking, buffer_origin, host_origin, region, buffer_row_pitch,
                                           buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, n, waits, event);
}

cl_int CL_API_CALL fill_buffer(cl_command_queue q, cl_mem mem, const void *pattern, size_t pattern_size,
                               size_t offset, size_t size, cl_uint n, const cl_event *waits, cl_event *event) {
    if (import_refuses_host_writes(mem)) return refuse(mem, "clEnqueueFillBuffer");
    return before.clEnqueueFillBuffer(q, mem, pattern, pattern_size, offset, size, n, waits, event);
}

cl_int CL_API_CALL write_image(cl_command_queue q, cl_mem image, cl_bool blocking, const size_t *origin,
                               const size_t *region, size_t row_pitch, size_t slice_pitch, const void *ptr, cl_uint n,
                               const cl_event *waits, cl_event *event) {
    if (import_refuses_host_writes(image)) return refuse(image, "clEnqueueWriteImage");
    return before.clEnqueueWriteImage(q, image, blocking, origin, region, row_pitch, slice_pitch, ptr, n, waits,
                                      event);
}

cl_int CL_API_CALL fill_image(cl_command_queue q, cl_mem image, const void *color, const size_t *origin,
                              const size_t *region, cl_uint n, const cl_event *waits, cl_event *event) {
    if (import_refuses_host_writes(image)) return refuse(image, "clEnqueueFillImage");
    return before.clEnqueueFillImage(q, image, color, origin, region, n, waits, event);
}

cl_int CL_API_CALL copy_buffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset, size_t dst_offset,
                               size_t size, cl_uint n, const cl_event *waits, cl_event *event) {
    if (import_refuses_host_writes(dst)) return refuse(dst, "clEnqueueCopyBuffer");
    return before.clEnqueueCopyBuffer(q, src, dst, src_offset, dst_offset, size, n, waits, event);
}

cl_int CL_API_CALL copy_buffer_rect(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *src_origin,
                                    const size_t *dst_origin, const size_t *region, size_t src_row_pitch,
                                    size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch, cl_uint n,
                                    const cl_event *waits, cl_event *event) {
    if (import_refuses_host_writes(dst)) return refuse(dst, "clEnqueueCopyBufferRect");
    return before.clEnqueueCopyBufferRect(q, src, dst, src_origin, dst_origin, region, src_row_pitch, src_slice_pitch,
                                          dst_row_pitch, dst_slice_pitch, n, waits, event);
}

cl_int CL_API_CALL copy_image(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *src_origin,
                              const size_t *dst_origin, const size_t *region, cl_uint n, const cl_event *waits,
                              cl_event *event) {
    if (import_refuses_host_writes(dst)) return refuse(dst, "clEnqueueCopyImage");
    return before.clEnqueueCopyImage(q, src, dst, src_origin, dst_origin, region, n, waits, event);
}

cl_int CL_API_CALL copy_image_to_buffer(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *src_origin,
                                        const size_t *region, size_t dst_offset, cl_uint n, const cl_event *waits,
                                        cl_event *event) {
    if (import_refuses_host_writes(dst)) return refuse(dst, "clEnqueueCopyImageToBuffer");
    return before.clEnqueueCopyImageToBuffer(q, src, dst, src_origin, region, dst_offset, n, waits, event);
}

cl_int CL_API_CALL copy_buffer_to_image(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset,
                                        const size_t *dst_origin, const size_t *region, cl_uint n,
                                        const cl_event *waits, cl_event *event) {
    if (import_refuses_host_writes(dst)) return refuse(dst, "clEnqueueCopyBufferToImage");
    return before.clEnqueueCopyBufferToImage(q, src, dst, src_offset, dst_origin, region, n, waits, event);
}

constexpr cl_map_flags kWriteMaps = CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;

void *CL_API_CALL map_buffer(cl_command_queue q, cl_mem mem, cl_bool blocking, cl_map_flags flags, size_t offset,
                             size_t size, cl_uint n, const cl_event *waits, cl_event *event, cl_int *errcode_ret) {
    if ((flags & kWriteMaps) && import_refuses_host_writes(mem)) {
        const cl_int err = refuse(mem, "clEnqueueMapBuffer with CL_MAP_WRITE");
        if (errcode_ret) *errcode_ret = err;
        return nullptr;
    }
    return before.clEnqueueMapBuffer(q, mem, blocking, flags, offset, size, n, waits, event, errcode_ret);
}

void *CL_API_CALL map_image(cl_command_queue q, cl_mem image, cl_bool blocking, cl_map_flags flags,
                            const size_t *origin, const size_t *region, size_t *row_pitch, size_t *slice_pitch,
                            cl_uint n, const cl_event *waits, cl_event *event, cl_int *errcode_ret) {
    if ((flags & kWriteMaps) && import_refuses_host_writes(image)) {
        const cl_int err = refuse(image, "clEnqueueMapImage with CL_MAP_WRITE");
        if (errcode_ret) *errcode_ret = err;
        return nullptr;
    }
    return before.clEnqueueMapImage(q, image, blocking, flags, origin, region, row_pitch, slice_pitch, n, waits,
                                    event, errcode_ret);
}

}  // namespace

void install_read_only_guard(cl_icd_dispatch &table) {
    before = table;
#define GUARD(slot, fn) \
    if (table.slot) table.slot = fn
    GUARD(clEnqueueWriteBuffer, write_buffer);
    GUARD(clEnqueueWriteBufferRect, write_buffer_rect);
    GUARD(clEnqueueFillBuffer, fill_buffer);
    GUARD(clEnqueueWriteImage, write_image);
    GUARD(clEnqueueFillImage, fill_image);
    GUARD(clEnqueueCopyBuffer, copy_buffer);
    GUARD(clEnqueueCopyBufferRect, copy_buffer_rect);
    GUARD(clEnqueueCopyImage, copy_image);
    GUARD(clEnqueueCopyImageToBuffer, copy_image_to_buffer);
    GUARD(clEnqueueCopyBufferToImage, copy_buffer_to_image);
    GUARD(clEnqueueMapBuffer, map_buffer);
    GUARD(clEnqueueMapImage, map_image);
#undef GUARD
}

}  // namespace cldmabuf
