#include "layer/import/arm.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/icd/devices.hpp"
#include "layer/import/buffer.hpp"
#include "layer/import/fresh_handles.hpp"
#include "layer/core/refuse.hpp"
#include "layer/import/request.hpp"
#include "layer/import/native.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/base/owned_fd.hpp"
#include "layer/core/registry.hpp"
#include "layer/import/record.hpp"

namespace cldmabuf {

namespace {

using ImportMemoryArmFn = cl_mem(CL_API_CALL *)(cl_context, cl_mem_flags, const cl_import_properties_arm *,
                                                void *, size_t, cl_int *);

// The ICD's own clImportMemoryARM (an ARM Mali driver has one), for the
// memory types the layer does not provide.  NULL when the ICD lacks it.
ImportMemoryArmFn icd_import_memory_arm(cl_context context) {
    std::vector<cl_device_id> devices;
    if (context_devices(context, &devices) != CL_SUCCESS || devices.empty()) return nullptr;
    cl_platform_id platform = device_platform(devices[0]);
    if (!platform) return nullptr;
    return reinterpret_cast<ImportMemoryArmFn>(
        next().clGetExtensionFunctionAddressForPlatform(platform, "clImportMemoryARM"));
}

cl_mem fail_arm_import(cl_int *errcode_ret, cl_int err, const std::string &why) {
    return refuse_import(errcode_ret, err, "clImportMemoryARM", why);
}

}  // namespace

cl_mem CL_API_CALL import_memory_arm(cl_context context, cl_mem_flags flags,
                                     const cl_import_properties_arm *properties, void *memory, size_t size,
                                     cl_int *errcode_ret) {
    // The list's one walk.
    ArmImportProperties props;
    std::string why;
    const cl_int parsed = parse_arm_import_properties(properties, &props, &why);
    if (cl_mem mem = nullptr; native_arm_import(context, props.type, flags, properties, memory, size, errcode_ret, &mem))
        return fresh_mem(mem);
    if (parsed != CL_SUCCESS) return fail_arm_import(errcode_ret, parsed, why);
    // Only dma-bufs are the layer's: host and Android memory (and protected
    // memory) go to the ICD's own clImportMemoryARM when it has one.
    if (props.type != CL_IMPORT_TYPE_DMA_BUF_ARM || props.protected_memory)
        if (ImportMemoryArmFn icd = icd_import_memory_arm(context))
            return fresh_mem(icd(context, flags, properties, memory, size, errcode_ret));
    if (props.type != CL_IMPORT_TYPE_DMA_BUF_ARM)
        return fail_arm_import(errcode_ret, CL_INVALID_PROPERTY,
                    "only CL_IMPORT_TYPE_DMA_BUF_ARM is supported (the default type is host memory: pass "
                    "{CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM, 0})");
    if (props.protected_memory)
        return fail_arm_import(errcode_ret, CL_INVALID_PROPERTY, "protected memory (CL_IMPORT_TYPE_PROTECTED_ARM) is not supported");
    if (!memory) return fail_arm_import(errcode_ret, CL_INVALID_VALUE, "memory is NULL (it must point to a dma-buf fd)");
    if (size == 0) return fail_arm_import(errcode_ret, CL_INVALID_BUFFER_SIZE, "size is 0");
    // "CL_MEM_USE_HOST_PTR - this flag has no effect, it is ignored."
    flags &= ~CL_MEM_USE_HOST_PTR;

    const int app_fd = *static_cast<const int *>(memory);
    if (std::string bad = check_dmabuf_fd(app_fd); !bad.empty())
        return fail_arm_import(errcode_ret, CL_INVALID_VALUE, "memory does not point to a dma-buf fd: " + bad);
    if (size == CL_IMPORT_MEMORY_WHOLE_ALLOCATION_ARM) {
        const int64_t whole = dmabuf_size(app_fd);
        if (whole <= 0)
            return fail_arm_import(errcode_ret, CL_INVALID_VALUE,
                        "cannot size dma-buf fd " + std::to_string(app_fd) + ": " + std::strerror(-whole));
        size = static_cast<size_t>(whole);
    }

    // The application keeps its fd (FFmpeg and OpenCV close theirs when the
    // frame goes): the KHR import below is given a duplicate, which is what
    // it takes ownership of, so the caller's number is never touched.
    OwnedFd dup(kernel().dup(app_fd));
    if (!dup) return fail_arm_import(errcode_ret, CL_OUT_OF_HOST_MEMORY, std::string("dup: ") + std::strerror(errno));
    cl_int err = CL_SUCCESS;
    IcdMem mem(import_dmabuf_buffer(context, dmabuf_buffer_request(dup.get()), flags, size, nullptr, &err));
    if (!mem) {
        // A refused import left `dup` alone: it closes here.  The only
        // property the import had is the fd: a CL_INVALID_PROPERTY is about
        // `memory` (e.g. a dma-buf the CPU cannot map).
        if (err == CL_INVALID_PROPERTY) err = CL_INVALID_VALUE;
        if (errcode_ret) *errcode_ret = err;
        return nullptr;
    }
    const int fd = dup.release();  // the import's now
    const std::shared_ptr<Import> import = close_handed_fd(mem.get(), fd);
    if (import && import->route == Route::copy) {
        // "It will never fall back to copy operations ... instead producing
        // an error when mapping is not possible."  Releasing the object
        // closes the duplicate.
        mem.reset();
        return fail_arm_import(errcode_ret, CL_INVALID_OPERATION,
                    "a device of the context cannot use the dma-buf in place and cl_arm_import_memory never "
                    "copies (CLDMABUF_IMPORT=copy or a device without host-unified memory)");
    }
    // Not created with properties: CL_MEM_PROPERTIES answers an empty list.
    if (import) import->properties.clear();
    LOG_INFO("clImportMemoryARM: dma-buf fd %d imported as %p (the layer holds fd %d)", app_fd,
             static_cast<void *>(mem.get()), import ? import->fd : fd);
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return mem.hand_off();  // the application's
}

}  // namespace cldmabuf
