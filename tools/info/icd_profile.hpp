// The "profile" section of cldmabuf-info: what the layer knows of each
// platform's and device's ICD (layer/icd/profile.hpp), built by the layer's
// own code in this process, asking the ICD directly (below the loaded layer,
// as the layer's next() does).
#pragma once

#include "layer/base/cl_compat.h"
#include "tools/info/json.hpp"

namespace cldmabuf::info {

// The platform's profile: each fact with its value and where it came from.
// A null Json when the ICD's table cannot be reached.
Json platform_profile(cl_platform_id platform);
// The device's profile: the facts the layer's probes record (measured on a
// device's first import, in the application's process: unknown here unless
// this process imported).
Json device_profile(cl_device_id device);

}  // namespace cldmabuf::info
