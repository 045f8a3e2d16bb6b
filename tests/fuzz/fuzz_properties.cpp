// Fuzz target 1: the property classifier (layer/import/request.*) over KHR
// external-memory lists and the layer's own image properties, for buffers
// and images, and clImportMemoryARM's lists (layer/import/arm_properties.cpp).
//
// The input is turned into a well-formed list (pairs, a device list closed
// by CL_MEM_DEVICE_HANDLE_LIST_END_KHR, a final 0: the shape the spec asks
// of the caller) whose names and values are drawn mostly from the ones the
// layer handles.  Asserted, beyond "no crash, no leak, no UB":
//  * not ours exactly when the list has no handle and no device list; the
//    ICD's exactly when its first handle is not a dma-buf; a refusal is
//    CL_INVALID_PROPERTY with a reason;
//  * a dma-buf import: `original` is the caller's list; `passthrough` is
//    empty or 0-terminated pairs holding none of the layer's names (handles,
//    device list, and for images its own 0x10C00.. entries) and classifies
//    again as not ours; the fd is a non-negative int; the layer's names are
//    noticed for either kind;
//  * classifying is deterministic (a second pass gives the same kind);
//  * ARM lists: only the three keys, each once, booleans CL_TRUE/CL_FALSE.
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "fuzz_input.hpp"
#include "layer/import/arm.hpp"
#include "layer/import/request.hpp"

using namespace cldmabuf;

