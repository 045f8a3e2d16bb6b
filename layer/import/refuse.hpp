// The one refusal of every import path (buffer, image, clImportMemoryARM):
// exactly one LOG_ERROR line naming the path and the reason, counted in
// stats().import_errors, and the spec's error code.
#pragma once

#include <string>

#include "layer/base/cl_compat.h"

namespace cldmabuf {

// Logs and counts; returns `err` for the caller to return or store.
cl_int refuse(cl_int err, const char *what, const std::string &why);

// The spec's error for a dma-buf mapping (mmap) that failed with `err`: the
// host's memory or mapping limits (ENOMEM, EAGAIN, ENFILE, EMFILE) are
// resources the import lacked, not a bad property; anything else (EACCES,
// ENODEV, EINVAL: this fd cannot be mapped so) is the fd's.
cl_int map_failure_error(int err);

// The cl_mem form: the code through errcode_ret, NULL for the caller to return.
cl_mem refuse_import(cl_int *errcode_ret, cl_int err, const char *what, const std::string &why);

}  // namespace cldmabuf
