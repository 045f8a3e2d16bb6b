// What an import asks for: the one walker over the property lists of
// clCreateBufferWithProperties / clCreateImageWithProperties (the
// cl_khr_external_memory entries and the layer's own CL_MEM_DMA_BUF_*_CLDMABUF
// entries, include/CL/cl_ext_cldmabuf.h) and of clImportMemoryARM.  Every
// import path and the native-import forwarding read lists through it, so
// the device list's variable length is handled in one place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "layer/base/cl_compat.h"

namespace cldmabuf {

// Calls visit(entry, words) for each entry of a 0-terminated list (NULL: none)
// until it returns false; `words` is 2, or for CL_MEM_DEVICE_HANDLE_LIST_KHR
// (the one variable-length entry) the name, the devices and the end marker.
// Returns the terminating 0, or the entry the visit stopped at.  ARM lists
// (cl_import_properties_arm) have no device list: every entry is a pair.
template <typename T, typename Visit>
const T *walk_properties(const T *list, Visit &&visit) {
    const T *p = list;
    if (!p) return p;
    while (*p) {
        size_t words = 2;
        if constexpr (std::is_same_v<T, cl_mem_properties>) {
            if (p[0] == CL_MEM_DEVICE_HANDLE_LIST_KHR) {
                words = 1;
                while (p[words] != CL_MEM_DEVICE_HANDLE_LIST_END_KHR) ++words;
                ++words;
            }
        }
        if (!visit(p, words)) return p;
        p += words;
    }
    return p;
}

// The layer's own image properties (include/CL/cl_ext_cldmabuf.h).
struct ImageLayerProperties {
    uint64_t plane_offset = 0;
    bool has_modifier = false;
    uint64_t modifier = 0;
    bool allow_tiled = false;
    bool assume_linear = false;
};

struct ImportProperties {
    bool has_handle = false;       // a dma-buf handle was given
    int fd = -1;
    bool has_device_list = false;
    std::vector<cl_device_id> devices;
    // The properties the ICD must still see (handle, device list and the
    // layer's own entries stripped), terminated with 0, or empty when
    // nothing is left.
    std::vector<cl_mem_properties> passthrough;
    // The caller's list as given (including the terminating 0), for CL_MEM_PROPERTIES.
    std::vector<cl_mem_properties> original;
    ImageLayerProperties layer;    // image requests only
};

// Which entry point the list came from: only an image import takes the
// layer's own entries (a buffer passes them to the ICD, which refuses them).
enum class RequestKind { buffer, image };

// True when `props` mentions anything this layer handles; the fast test that
// keeps ordinary clCreateBufferWithProperties calls untouched.
bool mentions_external_memory(const cl_mem_properties *props);

// Parses `props`.  On error returns the spec's code (CL_INVALID_PROPERTY) and
// a one-line reason in `why`: a repeated entry, an empty device list, a
// device list without a handle, a handle type other than DMA_BUF, an fd out
// of range, a layer flag that is not CL_TRUE/CL_FALSE.
cl_int parse_import_request(const cl_mem_properties *props, RequestKind kind, ImportProperties *out,
                            std::string *why);
// The buffer form (RequestKind::buffer).
cl_int parse_import_properties(const cl_mem_properties *props, ImportProperties *out, std::string *why);

// True when the list names one of the layer's own properties (0x10C00..).
bool uses_layer_properties(const cl_mem_properties *props);

// The spec's rule for CL_MEM_DEVICE_HANDLE_LIST_KHR, for buffers and images:
// every listed device is a device of the context.  CL_SUCCESS, or
// CL_INVALID_DEVICE with the reason.
cl_int check_device_list(const ImportProperties &props, const std::vector<cl_device_id> &context_devices,
                         std::string *why);

// The Memory Flags table's exclusions, for an import's flags: at most one of
// CL_MEM_READ_WRITE / WRITE_ONLY / READ_ONLY, at most one of
// CL_MEM_HOST_WRITE_ONLY / HOST_READ_ONLY / HOST_NO_ACCESS, and none of
// USE/ALLOC/COPY_HOST_PTR (an import's storage is the dma-buf).  The layer
// asks this itself: the ICD sees other flags than the application gave (the
// layer adds USE_HOST_PTR or COPY_HOST_PTR, and on the copy route drops the
// host-access flags), and a lenient ICD would accept the rest (the test
// ICD's default mode did: spec C12).  Bits the table does not name are left
// to the ICD (vendor flags).  CL_SUCCESS, or CL_INVALID_VALUE with the reason.
cl_int check_import_flags(cl_mem_flags flags, std::string *why);

}  // namespace cldmabuf
