#include "layer/import/request.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <utility>

#include "CL/cl_ext_cldmabuf.h"
#include "layer/icd/devices.hpp"

namespace cldmabuf {
namespace {

// Every handle type of the cl_khr_external_memory family (OpenCL-Docs
// xml/cl.xml, cl_external_memory_handle_type_khr).  Only DMA_BUF is ours.
bool is_external_handle_type(cl_mem_properties name) {
    switch (name) {
    case 0x2060:  // OPAQUE_FD
    case 0x2061:  // OPAQUE_WIN32
    case 0x2062:  // OPAQUE_WIN32_KMT
    case 0x2063:  // D3D11_TEXTURE
    case 0x2064:  // D3D11_TEXTURE_KMT
    case 0x2065:  // D3D12_HEAP
    case 0x2066:  // D3D12_RESOURCE
    case CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR:
    case 0x2069:  // OPAQUE_WIN32_NAME
        return true;
    default:
        return false;
    }
}

}  // namespace

bool names_external_handle(const cl_mem_properties *props) {
    bool found = false;
    walk_properties(props, [&](const cl_mem_properties *p, size_t) {
        found = is_external_handle_type(p[0]);
        return !found;
    });
    return found;
}

namespace {

std::string hex(cl_mem_properties v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

bool is_layer_property(cl_mem_properties name) {
    return name >= CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF && name <= CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF;
}

// What the walk found: the facts that decide the request's kind, and the
// first bad entry in list order.
struct Walk {
    explicit Walk(RequestKind k) : kind(k) {}

    RequestKind kind;
    std::vector<cl_mem_properties> seen;
    cl_int err = CL_SUCCESS;
    std::string why;
    int allocations = 0;
    cl_uint exporter = 0;
    cl_mem_properties first_handle = 0;
    DmabufRequest request;
    std::vector<cl_mem_properties> rest;  // every entry but the allocation's

    void refuse(std::string reason) {
        if (err != CL_SUCCESS) return;
        err = CL_INVALID_PROPERTY;
        why = std::move(reason);
    }

    void take_layer_entry(cl_mem_properties name, cl_mem_properties value) {
        auto flag = [&](const char *label, bool *dst) {
            if (value != CL_TRUE && value != CL_FALSE) return refuse(std::string(label) + " must be CL_TRUE or CL_FALSE");
            *dst = value == CL_TRUE;
        };
        ImageLayerProperties &layer = request.layer;
        switch (name) {
        case CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF: layer.plane_offset = value; return;
        case CL_MEM_DMA_BUF_MODIFIER_CLDMABUF:
            layer.has_modifier = true;
            layer.modifier = value;
            return;
        case CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF: return flag("CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF", &layer.allow_tiled);
        case CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF:
            return flag("CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF", &layer.assume_linear);
        default:  // a query name, not a property: the ICD refuses it
            request.passthrough.insert(request.passthrough.end(), {name, value});
        }
    }

    void take_handle(cl_mem_properties name, cl_mem_properties value) {
        if (first_handle) return refuse("more than one external memory handle is given");
        first_handle = name;
        if (name != CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR) return;  // the ICD's: not read further
        if (static_cast<int64_t>(value) < 0 || value > static_cast<cl_mem_properties>(INT_MAX))
            return refuse("dma-buf fd " + std::to_string(static_cast<int64_t>(value)) + " is not a valid fd");
        request.fd = static_cast<int>(value);
    }

    void take(const cl_mem_properties *p, size_t words) {
        const cl_mem_properties name = p[0], value = p[1];
        const bool repeated = std::find(seen.begin(), seen.end(), name) != seen.end();
        seen.push_back(name);
        if (name == CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF) {
            ++allocations;
            exporter = static_cast<cl_uint>(value);
            return;
        }
        rest.insert(rest.end(), p, p + words);
        if (repeated) return refuse("property " + hex(name) + " is given twice");
        if (name == CL_MEM_DEVICE_HANDLE_LIST_KHR) {
            request.has_device_list = true;
            for (size_t i = 1; i + 1 < words; ++i) request.devices.push_back(reinterpret_cast<cl_device_id>(p[i]));
            if (words == 2) refuse("CL_MEM_DEVICE_HANDLE_LIST_KHR lists no device");
            return;
        }
        if (is_external_handle_type(name)) return take_handle(name, value);
        if (is_layer_property(name)) {
            request.names_layer_properties = true;
            if (kind == RequestKind::image) return take_layer_entry(name, value);
        }
        // Not ours: the ICD decides (it knows its own properties).
        request.passthrough.insert(request.passthrough.end(), {name, value});
    }
};

RefusedRequest refused(std::string why, bool allocation, cl_int err = CL_INVALID_PROPERTY) {
    return RefusedRequest{err, std::move(why), allocation};
}

}  // namespace

std::atomic<uint64_t> &property_walks() {
    static std::atomic<uint64_t> walks{0};
    return walks;
}

MemRequest classify_mem_request(const cl_mem_properties *props, RequestKind kind) {
    Walk walk(kind);
    const cl_mem_properties *end = walk_properties(props, [&](const cl_mem_properties *p, size_t words) {
        walk.take(p, words);
        return true;
    });
    std::vector<cl_mem_properties> original;
    if (props) original.assign(props, end + 1);
    DmabufRequest &request = walk.request;
    if (!request.passthrough.empty()) request.passthrough.push_back(0);

    if (walk.allocations) {
        if (walk.allocations > 1) return refused("CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF is given more than once", true);
        if (walk.first_handle)
            return refused("CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF cannot be combined with an external memory handle: the "
                           "layer allocates the memory",
                           true);
        if (walk.err != CL_SUCCESS) return refused(walk.why, true, walk.err);
        return AllocationRequest{walk.exporter, std::move(original), std::move(walk.rest), std::move(request)};
    }
    if (walk.first_handle && walk.first_handle != CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR)
        return IcdHandleRequest{walk.first_handle, request.has_device_list, std::move(request.devices)};
    if (!walk.first_handle && !request.has_device_list) return NotOurs{};
    if (walk.err != CL_SUCCESS) return refused(walk.why, false, walk.err);
    if (!walk.first_handle)
        return refused("CL_MEM_DEVICE_HANDLE_LIST_KHR is given without an external memory handle", false);
    request.original = std::move(original);
    return std::move(request);
}

DmabufRequest dmabuf_buffer_request(int fd) {
    DmabufRequest request;
    request.fd = fd;
    request.original = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(fd), 0};
    return request;
}

DmabufRequest dmabuf_image_request(int fd, const ImageLayerProperties &layer) {
    DmabufRequest request = dmabuf_buffer_request(fd);
    request.layer = layer;
    request.names_layer_properties = true;
    std::vector<cl_mem_properties> &list = request.original;
    list.pop_back();
    list.insert(list.end(), {CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF, layer.plane_offset});
    if (layer.has_modifier) list.insert(list.end(), {CL_MEM_DMA_BUF_MODIFIER_CLDMABUF, layer.modifier});
    if (layer.allow_tiled) list.insert(list.end(), {CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF, CL_TRUE});
    if (layer.assume_linear) list.insert(list.end(), {CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF, CL_TRUE});
    list.push_back(0);
    return request;
}

cl_int check_device_list(const DmabufRequest &request, const std::vector<cl_device_id> &context_devices,
                         std::string *why) {
    for (cl_device_id d : request.devices)
        if (!device_in(context_devices, d)) {
            *why = "a device in CL_MEM_DEVICE_HANDLE_LIST_KHR is not a device of the context";
            return CL_INVALID_DEVICE;
        }
    return CL_SUCCESS;
}

cl_int check_import_flags(cl_mem_flags flags, std::string *why) {
    auto more_than_one = [](cl_mem_flags bits) { return (bits & (bits - 1)) != 0; };
    if (more_than_one(flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY))) {
        *why = "flags combine more than one of CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY and CL_MEM_READ_ONLY";
        return CL_INVALID_VALUE;
    }
    if (more_than_one(flags & (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS))) {
        *why = "flags combine more than one of CL_MEM_HOST_WRITE_ONLY, CL_MEM_HOST_READ_ONLY and CL_MEM_HOST_NO_ACCESS";
        return CL_INVALID_VALUE;
    }
    if (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)) {
        *why = "CL_MEM_USE/ALLOC/COPY_HOST_PTR cannot be combined with an external memory handle";
        return CL_INVALID_VALUE;
    }
    return CL_SUCCESS;
}

}  // namespace cldmabuf
