// "Could this query name be one the layer answers?" in a bit test, for the
// wrappers that pass almost every call through (clGetMemObjectInfo,
// clGetDeviceInfo).  A pass-through's bound is +5 instructions over the ICD
// alone (docs/benchmarks.md), and the loader's extra indirection is one of
// them, so the wrapper may spend four: load a 64-bit mask, test the bit of
// the name's low six bits, branch, jump to the next table's function.  A name that shares its low six bits
// with one of the layer's only costs the full (exact) check in the
// out-of-line answer; the filter never says "not ours" for a name that is.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layer/base/cl_compat.h"

namespace cldmabuf {

struct NameFilter {
    uint64_t maybe = 0;

    template <size_t N>
    constexpr explicit NameFilter(const cl_uint (&names)[N]) {
        for (cl_uint n : names) maybe |= uint64_t{1} << (n & 63);
    }
    constexpr bool may_be_ours(cl_uint name) const { return (maybe >> (name & 63)) & 1; }
    // A filter for this one's names and `other`'s (two features answering
    // one query, e.g. the import's and VA-API's clGetMemObjectInfo names).
    constexpr NameFilter with(const NameFilter &other) const {
        NameFilter both = *this;
        both.maybe |= other.maybe;
        return both;
    }
};

}  // namespace cldmabuf
