// The fuzz targets run with no loader and no ICD.  A few pure sources share
// a file with functions that call the ICD through layer/dispatch.hpp (e.g.
// image_checks.cpp's format_supported); those calls are never reached from a
// target, so the tables here are only empty stand-ins that let them link.
#include "layer/dispatch.hpp"

namespace cldmabuf {
namespace {
cl_icd_dispatch empty_table{};
}  // namespace

const cl_icd_dispatch &next() { return empty_table; }
const cl_icd_dispatch &ours() { return empty_table; }

}  // namespace cldmabuf
