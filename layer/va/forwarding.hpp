// Where the platform's ICD has cl_intel_va_api_media_sharing itself (NEO),
// the layer stays out of the way: its entry points forward to the ICD's.
#pragma once

#include "layer/base/cl_compat.h"

namespace cldmabuf::va {

// The platform's ICD lists cl_intel_va_api_media_sharing (asked once per platform).
bool icd_has_va(cl_platform_id platform);
// The ICD's own entry point by name, or nullptr.
void *icd_function(cl_platform_id platform, const char *name);

cl_platform_id platform_of_context(cl_context context);
cl_platform_id platform_of_device(cl_device_id device);
cl_context context_of_queue(cl_command_queue queue);

}  // namespace cldmabuf::va
