// Buffer imports: clCreateBufferWithProperties with
// CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, classified by the entry
// (layer/import/request.hpp).  checks -> record -> route -> the ICD's buffer
// over the mapping (host_ptr) or its own copy.
#include "layer/import/buffer.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/dmabuf/exporter.hpp"
#include "layer/core/import_fds.hpp"
#include "layer/import/fresh_handles.hpp"
#include "layer/import/native.hpp"
#include "layer/core/refuse.hpp"
#include "layer/import/request.hpp"
#include "layer/base/log.hpp"

namespace cldmabuf {
namespace {

cl_mem fail_buffer_import(cl_int *errcode_ret, cl_int err, const std::string &why) {
    return refuse_import(errcode_ret, err, "import", why);
}

// The checks of the spec's clCreateBufferWithProperties that an import adds
// (after the property list's own); `dmabuf_bytes` receives the dma-buf's size.
cl_int check_buffer_request(const DmabufRequest &props, const std::vector<cl_device_id> &ctx_devices,
                            cl_mem_flags flags, size_t size, void *host_ptr, int64_t *dmabuf_bytes,
                            std::string *why) {
    if (cl_int err = check_device_list(props, ctx_devices, why); err != CL_SUCCESS) return err;
    if (std::string bad = check_dmabuf_fd(props.fd); !bad.empty()) {
        *why = bad;
        return CL_INVALID_PROPERTY;
    }
    if (cl_int err = check_import_flags(flags, why); err != CL_SUCCESS) return err;
    if (host_ptr) {
        *why = "host_ptr must be NULL for an import";
        return CL_INVALID_HOST_PTR;
    }
    if (size == 0) {
        *why = "size is 0";
        return CL_INVALID_BUFFER_SIZE;
    }
    *dmabuf_bytes = dmabuf_size(props.fd);
    if (*dmabuf_bytes < 0) {
        *why = "cannot size dma-buf fd " + std::to_string(props.fd) + ": " + std::strerror(-*dmabuf_bytes);
        return CL_INVALID_PROPERTY;
    }
    if (static_cast<uint64_t>(size) > static_cast<uint64_t>(*dmabuf_bytes)) {
        *why = "size " + std::to_string(size) + " is larger than the dma-buf (" + std::to_string(*dmabuf_bytes) +
               " bytes)";
        return CL_INVALID_BUFFER_SIZE;
    }
    return CL_SUCCESS;
}

// The token ties the callback to its own entry: a late callback (NVIDIA)
// leaves a newer sub-buffer on the same handle alone.
void CL_CALLBACK forget_sub_buffer(cl_mem sub, void *token) {
    imports().remove_sub(sub, reinterpret_cast<uintptr_t>(token));
}

}  // namespace

cl_mem import_dmabuf_buffer(cl_context context, DmabufRequest props, cl_mem_flags flags, size_t size,
                            void *host_ptr, cl_int *errcode_ret) {
    if (cl_mem mem = nullptr; native_buffer_import(context, props, flags, size, host_ptr, errcode_ret, &mem))
        return fresh_mem(mem);
    std::string why;
    std::vector<cl_device_id> ctx_devices;
    if (context_devices(context, &ctx_devices) != CL_SUCCESS)
        return fail_buffer_import(errcode_ret, CL_INVALID_CONTEXT, "the context is not valid");
    int64_t dmabuf_bytes = 0;
    if (cl_int err = check_buffer_request(props, ctx_devices, flags, size, host_ptr, &dmabuf_bytes, &why);
        err != CL_SUCCESS)
        return fail_buffer_import(errcode_ret, err, why);

    PendingImport import;
    if (cl_int err = adopt_import_fd(import, props, &why); err != CL_SUCCESS) return fail_buffer_import(errcode_ret, err, why);
    const int app_fd = props.fd;
    const std::vector<cl_mem_properties> passthrough = props.passthrough;
    fill_import(*import, context, props, static_cast<uint64_t>(dmabuf_bytes), size, flags,
                props.has_device_list ? props.devices : ctx_devices);
    RouteQuestion question;
    question.context = context;
    question.devices = &import->devices;
    question.exporter = import->exporter;
    question.fd = import->fd;
    const RouteAnswer route = decide_route(question);
    set_route(*import, route.route);

    if (int err = map_dmabuf(*import, import->fd, size, flags); err != 0)
        return fail_buffer_import(errcode_ret, map_failure_error(err),
                    "cannot map dma-buf fd " + std::to_string(app_fd) + ": " + std::strerror(err));

    const cl_mem_properties *icd_props = passthrough.empty() ? nullptr : passthrough.data();
    const bool in_place = route.route != Route::copy;
    cl_mem_flags icd_flags = flags | (in_place ? CL_MEM_USE_HOST_PTR : CL_MEM_COPY_HOST_PTR);
    // A device copy is filled and written back by the layer's own
    // Write/ReadBuffer, which the application's host-access flags would make
    // the ICD refuse; CL_MEM_FLAGS still answers the application's flags.
    if (!in_place) icd_flags &= ~(CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY);
    cl_int err = CL_SUCCESS;
    IcdMem mem(icd_props ? next().clCreateBufferWithProperties(context, icd_props, icd_flags, size,
                                                               import->mapping, &err)
                         : next().clCreateBuffer(context, icd_flags, size, import->mapping, &err));
    if (!mem) return fail_buffer_import(errcode_ret, err, "the ICD refused the buffer (error " + std::to_string(err) + ")");
    if (commit_import(import, mem, IcdMem()) != CL_SUCCESS)
        return fail_buffer_import(errcode_ret, CL_OUT_OF_RESOURCES, "cannot register the destructor callback");

    count_import(*import, size);
    LOG_INFO("imported dma-buf fd %d (%zu of %lld bytes, %s, layer fd %d) as %p, %s%s%s", app_fd, size,
             static_cast<long long>(dmabuf_bytes), describe_exporter(*import).c_str(), import->fd,
             static_cast<void *>(mem.get()), in_place ? "zero-copy" : "device copy", route.why.empty() ? "" : ": ",
             route.why.c_str());
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return mem.hand_off();  // the application's
}

// Sub-buffers of imports are recorded here, once, so that lookups on the
// intercepted hot paths never have to ask the ICD for a buffer's parent.
cl_mem CL_API_CALL create_sub_buffer(cl_mem parent, cl_mem_flags flags, cl_buffer_create_type type,
                                     const void *info, cl_int *errcode_ret) {
    cl_mem sub = fresh_mem(next().clCreateSubBuffer(parent, flags, type, info, errcode_ret));
    if (!sub || imports().empty()) return sub;
    auto import = imports().find(parent);
    if (!import || import->mem != parent || type != CL_BUFFER_CREATE_TYPE_REGION) return sub;
    const uint64_t token = imports().add_sub(sub, import, static_cast<const cl_buffer_region *>(info)->origin);
    if (next().clSetMemObjectDestructorCallback(sub, forget_sub_buffer, reinterpret_cast<void *>(token)) !=
        CL_SUCCESS)
        imports().remove_sub(sub, token);  // unregistered rather than stale
    return sub;
}

}  // namespace cldmabuf