namespace {

constexpr cl_mem_properties kDmaBuf = CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR;
constexpr cl_mem_properties kDeviceList = CL_MEM_DEVICE_HANDLE_LIST_KHR;

bool is_handle_type(cl_mem_properties n) { return (n >= 0x2060 && n <= 0x2067) || n == 0x2069; }
bool is_layer_name(cl_mem_properties n) {
    return n >= CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF && n <= CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF;
}

std::vector<cl_mem_properties> khr_list(FuzzedDataProvider &in) {
    std::vector<cl_mem_properties> list;
    const int entries = in.ConsumeIntegralInRange<int>(0, 8);
    for (int e = 0; e < entries && in.remaining_bytes(); ++e) {
        const uint64_t name = fuzz::pick(
            in, {kDmaBuf, kDeviceList, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x2065, 0x2066, 0x2068, 0x2069,
                 CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF, CL_MEM_DMA_BUF_MODIFIER_CLDMABUF,
                 CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF, CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF,
                 CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, 0x10C05, 0x4216 /* CL_MEM_CHANNEL_INTEL */,
                 0x10C0F, 0x1111});
        if (name == 0) continue;  // the terminator comes last
        list.push_back(name);
        if (name == kDeviceList) {
            const int n = in.ConsumeIntegralInRange<int>(0, 4);
            for (int d = 0; d < n; ++d) {
                const uint64_t dev = fuzz::pick(in, {0x10, 0x20, 0x30, 0x1000});
                if (dev) list.push_back(dev);  // a device handle is never NULL (NULL closes the list)
            }
            list.push_back(CL_MEM_DEVICE_HANDLE_LIST_END_KHR);
        } else {
            list.push_back(fuzz::pick(in, {0, 1, 2, 3, 7, 1023, INT_MAX, uint64_t{INT_MAX} + 1, UINT32_MAX,
                                           static_cast<uint64_t>(-1), CL_TRUE, CL_FALSE, 4096,
                                           0x0100000000000001ull, 0x0100000000000002ull, 0x00ffffffffffffffull}));
        }
    }
    list.push_back(0);
    return list;
}

bool contains(const std::vector<cl_mem_properties> &list, bool (*pred)(cl_mem_properties)) {
    bool found = false;
    walk_properties(list.data(), [&](const cl_mem_properties *p, size_t) {
        found = found || pred(p[0]);
        return true;
    });
    return found;
}

// The first handle entry of `list` (0: none).
cl_mem_properties first_handle(const std::vector<cl_mem_properties> &list) {
    cl_mem_properties found = 0;
    walk_properties(list.data(), [&](const cl_mem_properties *p, size_t) {
        if (is_handle_type(p[0])) found = p[0];
        return found == 0;
    });
    return found;
}

void check_khr(const std::vector<cl_mem_properties> &list, RequestKind kind) {
    const MemRequest request = classify_mem_request(list.data(), kind);
    const bool mentions = contains(list, [](cl_mem_properties n) { return is_handle_type(n) || n == kDeviceList; });
    const cl_mem_properties handle = first_handle(list);
    // Deterministic: the same list gives the same kind of answer.
    FUZZ_ASSERT(classify_mem_request(list.data(), kind).index() == request.index());
    // The table draws no allocation entry, but a raw name may be one: then
    // the answer is the allocation or its refusal, never an import.
    if (contains(list, [](cl_mem_properties n) { return n == CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF; })) {
        FUZZ_ASSERT(std::holds_alternative<AllocationRequest>(request) ||
                    std::holds_alternative<RefusedRequest>(request));
        return;
    }
    FUZZ_ASSERT(!std::holds_alternative<AllocationRequest>(request));
    FUZZ_ASSERT(std::holds_alternative<NotOurs>(request) == !mentions);
    FUZZ_ASSERT(std::holds_alternative<IcdHandleRequest>(request) == (handle != 0 && handle != kDmaBuf));
    if (const auto *icd = std::get_if<IcdHandleRequest>(&request)) FUZZ_ASSERT(icd->type == handle);
    if (const auto *refused = std::get_if<RefusedRequest>(&request)) {
        FUZZ_ASSERT(refused->err == CL_INVALID_PROPERTY && !refused->why.empty() && !refused->allocation);
        return;
    }
    const auto *out = std::get_if<DmabufRequest>(&request);
    if (!out) return;
    FUZZ_ASSERT(handle == kDmaBuf);
    FUZZ_ASSERT(out->original == list);
    if (out->has_device_list) FUZZ_ASSERT(!out->devices.empty());
    FUZZ_ASSERT(out->fd >= 0);
    FUZZ_ASSERT(out->names_layer_properties == contains(list, [](cl_mem_properties n) {
                    return n >= CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF && n <= CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF;
                }));
    if (!out->passthrough.empty()) {
        FUZZ_ASSERT(out->passthrough.back() == 0 && out->passthrough.size() % 2 == 1);
        for (size_t i = 0; i + 1 < out->passthrough.size(); i += 2) {
            const cl_mem_properties n = out->passthrough[i];
            FUZZ_ASSERT(n != 0 && !is_handle_type(n) && n != kDeviceList);
            if (kind == RequestKind::image) FUZZ_ASSERT(!is_layer_name(n));
        }
        // What the ICD gets is a list with nothing of ours in it.
        FUZZ_ASSERT(std::holds_alternative<NotOurs>(classify_mem_request(out->passthrough.data(), kind)));
    }
    if (kind == RequestKind::buffer) {
        const ImageLayerProperties none;
        FUZZ_ASSERT(out->layer.plane_offset == none.plane_offset && !out->layer.has_modifier &&
                    !out->layer.allow_tiled && !out->layer.assume_linear);
    }
    // The spec's device-list rule against a context of devices 0x10 and 0x20.
    const std::vector<cl_device_id> ctx = {reinterpret_cast<cl_device_id>(0x10), reinterpret_cast<cl_device_id>(0x20)};
    std::string why;
    const cl_int dev_err = check_device_list(*out, ctx, &why);
    FUZZ_ASSERT(dev_err == CL_SUCCESS || (dev_err == CL_INVALID_DEVICE && !why.empty()));
}

void check_arm(FuzzedDataProvider &in) {
    std::vector<cl_import_properties_arm> list;
    const int entries = in.ConsumeIntegralInRange<int>(0, 6);
    for (int e = 0; e < entries && in.remaining_bytes(); ++e) {
        const uint64_t key = fuzz::pick(in, {CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_PROTECTED_ARM,
                                             CL_IMPORT_DMA_BUF_DATA_CONSISTENCY_WITH_HOST_ARM, CL_IMPORT_TYPE_HOST_ARM,
                                             kDmaBuf, 0x40B6});
        if (key == 0) continue;
        list.push_back(static_cast<cl_import_properties_arm>(key));
        list.push_back(static_cast<cl_import_properties_arm>(
            fuzz::pick(in, {CL_IMPORT_TYPE_HOST_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM, CL_IMPORT_TYPE_ANDROID_HARDWARE_BUFFER_ARM,
                            CL_TRUE, CL_FALSE, 2, 0, static_cast<uint64_t>(-1)})));
    }
    list.push_back(0);
    ArmImportProperties out;
    std::string why;
    const cl_int err = parse_arm_import_properties(list.data(), &out, &why);
    FUZZ_ASSERT(err == CL_SUCCESS || err == CL_INVALID_PROPERTY);
    if (err != CL_SUCCESS) {
        FUZZ_ASSERT(!why.empty());
        return;
    }
    int type = 0, prot = 0, cons = 0;
    for (size_t i = 0; i + 1 < list.size(); i += 2) {
        const cl_import_properties_arm k = list[i], v = list[i + 1];
        if (k == CL_IMPORT_TYPE_ARM) {
            ++type;
            FUZZ_ASSERT(out.type == v);
        } else if (k == CL_IMPORT_TYPE_PROTECTED_ARM) {
            ++prot;
            FUZZ_ASSERT((v == CL_TRUE || v == CL_FALSE) && out.protected_memory == (v == CL_TRUE));
        } else if (k == CL_IMPORT_DMA_BUF_DATA_CONSISTENCY_WITH_HOST_ARM) {
            ++cons;
            FUZZ_ASSERT((v == CL_TRUE || v == CL_FALSE) && out.host_consistency == (v == CL_TRUE));
        } else {
            FUZZ_ASSERT(!"an unknown ARM key was accepted");
        }
    }
    FUZZ_ASSERT(type <= 1 && prot <= 1 && cons <= 1);
    if (!type) FUZZ_ASSERT(out.type == CL_IMPORT_TYPE_HOST_ARM);
    FUZZ_ASSERT(out.type == CL_IMPORT_TYPE_HOST_ARM || out.type == CL_IMPORT_TYPE_DMA_BUF_ARM ||
                out.type == CL_IMPORT_TYPE_ANDROID_HARDWARE_BUFFER_ARM);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzedDataProvider in(data, size);
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: check_khr(khr_list(in), RequestKind::buffer); break;
    case 1: check_khr(khr_list(in), RequestKind::image); break;
    case 2: check_arm(in); break;
    default: {
        // NULL lists are "no properties".
        FUZZ_ASSERT(std::holds_alternative<NotOurs>(classify_mem_request(nullptr, RequestKind::image)));
        std::string why;
        ArmImportProperties arm;
        FUZZ_ASSERT(parse_arm_import_properties(nullptr, &arm, &why) == CL_SUCCESS &&
                    arm.type == CL_IMPORT_TYPE_HOST_ARM);
        break;
    }
    }
    return 0;
}
