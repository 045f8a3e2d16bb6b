#include "layer/alloc/create.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "layer/alloc/allocate.hpp"
#include "layer/core/allocated.hpp"
#include "layer/alloc/exporter_choice.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/icd/devices.hpp"
#include "layer/import/buffer.hpp"
#include "layer/import/image.hpp"
#include "layer/import/image_checks.hpp"
#include "layer/core/refuse.hpp"
#include "layer/import/request.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/base/owned_fd.hpp"
#include "layer/base/settings.hpp"

namespace cldmabuf {
namespace {

constexpr const char *kWhat = "allocation";

cl_mem fail_alloc(cl_int *errcode_ret, cl_int err, const std::string &why) {
    return refuse_import(errcode_ret, err, kWhat, why);
}

// The import of the new dma-buf: the caller's other entries with the
// handle appended (what CL_MEM_PROPERTIES of the import and an ICD that
// imports dma-bufs itself see).
DmabufRequest import_of(const AllocationRequest &req, int fd) {
    DmabufRequest import = req.import;
    import.fd = fd;
    import.original = req.rest;
    import.original.insert(import.original.end(),
                           {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(fd), 0});
    return import;
}

cl_int check_host_side(cl_mem_flags flags, void *host_ptr, std::string *why) {
    if (host_ptr) {
        *why = "host_ptr must be NULL: the layer allocates the memory";
        return CL_INVALID_HOST_PTR;
    }
    if (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)) {
        *why = "CL_MEM_USE/ALLOC/COPY_HOST_PTR cannot be combined with CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF";
        return CL_INVALID_VALUE;
    }
    return CL_SUCCESS;
}

// CL_INVALID_BUFFER_SIZE when `size` is above CL_DEVICE_MAX_MEM_ALLOC_SIZE
// of every device of the context (the spec's rule for clCreateBuffer*).
// An invalid context is left to allocate_for's check.
cl_int check_max_alloc_size(cl_context context, size_t size, std::string *why) {
    std::vector<cl_device_id> devices;
    if (context_devices(context, &devices) != CL_SUCCESS || devices.empty()) return CL_SUCCESS;
    cl_ulong largest = 0;
    for (cl_device_id d : devices) {
        cl_ulong max = 0;
        if (next().clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max, &max, nullptr) != CL_SUCCESS)
            return CL_SUCCESS;  // unknown: the exporter decides
        largest = std::max(largest, max);
    }
    if (size <= largest) return CL_SUCCESS;
    *why = "size " + std::to_string(size) + " is above CL_DEVICE_MAX_MEM_ALLOC_SIZE (" + std::to_string(largest) +
           ") of every device of the context";
    return CL_INVALID_BUFFER_SIZE;
}

// The exporter's dma-buf for `bytes` in *dmabuf (out->fd), with the layer's
// own dup in *keep.  CL_SUCCESS, or the refusal already logged.
cl_int allocate_for(cl_context context, const AllocationRequest &req, uint64_t bytes, AllocOutcome *out,
                    OwnedFd *dmabuf, OwnedFd *keep, std::string *why) {
    std::vector<cl_device_id> devices;
    if (context_devices(context, &devices) != CL_SUCCESS) {
        *why = "the context is not valid";
        return CL_INVALID_CONTEXT;
    }
    std::vector<AllocExporter> order;
    if (cl_int err = exporter_order(req.exporter, setting("CLDMABUF_ALLOC_EXPORTER"), &order, why);
        err != CL_SUCCESS)
        return err;
    if (order.empty()) return CL_INVALID_OPERATION;
    *out = allocate_dmabuf(order, bytes, system_exporters(devices));
    if (out->err != CL_SUCCESS) {
        *why = "no dma-buf of " + std::to_string(bytes) + " bytes: " + out->why;
        return out->err;
    }
    *dmabuf = OwnedFd(out->fd);
    *keep = OwnedFd(kernel().dup(out->fd));
    if (!*keep) {
        *why = std::string("cannot duplicate the new dma-buf: ") + std::strerror(errno);
        return CL_OUT_OF_RESOURCES;
    }
    return CL_SUCCESS;
}

