// The dispatch tables: the one below us (`next()`) and the one we hand the
// loader (`ours()`).  Calls the layer does not intercept are never wrapped:
// our table starts as a copy of the target's, so the loader jumps straight
// to the next layer or the ICD and those calls cost nothing extra.  What the
// layer does intercept is listed in one place, layer/entry/dispatch_table.cpp.
#pragma once

#include "layer/base/cl_compat.h"

namespace cldmabuf {

namespace dispatch_tables {
// Filled by init_dispatch (layer/entry/dispatch_table.cpp); read through next() / ours().
// Hidden: the layer's own calls down address them relative to the code.
extern cl_icd_dispatch guarded_next __attribute__((visibility("hidden")));
extern cl_icd_dispatch layer_dispatch __attribute__((visibility("hidden")));
}  // namespace dispatch_tables

// The dispatch table below the layer, its 2.x/3.0 slots guarded for older
// ICDs (layer/icd/slots.hpp).  Valid after init.  Inline: a pass-through
// wrapper's call down is then one load and a jump (a pass-through's bound:
// layer/base/name_filter.hpp).
inline const cl_icd_dispatch &next() { return dispatch_tables::guarded_next; }

// The layer's own table (what the loader calls).  The one way a feature
// re-enters the layer's entry points (e.g. egl importing an EGLImage through
// the layer's clCreateImageWithProperties): read at call time, it runs
// every check the application's call would.
inline const cl_icd_dispatch &ours() { return dispatch_tables::layer_dispatch; }

}  // namespace cldmabuf
