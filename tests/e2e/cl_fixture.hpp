// OpenCL set-up shared by the end-to-end tests: the real ICD loader, the
// layer enabled through OPENCL_LAYERS by the test runner, one platform.
#pragma once

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <string>
#include <vector>

#include "layer/base/cl_compat.h"
#include "process_counts.hpp"

namespace e2e {

struct ClEnv {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    std::string platform_name;
    clEnqueueAcquireExternalMemObjectsKHR_fn acquire = nullptr;
    clEnqueueReleaseExternalMemObjectsKHR_fn release = nullptr;

    ClEnv();  // CLDMABUF_TEST_PLATFORM picks a platform by substring of its name
    ~ClEnv();
    ClEnv(const ClEnv &) = delete;
    ClEnv &operator=(const ClEnv &) = delete;

    cl_command_queue make_queue(cl_command_queue_properties props = 0) const;
    cl_event make_user_event() const;  // CL_SUBMITTED until the test sets its status
    cl_kernel build_kernel(const char *source, const char *name) const;
};

// The layer is enabled when it is in the dispatch chain, not merely named:
// OPENCL_LAYERS is set and the library it names answers
// clEnqueueAcquireExternalMemObjectsKHR through the ICD loader.  A wrong path
// (or a layer whose clInitLayer failed) leaves the bare ICD, which
// layer_enabled() reports as false and layer_problem() explains.
bool layer_enabled();
std::string layer_problem();  // empty when layer_enabled(); otherwise why not, in one line
bool layer_requested();       // OPENCL_LAYERS is set (ClEnv then insists on layer_enabled())

std::string platform_string(cl_platform_id p, cl_platform_info what);
bool device_has_images(const ClEnv &env);  // CL_DEVICE_IMAGE_SUPPORT
std::string device_string(cl_device_id d, cl_device_info what);
std::vector<std::string> split_words(const std::string &s);

// Open fds of this process, and its file-backed mappings other than code
// (tests/support/process_counts.hpp, shared by every suite).
using cldmabuf::test::count_mappings;
using cldmabuf::test::count_open_fds;
using cldmabuf::test::fd_is_open;

// The device's external memory import handle types (the ICD's and the
// layer's together).  The layer only ever adds DMA_BUF, so any other type in
// the list is the ICD's own cl_khr_external_memory: NVIDIA lists OPAQUE_FD.
std::vector<cl_external_memory_handle_type_khr> import_handle_types(cl_device_id device);
bool icd_has_own_external_memory(cl_device_id device);
// A handle type neither the ICD nor the layer lists (for "unsupported" checks).
cl_external_memory_handle_type_khr unlisted_handle_type(cl_device_id device);

}  // namespace e2e
