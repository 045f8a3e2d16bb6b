// The fuzz targets run with no loader and no ICD.  A few pure sources share
// a file with functions that call the ICD through layer/core/dispatch.hpp (e.g.
// image_checks.cpp's format_supported); those calls are never reached from a
// target, so the tables next() and ours() read are defined here, empty, only
// so that those files link without layer/core/dispatch.cpp.
#include "layer/core/dispatch.hpp"

namespace cldmabuf::dispatch_tables {

cl_icd_dispatch guarded_next{};
cl_icd_dispatch layer_dispatch{};

}  // namespace cldmabuf::dispatch_tables
