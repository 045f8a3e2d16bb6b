#include "layer/import/fresh_handles.hpp"

#include "layer/core/allocated.hpp"

namespace cldmabuf {

void retire_mem_handle(cl_mem mem) {
    imports().retire(mem);
    retire_allocated(mem);
}

namespace {

// Out of line, so that the calls below need no stack frame while no import
// is alive: a load, a test and the jump to the ICD.
[[gnu::noinline]] cl_int retain_counted(cl_mem mem) {
    const cl_int err = next().clRetainMemObject(mem);
    if (err == CL_SUCCESS) imports().retain_by_app(mem);
    return err;
}

// The count goes before the ICD's release: after it the ICD may hand the
// handle to another thread's new object.
[[gnu::noinline]] cl_int release_counted(cl_mem mem) {
    imports().release_by_app(mem);
    return next().clReleaseMemObject(mem);
}

}  // namespace

cl_int CL_API_CALL retain_mem_object(cl_mem mem) {
    if (__builtin_expect(!no_imports(), 0)) return retain_counted(mem);
    return next().clRetainMemObject(mem);
}

cl_int CL_API_CALL release_mem_object(cl_mem mem) {
    if (__builtin_expect(!no_imports(), 0)) return release_counted(mem);
    return next().clReleaseMemObject(mem);
}

}  // namespace cldmabuf