// After the import: the record, or everything undone.
cl_mem finish_alloc(IcdMem mem, cl_int import_err, const AllocationRequest &req, const AllocOutcome &alloc,
                    OwnedFd dmabuf, OwnedFd keep, uint64_t bytes, cl_int *errcode_ret) {
    if (!mem) {
        // The import logged its refusal; a failed import leaves the fd with
        // its caller, the layer here: both go with this scope.
        if (errcode_ret) *errcode_ret = import_err;
        return nullptr;
    }
    dmabuf.release();  // the import's now
    Allocated entry;
    entry.fd = keep.release();  // record_allocated's, on failure too
    entry.exporter = alloc.exporter;
    entry.properties = req.original;
    if (record_allocated(mem.get(), entry) != CL_SUCCESS) {
        mem.reset();  // the import closes the fd it owns
        return fail_alloc(errcode_ret, CL_OUT_OF_RESOURCES, "cannot register the destructor callback");
    }
    std::string skipped;
    for (AllocExporter e : alloc.skipped) skipped += std::string(skipped.empty() ? " (after " : ", ") +
                                                     alloc_exporter_name(e);
    if (!skipped.empty()) skipped += ")";
    LOG_INFO("allocated %llu bytes from the %s exporter%s as %p", static_cast<unsigned long long>(bytes),
             alloc_exporter_name(alloc.exporter), skipped.c_str(), static_cast<void *>(mem.get()));
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return mem.hand_off();  // the application's
}

}  // namespace

cl_mem create_allocated_buffer(cl_context context, const AllocationRequest &req, cl_mem_flags flags, size_t size,
                               void *host_ptr, cl_int *errcode_ret) {
    std::string why;
    if (cl_int err = check_host_side(flags, host_ptr, &why); err != CL_SUCCESS) return fail_alloc(errcode_ret, err, why);
    if (size == 0) return fail_alloc(errcode_ret, CL_INVALID_BUFFER_SIZE, "size is 0");
    // Before any exporter is asked: a real system heap allocates eagerly, and
    // a size past memory ends the process (the OOM killer) instead of failing.
    if (cl_int err = check_max_alloc_size(context, size, &why); err != CL_SUCCESS) return fail_alloc(errcode_ret, err, why);
    AllocOutcome alloc;
    OwnedFd dmabuf, keep;
    if (cl_int err = allocate_for(context, req, size, &alloc, &dmabuf, &keep, &why); err != CL_SUCCESS)
        return fail_alloc(errcode_ret, err, why);
    cl_int err = CL_SUCCESS;
    IcdMem mem(import_dmabuf_buffer(context, import_of(req, alloc.fd), flags, size, nullptr, &err));
    return finish_alloc(std::move(mem), err, req, alloc, std::move(dmabuf), std::move(keep), size, errcode_ret);
}

cl_mem create_allocated_image(cl_context context, const AllocationRequest &req, cl_mem_flags flags,
                              const cl_image_format *format, const cl_image_desc *desc, void *host_ptr,
                              cl_int *errcode_ret) {
    std::string why;
    if (cl_int err = check_host_side(flags, host_ptr, &why); err != CL_SUCCESS) return fail_alloc(errcode_ret, err, why);
    if (!format) return fail_alloc(errcode_ret, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, "image_format is NULL");
    if (!desc) return fail_alloc(errcode_ret, CL_INVALID_IMAGE_DESCRIPTOR, "image_desc is NULL");
    if (desc->image_type != CL_MEM_OBJECT_IMAGE2D || desc->buffer)
        return fail_alloc(errcode_ret, CL_INVALID_IMAGE_DESCRIPTOR,
                    "the layer allocates linear 2D images only (image_type CL_MEM_OBJECT_IMAGE2D, no buffer)");
    const size_t elem = image_element_size(*format);
    if (elem == 0) return fail_alloc(errcode_ret, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, "unknown image format");
    if (desc->image_width == 0 || desc->image_height == 0)
        return fail_alloc(errcode_ret, CL_INVALID_IMAGE_SIZE, "image_width and image_height must not be 0");
    if (!desc->image_row_pitch && desc->image_width > UINT64_MAX / elem)
        return fail_alloc(errcode_ret, CL_INVALID_IMAGE_SIZE, "image_width * element size overflows");
    const uint64_t row = desc->image_row_pitch ? desc->image_row_pitch : uint64_t{desc->image_width} * elem;
    if (row > UINT64_MAX / desc->image_height)
        return fail_alloc(errcode_ret, CL_INVALID_IMAGE_SIZE, "image_row_pitch * image_height overflows");
    const uint64_t bytes = row * desc->image_height;
    AllocOutcome alloc;
    OwnedFd dmabuf, keep;
    if (cl_int err = allocate_for(context, req, bytes, &alloc, &dmabuf, &keep, &why); err != CL_SUCCESS)
        return fail_alloc(errcode_ret, err, why);
    cl_int err = CL_SUCCESS;
    // The import checks the descriptor against the dma-buf (pitch, format, devices).
    IcdMem mem(import_dmabuf_image(context, import_of(req, alloc.fd), flags, format, desc, nullptr, &err));
    return finish_alloc(std::move(mem), err, req, alloc, std::move(dmabuf), std::move(keep), bytes, errcode_ret);
}

}  // namespace cldmabuf
