#include "layer/import/queries.hpp"

#include "CL/cl_ext_cldmabuf.h"
#include "layer/core/allocated.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/base/name_filter.hpp"
#include "layer/base/param_answer.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {
namespace {

cl_int answer_null(size_t size, void *value, size_t *size_ret) {
    void *none = nullptr;
    return answer(&none, sizeof none, size, value, size_ret);
}

// A sub-buffer of an import: the ICD answers, minus the host pointer it
// inherited from the layer's mapping.
cl_int sub_buffer_info(cl_mem mem, cl_mem_info name, size_t size, void *value, size_t *size_ret) {
    if (name == CL_MEM_HOST_PTR) return answer_null(size, value, size_ret);
    if (name == CL_MEM_FLAGS) {
        cl_mem_flags flags = 0;
        cl_int err = next().clGetMemObjectInfo(mem, name, sizeof flags, &flags, nullptr);
        if (err != CL_SUCCESS) return err;
        flags &= ~(CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
        return answer(&flags, sizeof flags, size, value, size_ret);
    }
    return next().clGetMemObjectInfo(mem, name, size, value, size_ret);
}



}  // namespace

// Out of line, so that the pass-through below needs no stack frame.
[[gnu::noinline]] cl_int import_mem_object_answer(cl_mem mem, cl_mem_info name, size_t size, void *value,
                                                size_t *size_ret) {
    // The allocator's names, and CL_MEM_PROPERTIES of an object it allocated
    // (the caller's list, not the import's).
    if (cl_int err = CL_SUCCESS; allocated_mem_info(mem, name, size, value, size_ret, &err)) return err;
    if (name == CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF) {
        auto import = imports().find(mem);
        if (!import || import->mem != mem) return CL_INVALID_VALUE;
        const cl_uint route = static_cast<cl_uint>(import->route);
        return answer(&route, sizeof route, size, value, size_ret);
    }
    if (imports().empty() || (name != CL_MEM_PROPERTIES && name != CL_MEM_FLAGS && name != CL_MEM_HOST_PTR &&
                              name != CL_MEM_ASSOCIATED_MEMOBJECT))
        return next().clGetMemObjectInfo(mem, name, size, value, size_ret);
    auto import = imports().find(mem);
    if (import && import->mem != mem && name != CL_MEM_ASSOCIATED_MEMOBJECT)
        return sub_buffer_info(mem, name, size, value, size_ret);
    if (!import || import->mem != mem) return next().clGetMemObjectInfo(mem, name, size, value, size_ret);
    // The application sees the object as it created it: its own flags and
    // property list, and no host pointer (the mapping is the layer's business).
    switch (name) {
    case CL_MEM_PROPERTIES:
        return answer(import->properties.data(), import->properties.size() * sizeof(cl_mem_properties), size, value,
                      size_ret);
    case CL_MEM_FLAGS: return answer(&import->flags, sizeof import->flags, size, value, size_ret);
    case CL_MEM_HOST_PTR: return answer_null(size, value, size_ret);
    default:
        // The internal buffer under an image stays out of sight (the
        // application gave no buffer).
        if (import->image.internal_buffer) return answer_null(size, value, size_ret);
        return next().clGetMemObjectInfo(mem, name, size, value, size_ret);
    }
}

// Every name but the seven above (CL_MEM_SIZE, ...) goes straight down: one
// table byte decides (layer/base/name_filter.hpp), before any lookup.
cl_int CL_API_CALL import_mem_object_info(cl_mem mem, cl_mem_info name, size_t size, void *value,
                                          size_t *size_ret) {
    if (import_mem_name.may_be_ours(name)) return import_mem_object_answer(mem, name, size, value, size_ret);
    return next().clGetMemObjectInfo(mem, name, size, value, size_ret);
}

cl_int CL_API_CALL import_image_info(cl_mem image, cl_image_info name, size_t size, void *value, size_t *size_ret) {
    if (name == CL_IMAGE_BUFFER && !imports().empty()) {
        if (auto import = imports().find(image); import && import->mem == image && import->image.internal_buffer)
            return answer_null(size, value, size_ret);
    }
    return next().clGetImageInfo(image, name, size, value, size_ret);
}

}  // namespace cldmabuf
