// The one walk of a clCreateSemaphoreWithPropertiesKHR property list: which
// error the spec names for each misuse, decided without calling the ICD or
// the kernel (unit-tested, tests/unit/test_semaphore_rules.cpp).
#pragma once

#include <vector>

#include "layer/sync/semaphore_compat.h"

namespace cldmabuf::sync {

struct SemaphoreRequest {
    std::vector<cl_semaphore_properties_khr> properties;  // as given, with the closing 0
    cl_device_id device = nullptr;  // CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR (one device), else the context's only one
    bool device_listed = false;
    bool export_sync_fd = false;    // CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR lists SYNC_FD
    bool import_sync_fd = false;    // CL_SEMAPHORE_HANDLE_SYNC_FD_KHR given
    int import_fd = -1;
};

// `context_devices`: the context's devices.  `can_export_sync_fd`: a fence
// source exists (layer/sync/fence_source.hpp).  CL_SUCCESS, or the error and
// a reason for the one log line in *why.
cl_int parse_semaphore_properties(const cl_semaphore_properties_khr *props,
                                  const std::vector<cl_device_id> &context_devices, bool can_export_sync_fd,
                                  SemaphoreRequest *out, const char **why);

}  // namespace cldmabuf::sync
