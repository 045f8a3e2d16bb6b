#include "layer/import/fresh_handles.hpp"

#include "layer/core/allocated.hpp"

namespace cldmabuf {

void retire_mem_handle(cl_mem mem) {
    imports().retire(mem);
    retire_allocated(mem);
}

cl_int CL_API_CALL retain_mem_object(cl_mem mem) {
    // Without an import the call is the ICD's, as a tail call (no frame):
    // what a program that never imports pays is the one load.
    if (no_imports()) return next().clRetainMemObject(mem);
    const cl_int err = next().clRetainMemObject(mem);
    if (err == CL_SUCCESS) imports().retain_by_app(mem);
    return err;
}

// The count goes before the ICD's release: after it the ICD may hand the
// handle to another thread's new object.
cl_int CL_API_CALL release_mem_object(cl_mem mem) {
    if (!no_imports()) imports().release_by_app(mem);
    return next().clReleaseMemObject(mem);
}

}  // namespace cldmabuf
