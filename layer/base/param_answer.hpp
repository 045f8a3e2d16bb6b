// The OpenCL query convention (clGet*Info) for answers the layer makes itself.
#pragma once

#include <cstddef>
#include <cstring>

#include "layer/base/cl_compat.h"

namespace cldmabuf {

// Copies `bytes` of `data` to `value` (CL_INVALID_VALUE when `size` is too
// small) and reports the size through `size_ret`; either may be NULL.
inline cl_int answer(const void *data, size_t bytes, size_t size, void *value, size_t *size_ret) {
    if (value) {
        if (size < bytes) return CL_INVALID_VALUE;
        if (bytes) std::memcpy(value, data, bytes);
    }
    if (size_ret) *size_ret = bytes;
    return CL_SUCCESS;
}

}  // namespace cldmabuf
