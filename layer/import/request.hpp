// What a clCreateBufferWithProperties / clCreateImageWithProperties property
// list asks for, decided once: the entry (layer/entry/entry_chains.cpp)
// classifies the list into one MemRequest and hands that value on; the
// allocator (layer/alloc), the import (layer/import/buffer, image) and the
// ICD-native forwarding (layer/import/native) never read the list again.
// The list holds the cl_khr_external_memory entries and the layer's own
// CL_MEM_DMA_BUF_*_CLDMABUF entries (include/CL/cl_ext_cldmabuf.h); what is
// neither is the ICD's, passed on untouched.
//
// The same walker steps through clImportMemoryARM lists
// (layer/import/arm_properties.cpp), so a device list's variable length is
// handled in one place, and every walk is counted (property_walks) so that a
// test can hold the entry to one walk per call.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "layer/base/cl_compat.h"

namespace cldmabuf {

// Walks of property lists since the process started (walk_properties).
std::atomic<uint64_t> &property_walks();

// Calls visit(entry, words) for each entry of a 0-terminated list (NULL: none)
// until it returns false; `words` is 2, or for CL_MEM_DEVICE_HANDLE_LIST_KHR
// (the one variable-length entry) the name, the devices and the end marker.
// Returns the terminating 0, or the entry the visit stopped at.  ARM lists
// (cl_import_properties_arm) have no device list: every entry is a pair.
template <typename T, typename Visit>
const T *walk_properties(const T *list, Visit &&visit) {
    property_walks().fetch_add(1, std::memory_order_relaxed);
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

// The layer's own image properties (include/CL/cl_ext_cldmabuf.h): where the
// plane starts, its modifier, and the caller's consent to tiled or
// assumed-linear layouts.
struct ImageLayerProperties {
    uint64_t plane_offset = 0;
    bool has_modifier = false;
    uint64_t modifier = 0;
    bool allow_tiled = false;
    bool assume_linear = false;
};

// Which entry point the list came from: only an image takes the layer's own
// entries (a buffer passes them to the ICD, which refuses them).
enum class RequestKind { buffer, image };

// The list's first external memory handle is not a dma-buf (opaque fd,
// Win32, ...): the ICD's, with the list untouched.  The layer only says
// CL_INVALID_PROPERTY for a type no device concerned lists.
struct IcdHandleRequest {
    cl_mem_properties type = 0;
    bool has_device_list = false;
    std::vector<cl_device_id> devices;  // the device list as given (not checked)
};

// A dma-buf import: CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR with its fd.
struct DmabufRequest {
    int fd = -1;
    bool has_device_list = false;
    std::vector<cl_device_id> devices;  // CL_MEM_DEVICE_HANDLE_LIST_KHR, checked against the context by the import
    ImageLayerProperties layer;         // image requests only
    // The list names one of the layer's own entries (either kind): the
    // import stays with the layer even where the ICD imports dma-bufs.
    bool names_layer_properties = false;
    // The entries the ICD must still see (handle, device list and, for an
    // image, the layer's entries stripped), 0-terminated, or empty when
    // nothing is left.
    std::vector<cl_mem_properties> passthrough;
    // The caller's list as given (with its 0), for CL_MEM_PROPERTIES and for
    // an ICD that imports the dma-buf itself.
    std::vector<cl_mem_properties> original;
};

// CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF: the layer allocates a dma-buf and
// imports it as `import` says (its fd and `original` are the allocator's
// to fill in: `rest` with the new handle appended).
struct AllocationRequest {
    cl_uint exporter = 0;                     // the entry's value (CL_DMA_BUF_EXPORTER_*_CLDMABUF)
    std::vector<cl_mem_properties> original;  // the caller's list, with its 0
    std::vector<cl_mem_properties> rest;      // every other entry as given, no 0
    DmabufRequest import;
};

// The list is refused: the spec's code and a one-line reason.
struct RefusedRequest {
    cl_int err = CL_INVALID_PROPERTY;
    std::string why;
    bool allocation = false;  // the list asked for an allocation (names the refusal)
};

// Not the layer's: neither a handle, a device list nor an allocation.
struct NotOurs {};

using MemRequest = std::variant<NotOurs, RefusedRequest, AllocationRequest, DmabufRequest, IcdHandleRequest>;

// The one walk of `props`.  In this order: an allocation (refused with a
// handle, a repeated entry or a bad entry of its own); a first handle that is
// not a dma-buf (the ICD's, whatever else the list holds); a list with no
// handle and no device list (not ours); else the spec's CL_INVALID_PROPERTY
// for the first bad entry in list order (a repeated name, a second handle,
// an empty device list, an fd out of range, an image's layer flag that is
// not CL_TRUE/CL_FALSE), then for a device list without a handle; else a
// dma-buf import.
MemRequest classify_mem_request(const cl_mem_properties *props, RequestKind kind);

// A dma-buf import the layer asks for on another entry point's behalf
// (clImportMemoryARM, clCreateFromGLBuffer, an EGLImage, a VA surface's
// plane), built without a list: the value classify_mem_request makes of the
// list that says the same, so the import takes it as it takes an
// application's.  `original` is that list (with its 0): what an ICD that
// imports dma-bufs itself is given, and CL_MEM_PROPERTIES unless the caller
// clears it.  A buffer names only the handle; an image names the plane's
// offset and modifier and, where set, the consent flags, which keeps its
// import with the layer.
DmabufRequest dmabuf_buffer_request(int fd);
DmabufRequest dmabuf_image_request(int fd, const ImageLayerProperties &layer);

// Whether a 0-terminated list names an external memory handle of any type
// (an object's CL_MEM_PROPERTIES, asked at enqueue time: no classification,
// no refusal text built).
bool names_external_handle(const cl_mem_properties *props);

// The spec's rule for CL_MEM_DEVICE_HANDLE_LIST_KHR, for buffers and images:
// every listed device is a device of the context.  CL_SUCCESS, or
// CL_INVALID_DEVICE with the reason.
cl_int check_device_list(const DmabufRequest &request, const std::vector<cl_device_id> &context_devices,
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
