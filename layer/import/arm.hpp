// cl_arm_import_memory + cl_arm_import_memory_dma_buf on top of the layer's
// KHR import (docs/arm-import.md).  FFmpeg's DRM→OpenCL mapping, OpenCV and
// many embedded pipelines import dma-bufs with clImportMemoryARM; the layer
// gives it to every ICD.
#pragma once

#include <string>

#include "layer/base/cl_compat.h"

namespace cldmabuf {

// What a clImportMemoryARM property list asks for.
struct ArmImportProperties {
    // The spec's default, or the last CL_IMPORT_TYPE_ARM entry's value (in a
    // refused list too: an ICD that imports dma-bufs itself is asked for the
    // type the list names last, whatever the layer thinks of the list).
    cl_import_properties_arm type = CL_IMPORT_TYPE_HOST_ARM;
    bool protected_memory = false;
    bool host_consistency = false;  // CL_IMPORT_DMA_BUF_DATA_CONSISTENCY_WITH_HOST_ARM
};

// Parses `props` (NULL or 0-terminated key/value pairs) in one walk, to its
// end.  CL_SUCCESS, or CL_INVALID_PROPERTY with the reason for the first bad
// entry: an unknown or repeated key, or a value the key does not take.
cl_int parse_arm_import_properties(const cl_import_properties_arm *props, ArmImportProperties *out,
                                   std::string *why);

// The clImportMemoryARM the layer hands out.
cl_mem CL_API_CALL import_memory_arm(cl_context context, cl_mem_flags flags,
                                     const cl_import_properties_arm *properties, void *memory, size_t size,
                                     cl_int *errcode_ret);

}  // namespace cldmabuf
