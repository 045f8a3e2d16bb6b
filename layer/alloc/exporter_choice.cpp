#include "layer/alloc/exporter_choice.hpp"

#include <cerrno>
#include <cstring>

namespace cldmabuf {

cl_int exporter_order(cl_uint requested, const char *setting_value, std::vector<AllocExporter> *order,
                      std::string *why) {
    order->clear();
    const std::vector<AllocExporter> all = {AllocExporter::i915_gem, AllocExporter::dma_heap, AllocExporter::udmabuf};
    std::vector<AllocExporter> wanted;
    if (requested == kAllocAny) {
        wanted = all;
    } else if (requested >= static_cast<cl_uint>(AllocExporter::i915_gem) &&
               requested <= static_cast<cl_uint>(AllocExporter::udmabuf)) {
        wanted = {static_cast<AllocExporter>(requested)};
    } else {
        *why = "CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF value " + std::to_string(requested) +
               " names no exporter (ANY 1, I915_GEM 2, DMA_HEAP 3, UDMABUF 4)";
        return CL_INVALID_PROPERTY;
    }
    const char *allowed_name = nullptr;
    AllocExporter allowed{};
    if (setting_value && *setting_value && std::strcmp(setting_value, "auto") != 0) {
        allowed_name = setting_value;
        if (!std::strcmp(setting_value, "i915")) allowed = AllocExporter::i915_gem;
        else if (!std::strcmp(setting_value, "dma-heap")) allowed = AllocExporter::dma_heap;
        else if (!std::strcmp(setting_value, "udmabuf")) allowed = AllocExporter::udmabuf;
        else allowed_name = nullptr;  // validated by the settings table; unknown words mean auto
    }
    for (AllocExporter e : wanted)
        if (!allowed_name || e == allowed) order->push_back(e);
    if (order->empty())
        *why = std::string("CLDMABUF_ALLOC_EXPORTER=") + allowed_name + " forbids the " +
               alloc_exporter_name(wanted.front()) + " exporter the property asks for";
    return CL_SUCCESS;
}

bool exporter_missing(int neg_errno) {
    switch (-neg_errno) {
    case ENOENT:
    case ENODEV:
    case ENXIO:
    case ENOSYS:
    case ENOTTY:
    case EACCES:
    case EPERM: return true;
    default: return false;
    }
}

cl_int alloc_error(int neg_errno) {
    if (exporter_missing(neg_errno)) return CL_INVALID_OPERATION;
    switch (-neg_errno) {
    case EINVAL:
    case E2BIG:
    case EFBIG:
    case EOVERFLOW: return CL_INVALID_BUFFER_SIZE;
    default: return CL_MEM_OBJECT_ALLOCATION_FAILURE;
    }
}

}  // namespace cldmabuf
