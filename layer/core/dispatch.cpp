#include "layer/core/dispatch.hpp"

namespace cldmabuf {
namespace dispatch_tables {
// The loader's table with its 2.x/3.0 slots guarded (layer/icd/slots.hpp,
// built by init_dispatch in layer/entry/dispatch_table.cpp):
// what the layer calls.  The layer's own table copies the loader's unguarded,
// so calls the layer passes through reach the ICD exactly as without it.
cl_icd_dispatch guarded_next;
cl_icd_dispatch layer_dispatch;
}  // namespace dispatch_tables

}  // namespace cldmabuf
