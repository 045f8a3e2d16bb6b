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
// xml/cl.xml, cl_external_memory_handle_type_khr).  Only DMA_BUF is ours:
// the import entry points hand lists with any other type to the ICD
// untouched before parsing (layer/import/native.hpp), so the refusal
// below only answers callers that parse such a list themselves.
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

std::string hex(cl_mem_properties v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

bool is_layer_property(cl_mem_properties name) {
    return name >= CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF && name <= CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF;
}

}  // namespace

bool mentions_external_memory(const cl_mem_properties *props) {
    bool found = false;
    walk_properties(props, [&](const cl_mem_properties *p, size_t) {
        found = is_external_handle_type(p[0]) || p[0] == CL_MEM_DEVICE_HANDLE_LIST_KHR;
        return !found;
    });
    return found;
}

bool uses_layer_properties(const cl_mem_properties *props) {
    bool found = false;
    walk_properties(props, [&](const cl_mem_properties *p, size_t) {
        found = is_layer_property(p[0]);
        return !found;
    });
    return found;
}

namespace {

// One entry of the list; CL_SUCCESS or CL_INVALID_PROPERTY with `why`.
cl_int take_entry(const cl_mem_properties *p, size_t words, RequestKind kind, ImportProperties *out,
                  std::string *why) {
    const cl_mem_properties name = p[0], value = p[1];
    if (name == CL_MEM_DEVICE_HANDLE_LIST_KHR) {
        out->has_device_list = true;
        for (size_t i = 1; i + 1 < words; ++i) out->devices.push_back(reinterpret_cast<cl_device_id>(p[i]));
        if (out->devices.empty()) {
            *why = "CL_MEM_DEVICE_HANDLE_LIST_KHR lists no device";
            return CL_INVALID_PROPERTY;
        }
        return CL_SUCCESS;
    }
    if (is_external_handle_type(name)) {
        if (out->has_handle) {
            *why = "more than one external memory handle is given";
            return CL_INVALID_PROPERTY;
        }
        if (name != CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR) {
            *why = "external memory handle type " + hex(name) +
                   " is not supported (only CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR)";
            return CL_INVALID_PROPERTY;
        }
        if (static_cast<int64_t>(value) < 0 || value > static_cast<cl_mem_properties>(INT_MAX)) {
            *why = "dma-buf fd " + std::to_string(static_cast<int64_t>(value)) + " is not a valid fd";
            return CL_INVALID_PROPERTY;
        }
        out->has_handle = true;
        out->fd = static_cast<int>(value);
        return CL_SUCCESS;
    }
    if (kind == RequestKind::image && is_layer_property(name)) {
        auto flag = [&](const char *label, bool *dst) {
            if (value != CL_TRUE && value != CL_FALSE) {
                *why = std::string(label) + " must be CL_TRUE or CL_FALSE";
                return CL_INVALID_PROPERTY;
            }
            *dst = value == CL_TRUE;
            return CL_SUCCESS;
        };
        switch (name) {
        case CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF: out->layer.plane_offset = value; return CL_SUCCESS;
        case CL_MEM_DMA_BUF_MODIFIER_CLDMABUF:
            out->layer.has_modifier = true;
            out->layer.modifier = value;
            return CL_SUCCESS;
        case CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF:
            return flag("CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF", &out->layer.allow_tiled);
        case CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF:
            return flag("CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF", &out->layer.assume_linear);
        default: break;  // a query name, not a property: the ICD refuses it as before
        }
    }
    // Not ours: the ICD decides (it knows its own properties).
    out->passthrough.push_back(name);
    out->passthrough.push_back(value);
    return CL_SUCCESS;
}

}  // namespace

cl_int parse_import_request(const cl_mem_properties *props, RequestKind kind, ImportProperties *out,
                            std::string *why) {
    *out = ImportProperties{};
    if (!props) return CL_SUCCESS;
    std::vector<cl_mem_properties> seen;
    cl_int err = CL_SUCCESS;
    const cl_mem_properties *end = walk_properties(props, [&](const cl_mem_properties *p, size_t words) {
        if (std::find(seen.begin(), seen.end(), p[0]) != seen.end()) {
            *why = "property " + hex(p[0]) + " is given twice";
            err = CL_INVALID_PROPERTY;
            return false;
        }
        seen.push_back(p[0]);
        err = take_entry(p, words, kind, out, why);
        return err == CL_SUCCESS;
    });
    if (err != CL_SUCCESS) return err;
    out->original.assign(props, end + 1);
    if (out->has_device_list && !out->has_handle) {
        *why = "CL_MEM_DEVICE_HANDLE_LIST_KHR is given without an external memory handle";
        return CL_INVALID_PROPERTY;
    }
    if (!out->passthrough.empty()) out->passthrough.push_back(0);
    return CL_SUCCESS;
}

cl_int parse_import_properties(const cl_mem_properties *props, ImportProperties *out, std::string *why) {
    return parse_import_request(props, RequestKind::buffer, out, why);
}

cl_int check_device_list(const ImportProperties &props, const std::vector<cl_device_id> &context_devices,
                         std::string *why) {
    for (cl_device_id d : props.devices)
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
