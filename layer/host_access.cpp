// The application's host-access flags on copy-route imports.  Their device
// buffer is created without CL_MEM_HOST_* (layer/ext/import.cpp) so that the
// layer's own Write/ReadBuffer on acquire/release are legal; the
// application's host reads, writes and maps are held to its own flags here,
// with the spec's CL_INVALID_OPERATION.  Zero-copy imports carry the flags
// into the ICD, which judges them itself.  Plain cl_mems cost one relaxed
// load while no import exists.
#include "layer/dispatch.hpp"
#include "layer/log.hpp"
#include "layer/registry.hpp"

namespace cldmabuf {
namespace {

decltype(cl_icd_dispatch::clEnqueueMapBuffer) previous_map_buffer = nullptr;

cl_int host_may(cl_mem mem, bool read, bool write, const char *what) {
    if (imports().empty()) return CL_SUCCESS;
    auto import = imports().find(mem);
    if (!import || import->strategy != ImportStrategy::copy || import->is_image) return CL_SUCCESS;
    const cl_mem_flags f = import->flags;
    const bool no_read = f & (CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_WRITE_ONLY);
    const bool no_write = f & (CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_READ_ONLY);
    if ((read && no_read) || (write && no_write)) {
        LOG_ERROR("%s: the import was created with %s: the host may not %s it", what,
                  (f & CL_MEM_HOST_NO_ACCESS)    ? "CL_MEM_HOST_NO_ACCESS"
                  : (f & CL_MEM_HOST_READ_ONLY) ? "CL_MEM_HOST_READ_ONLY"
                                                : "CL_MEM_HOST_WRITE_ONLY",
                  read && no_read ? "read" : "write");
        return CL_INVALID_OPERATION;
    }
    return CL_SUCCESS;
}

cl_int CL_API_CALL read_buffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset, size_t size,
                               void *ptr, cl_uint n, const cl_event *waits, cl_event *event) {
    if (cl_int err = host_may(b, true, false, "clEnqueueReadBuffer"); err != CL_SUCCESS) return err;
    return next().clEnqueueReadBuffer(q, b, blocking, offset, size, ptr, n, waits, event);
}

cl_int CL_API_CALL write_buffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset, size_t size,
                                const void *ptr, cl_uint n, const cl_event *waits, cl_event *event) {
    if (cl_int err = host_may(b, false, true, "clEnqueueWriteBuffer"); err != CL_SUCCESS) return err;
    return next().clEnqueueWriteBuffer(q, b, blocking, offset, size, ptr, n, waits, event);
}

cl_int CL_API_CALL read_buffer_rect(cl_command_queue q, cl_mem b, cl_bool blocking, const size_t *bo,
                                    const size_t *ho, const size_t *region, size_t brp, size_t bsp, size_t hrp,
                                    size_t hsp, void *ptr, cl_uint n, const cl_event *waits, cl_event *event) {
    if (cl_int err = host_may(b, true, false, "clEnqueueReadBufferRect"); err != CL_SUCCESS) return err;
    return next().clEnqueueReadBufferRect(q, b, blocking, bo, ho, region, brp, bsp, hrp, hsp, ptr, n, waits, event);
}

cl_int CL_API_CALL write_buffer_rect(cl_command_queue q, cl_mem b, cl_bool blocking, const size_t *bo,
                                     const size_t *ho, const size_t *region, size_t brp, size_t bsp, size_t hrp,
                                     size_t hsp, const void *ptr, cl_uint n, const cl_event *waits,
                                     cl_event *event) {
    if (cl_int err = host_may(b, false, true, "clEnqueueWriteBufferRect"); err != CL_SUCCESS) return err;
    return next().clEnqueueWriteBufferRect(q, b, blocking, bo, ho, region, brp, bsp, hrp, hsp, ptr, n, waits, event);
}

void *CL_API_CALL map_buffer(cl_command_queue q, cl_mem b, cl_bool blocking, cl_map_flags flags, size_t offset,
                             size_t size, cl_uint n, const cl_event *waits, cl_event *event, cl_int *errcode_ret) {
    const bool read = flags & CL_MAP_READ, write = flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION);
    if (cl_int err = host_may(b, read, write, "clEnqueueMapBuffer"); err != CL_SUCCESS) {
        if (errcode_ret) *errcode_ret = err;
        return nullptr;
    }
    return previous_map_buffer(q, b, blocking, flags, offset, size, n, waits, event, errcode_ret);
}

}  // namespace

// After the map overrides (layer/ext/map_sync.cpp): wraps theirs.
void install_host_access_overrides(cl_icd_dispatch &table) {
    table.clEnqueueReadBuffer = read_buffer;
    table.clEnqueueWriteBuffer = write_buffer;
    table.clEnqueueReadBufferRect = read_buffer_rect;
    table.clEnqueueWriteBufferRect = write_buffer_rect;
    previous_map_buffer = table.clEnqueueMapBuffer;
    table.clEnqueueMapBuffer = map_buffer;
}

}  // namespace cldmabuf
