// Handles the ICD hands out again.  An ICD may destroy a
// memory object and give its handle value to the next one before it calls
// the first one's destructor callbacks (NVIDIA 580 does), so the registry
// may still hold an import, or a sub-buffer of one, under a handle that now
// names a plain buffer.  Every entry point that returns a memory object the
// ICD created passes it through fresh_mem(): the registry retires whatever
// it held under that handle (ImportRegistry::retire, layer/core/registry.hpp);
// the old import's own late callback still tears the old import down, once
// (layer/import/record.cpp).  The application's clRetainMemObject /
// clReleaseMemObject keep the registry's count of its references, so an
// import is dead for lookups from the application's last release on, even
// while the ICD (or the layer) holds the object.
//
// A program that never imports pays one relaxed load on these calls.
// The allocator's table (layer/core/allocated.cpp) is retired the same way:
// a plain buffer on an old allocation's handle answers no
// CL_MEM_DMA_BUF_FD_CLDMABUF, exporter or property list of the allocation.
// Installed in layer/entry/dispatch_table.cpp; the layer's own creation entries
// (buffer.cpp, image.cpp, arm.cpp, egl's forwarding) call fresh_mem()
// where they return the ICD's object unchanged.
#pragma once

#include <type_traits>
#include <utility>

#include "layer/core/dispatch.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {

// Retires what the registry and the allocator's table hold under `mem`.
void retire_mem_handle(cl_mem mem);

inline cl_mem fresh_mem(cl_mem mem) {
    if (__builtin_expect(!no_mem_handles(), 0) && mem) retire_mem_handle(mem);
    return mem;
}

cl_int CL_API_CALL retain_mem_object(cl_mem mem);
cl_int CL_API_CALL release_mem_object(cl_mem mem);

namespace fresh_detail {

template <auto Slot, typename Fn>
struct Created;

template <auto Slot, typename... Args>
struct Created<Slot, cl_mem(CL_API_CALL *)(Args...)> {
    static cl_mem CL_API_CALL call(Args... args) { return fresh_mem((next().*Slot)(args...)); }
};

template <auto Slot>
using SlotType = std::remove_cvref_t<decltype(std::declval<cl_icd_dispatch &>().*Slot)>;

}  // namespace fresh_detail

// fresh_mem_slot<&cl_icd_dispatch::clCreateBuffer>: next()'s function, its
// result through fresh_mem().
template <auto Slot>
inline constexpr fresh_detail::SlotType<Slot> fresh_mem_slot =
    &fresh_detail::Created<Slot, fresh_detail::SlotType<Slot>>::call;

}  // namespace cldmabuf
