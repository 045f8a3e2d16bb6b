// The application's host-access flags on copy-route imports.  Their device
// buffer is created without CL_MEM_HOST_* (layer/import/buffer.cpp) so that
// the layer's own Write/ReadBuffer on acquire/release are legal; the
// application's host reads, writes and maps are held to its own flags here,
// with the spec's CL_INVALID_OPERATION.  Zero-copy imports carry the flags
// into the ICD, which judges them itself.  Plain cl_mems cost one relaxed
// load while no import exists.
#include "layer/handoff/host_access.hpp"

#include "layer/base/log.hpp"
#include "layer/handoff/handoff_route.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {

cl_int refuse_host_access(cl_mem mem, bool read, bool write, const char *what) {
    if (imports().empty()) return CL_SUCCESS;
    auto import = imports().find(mem);
    if (!import || !route_of(*import).holds_host_flags(*import)) return CL_SUCCESS;
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

cl_int refuse_host_map(cl_mem mem, cl_map_flags flags, const char *what) {
    const bool read = flags & CL_MAP_READ, write = flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION);
    return refuse_host_access(mem, read, write, what);
}

}  // namespace cldmabuf
