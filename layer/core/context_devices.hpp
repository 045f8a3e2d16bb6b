// The devices each context was created with, as the application named them
// to clCreateContext.  CL_CONTEXT_DEVICES "returns the list of devices and
// sub-devices in context", but PoCL (3.1 and 6 alike) answers a context of
// sub-devices with their parent device, one entry: checked without the
// layer by the spec suite's "ICD: CL_CONTEXT_DEVICES of a sub-device context"
// (conformance/spec/test_spec_create.cpp).  The layer validates
// CL_MEM_DEVICE_HANDLE_LIST_KHR, queues and semaphore device lists against a
// context's devices, so it keeps its own record and asks the ICD only for
// contexts it has none of (clCreateContextFromType's: root devices, which the
// ICD reports right).
#pragma once

#include <vector>

#include "layer/base/cl_compat.h"

namespace cldmabuf {

// clCreateContext succeeded with these devices (replaces a record a freed
// context left at the same address).
void remember_context_devices(cl_context context, const cl_device_id *devices, cl_uint n);
// The context is gone, or was made without a device list.
void forget_context_devices(cl_context context);
// The recorded devices; false when the layer has no record of `context`.
bool recorded_context_devices(cl_context context, std::vector<cl_device_id> *out);

}  // namespace cldmabuf
