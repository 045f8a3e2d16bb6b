// Where the platform's ICD has cl_intel_va_api_media_sharing itself (NEO),
// the layer stays out of the way: its entry points forward to the ICD's.
#pragma once

#include "layer/base/cl_compat.h"

namespace cldmabuf::va {

// The platform's ICD lists cl_intel_va_api_media_sharing (asked once per platform).
bool icd_has_va(cl_platform_id platform);
// The ICD's own entry point by name, or nullptr.
void *icd_function(cl_platform_id platform, const char *name);

}  // namespace cldmabuf::va
