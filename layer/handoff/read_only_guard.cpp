// Host-enqueued writes into a CL_MEM_READ_ONLY import that the ICD uses in
// place.  Such an import's mapping is read-only (layer/import/record.hpp,
// map_dmabuf: nothing the ICD does may write the producer's buffer through
// it), so an ICD that services clEnqueueWriteBuffer or clEnqueueFillBuffer by
// writing the host memory would fault.  These commands are refused instead,
// with CL_INVALID_OPERATION and one log line: the dma-buf is read-only for
// this object.  Copies into such an import and CL_MAP_WRITE maps of it are
// refused the same way.  The checks run first in every write, fill, copy and
// map entry (layer/entry/entry_chains.cpp), before the blitter or map sync sees
// the call.
#include "layer/handoff/read_only_guard.hpp"

#include "layer/base/log.hpp"
#include "layer/handoff/handoff_route.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {

bool import_refuses_host_writes(cl_mem mem) {
    if (imports().empty()) return false;
    auto import = imports().find(mem);
    return import && import->mapping && !import->mapped_writable && route_of(*import).maps_dmabuf();
}

namespace {

cl_int refuse_read_only(cl_mem mem, const char *what, const char *how) {
    LOG_ERROR("%s%s refused: %p is a CL_MEM_READ_ONLY dma-buf import used in place over a read-only mapping; "
              "import it CL_MEM_READ_WRITE to write it from the host",
              what, how, static_cast<void *>(mem));
    return CL_INVALID_OPERATION;
}

}  // namespace

cl_int refuse_read_only_write(cl_mem mem, const char *what) {
    return import_refuses_host_writes(mem) ? refuse_read_only(mem, what, "") : CL_SUCCESS;
}

cl_int refuse_read_only_map(cl_mem mem, cl_map_flags flags, const char *what) {
    constexpr cl_map_flags write_maps = CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION;
    if (!(flags & write_maps) || !import_refuses_host_writes(mem)) return CL_SUCCESS;
    return refuse_read_only(mem, what, " with CL_MAP_WRITE");
}

}  // namespace cldmabuf
