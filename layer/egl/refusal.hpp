// How layer/egl's creation entry points refuse a call: one log line naming
// the API call, the error counted with every other refused import
// (CLDMABUF_STATS' import_errors), the spec's code through errcode_ret.
#pragma once

#include <cstdint>
#include <string>

#include "layer/base/cl_compat.h"

namespace cldmabuf::egl {

// Refuses the call.  Returns NULL for the caller to return.
cl_mem refuse(cl_int *errcode_ret, cl_int err, const char *what, const std::string &why);

// The layer's own buffer/image import (which egl calls) failed: it has
// already counted its refusal, so this only names the egl call that made
// the import, and passes the code on.  Returns NULL.
cl_mem import_failed(cl_int *errcode_ret, cl_int err, const char *what, const std::string &why);

// The access flags every GL/EGL object creation takes (no host pointer flags).
bool valid_access_flags(cl_mem_flags flags);
inline constexpr const char *access_flags_rule =
    "flags must be CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY or CL_MEM_READ_WRITE";

std::string hex_text(uint64_t v);

}  // namespace cldmabuf::egl
