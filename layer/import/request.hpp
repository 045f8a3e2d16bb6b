// Parsing of the memory properties cl_khr_external_memory adds to
// clCreateBufferWithProperties / clCreateImageWithProperties.
#pragma once

#include <string>
#include <vector>

#include "layer/cl_compat.h"

namespace cldmabuf {

struct ImportProperties {
    bool has_handle = false;       // a dma-buf handle was given
    int fd = -1;
    bool has_device_list = false;
    std::vector<cl_device_id> devices;
    // The properties the ICD must still see (handle and device list stripped),
    // terminated with 0, or empty when nothing is left.
    std::vector<cl_mem_properties> passthrough;
    // The caller's list as given (including the terminating 0), for CL_MEM_PROPERTIES.
    std::vector<cl_mem_properties> original;
};

// True when `props` mentions anything this layer handles; the fast test that
// keeps ordinary clCreateBufferWithProperties calls untouched.
bool mentions_external_memory(const cl_mem_properties *props);

// Parses `props`.  On error returns the spec's code (CL_INVALID_PROPERTY) and
// a one-line reason in `why`.
cl_int parse_import_properties(const cl_mem_properties *props, ImportProperties *out, std::string *why);

}  // namespace cldmabuf
