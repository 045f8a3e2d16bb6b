// cldmabuf-info's VA-API section (docs/va-api.md): whether each platform
// lists cl_intel_va_api_media_sharing (and whether the ICD has it itself or
// the layer adds it), a VA display on the first render node that initialises
// (libva loaded at run time, as the layer does: no link dependency), and the
// devices clGetDeviceIDsFromVA_APIMediaAdapterINTEL pairs with it.
#pragma once

#include <vector>

#include "tools/info/cl_view.hpp"
#include "tools/info/json.hpp"

namespace cldmabuf::info {

// {"display": {"node", "vendor"} or {"reason"},
//  "platforms": [{"index", "extension", "by": "icd"|"layer"|"none", "paired": [names] | "error"}]}
// `icd_only` is the view without the layer (empty when not compared).
Json va_report(const std::vector<ClPlatform> &with, const std::vector<ClPlatform> &icd_only);

}  // namespace cldmabuf::info
