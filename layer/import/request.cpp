#include "layer/import/request.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>

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

}  // namespace

bool mentions_external_memory(const cl_mem_properties *props) {
    if (!props) return false;
    for (const cl_mem_properties *p = props; *p; p += 2) {
        if (is_external_handle_type(p[0]) || p[0] == CL_MEM_DEVICE_HANDLE_LIST_KHR) return true;
        // Unknown names are value pairs; a device list is the only variable-length entry.
    }
    return false;
}

cl_int parse_import_properties(const cl_mem_properties *props, ImportProperties *out, std::string *why) {
    *out = ImportProperties{};
    if (!props) return CL_SUCCESS;
    std::vector<cl_mem_properties> seen;
    const cl_mem_properties *p = props;
    while (*p) {
        const cl_mem_properties name = *p;
        if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
            *why = "property " + hex(name) + " is given twice";
            return CL_INVALID_PROPERTY;
        }
        seen.push_back(name);
        if (name == CL_MEM_DEVICE_HANDLE_LIST_KHR) {
            out->has_device_list = true;
            ++p;
            while (*p != CL_MEM_DEVICE_HANDLE_LIST_END_KHR) {
                out->devices.push_back(reinterpret_cast<cl_device_id>(*p));
                ++p;
            }
            ++p;  // the list's end marker
            if (out->devices.empty()) {
                *why = "CL_MEM_DEVICE_HANDLE_LIST_KHR lists no device";
                return CL_INVALID_PROPERTY;
            }
            continue;
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
            const cl_mem_properties value = p[1];
            if (static_cast<int64_t>(value) < 0 || value > static_cast<cl_mem_properties>(INT_MAX)) {
                *why = "dma-buf fd " + std::to_string(static_cast<int64_t>(value)) + " is not a valid fd";
                return CL_INVALID_PROPERTY;
            }
            out->has_handle = true;
            out->fd = static_cast<int>(value);
            p += 2;
            continue;
        }
        // Not ours: the ICD decides (it knows its own properties).
        out->passthrough.push_back(p[0]);
        out->passthrough.push_back(p[1]);
        p += 2;
    }
    out->original.assign(props, p + 1);
    if (out->has_device_list && !out->has_handle) {
        *why = "CL_MEM_DEVICE_HANDLE_LIST_KHR is given without an external memory handle";
        return CL_INVALID_PROPERTY;
    }
    if (!out->passthrough.empty()) out->passthrough.push_back(0);
    return CL_SUCCESS;
}

}  // namespace cldmabuf
