// Image imports: clCreateImageWithProperties with
// CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR (cl_khr_external_memory_dma_buf,
// linear layouts; X/Y tiled through the blitter's shadow), classified by the
// entry (layer/import/request.hpp).
//
// The layer translates the import before the ICD sees anything (an ICD
// validates e.g. a non-zero image_row_pitch without host_ptr before it looks
// at properties), then hands the ICD one of three routes (decide_route,
// layer/import/route.hpp):
//
//   image_from_buffer  a CL_MEM_USE_HOST_PTR buffer over the mapping and a 2D
//                      image on it (cl_khr_image2d_from_buffer), when the
//                      pitch and base meet the device's alignments;
//   host_ptr           CL_MEM_USE_HOST_PTR on the image itself, with the
//                      dma-buf's pitch as host row pitch;
//   copy               an image of the ICD's own, written from the dma-buf
//                      on acquire and read back on release.
//
// The steps, in order: the request (devices, descriptor, geometry against
// the dma-buf), the storage (the mapping, or a tiled import's
// linear shadow), the route, the ICD's objects, the record.
#include "layer/import/image.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "layer/blit/gem_cache.hpp"
#include "layer/blit/tiled_shadow.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/core/icd_ref.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/icd/devices.hpp"
#include "layer/import/fresh_handles.hpp"
#include "layer/import/native.hpp"
#include "layer/import/record.hpp"
#include "layer/core/refuse.hpp"
#include "layer/import/request.hpp"
#include "layer/import/route.hpp"
#include "layer/base/log.hpp"

namespace cldmabuf {
namespace {

cl_mem fail_image_import(cl_int *errcode_ret, cl_int err, const std::string &why) {
    return refuse_import(errcode_ret, err, "image import", why);
}

// An image import that passed every check that needs no object.
struct ImageRequest {
    DmabufRequest props;
    std::vector<cl_device_id> devices;  // the device list, else the context's
    size_t elem = 0;
    i915::Tiling tiling = i915::Tiling::Linear;
    bool tiled = false;    // X/Y tiled with the caller's consent
    Geometry g;            // of the surface in the dma-buf
    int64_t dmabuf_bytes = 0;
    size_t end = 0;        // plane offset + the bytes the image spans
};

// The devices, the flags, the descriptor and its
// geometry against the dma-buf: the spec's code and a reason, or CL_SUCCESS.
cl_int check_image_request(cl_context context, cl_mem_flags flags, const cl_image_format *format,
                           const cl_image_desc *desc, void *host_ptr, ImageRequest *req, std::string *why) {
    const DmabufRequest &props = req->props;
    std::vector<cl_device_id> ctx_devices;
    if (context_devices(context, &ctx_devices) != CL_SUCCESS) {
        *why = "the context is not valid";
        return CL_INVALID_CONTEXT;
    }
    if (cl_int err = check_device_list(props, ctx_devices, why); err != CL_SUCCESS) return err;
    req->devices = props.has_device_list ? props.devices : ctx_devices;
    auto refuse_with = [why](cl_int err, std::string reason) {
        *why = std::move(reason);
        return err;
    };
    if (std::string bad = check_dmabuf_fd(props.fd); !bad.empty()) return refuse_with(CL_INVALID_PROPERTY, bad);
    if (std::string bad; check_import_flags(flags, &bad) != CL_SUCCESS) return refuse_with(CL_INVALID_VALUE, bad);
    if (host_ptr) return refuse_with(CL_INVALID_HOST_PTR, "host_ptr must be NULL for an import");
    if (!format) return refuse_with(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, "image_format is NULL");
    if (!desc) return refuse_with(CL_INVALID_IMAGE_DESCRIPTOR, "image_desc is NULL");
    if (desc->buffer)
        return refuse_with(CL_INVALID_IMAGE_DESCRIPTOR,
                           "image_desc->buffer/mem_object must be NULL for an import (the dma-buf is the storage)");
    if (desc->num_mip_levels || desc->num_samples)
        return refuse_with(CL_INVALID_IMAGE_DESCRIPTOR, "num_mip_levels and num_samples must be 0");
    if (std::none_of(req->devices.begin(), req->devices.end(),
                     [](cl_device_id d) { return device_value<cl_bool>(d, CL_DEVICE_IMAGE_SUPPORT) == CL_TRUE; }))
        return refuse_with(CL_INVALID_OPERATION, "no device of the import supports images");
    SurfaceLayout surface;
    if (cl_int err = describe_surface(props.layer, *format, *desc, &surface, why); err != CL_SUCCESS) return err;
    req->elem = surface.elem;
    req->tiling = surface.tiling;
    req->tiled = surface.tiled;
    req->g = surface.g;
    const ImageLayerProperties &layer = props.layer;
    if (!format_supported(context, flags, desc->image_type, *format))
        return refuse_with(CL_IMAGE_FORMAT_NOT_SUPPORTED,
                           "the ICD does not support this channel order/type for this image type and access");
    if (cl_int err = check_modifier(layer, why); err != CL_SUCCESS) return err;

    req->dmabuf_bytes = dmabuf_size(props.fd);
    if (req->dmabuf_bytes < 0)
        return refuse_with(CL_INVALID_PROPERTY, "cannot size dma-buf fd " + std::to_string(props.fd) + ": " +
                                                    std::strerror(-req->dmabuf_bytes));
    // The image's extent past the dma-buf's end is CL_INVALID_IMAGE_SIZE, as
    // for an image over a buffer (clCreateImage: "image_row_pitch *
    // image_height > size of the buffer"); CL_INVALID_BUFFER_SIZE is a
    // buffer's error.
    if (!plane_end(layer.plane_offset, req->g.needed, req->dmabuf_bytes, &req->end))
        return refuse_with(CL_INVALID_IMAGE_SIZE, "plane offset " + std::to_string(layer.plane_offset) + " + " +
                                                      std::to_string(req->g.needed) +
                                                      " image bytes is past the dma-buf's end (" +
                                                      std::to_string(req->dmabuf_bytes) + " bytes)");
    return CL_SUCCESS;
}

// A tiled import's state before anything is taken: whether the blitter can
// serve it at all (layer/blit/tiled_shadow.hpp).
cl_int prepare_tiled(const ImageRequest &req, const cl_image_desc &desc, std::unique_ptr<TiledImage> *out,
                     std::string *why) {
    TiledRequest tr;
    tr.tiling = req.tiling;
    tr.type = desc.image_type;
    tr.elem = req.elem;
    tr.width = desc.image_width;
    tr.height = desc.image_height;
    tr.row_pitch = req.g.row_pitch;
    tr.plane_offset = req.props.layer.plane_offset;
    tr.dmabuf_size = static_cast<uint64_t>(req.dmabuf_bytes);
    return prepare_tiled_image(tr, req.devices, out, why);
}

// What the ICD's image is laid over: the dma-buf's mapping, or a tiled
// import's linear shadow (the dma-buf itself is only touched by the
// blitter).  `icd_g` receives that surface's geometry.
cl_int attach_storage(Import &import, const ImageRequest &req, const cl_image_desc &desc, cl_mem_flags flags,
                      std::unique_ptr<TiledImage> tiled, Geometry *icd_g, std::string *why) {
    *icd_g = req.g;
    if (!tiled) {
        if (int err = map_dmabuf(import, import.fd, req.end, flags); err != 0) {
            *why = "cannot map dma-buf fd " + std::to_string(req.props.fd) + ": " + std::strerror(err);
            return map_failure_error(err);
        }
        return CL_SUCCESS;
    }
    import.image.modifier = req.props.layer.modifier;
    import.mapped_writable = true;
    icd_g->row_pitch = tiled->shadow_pitch;
    icd_g->needed = size_t{tiled->shadow_pitch} * desc.image_height;
    i915::BltImport dmabuf_gem;
    if (int err = blt_import_of(import, *tiled->engine, &dmabuf_gem); err == -EXDEV) {
        const i915::Gen9Info &node = tiled->engine->device_info();
        *why = "a tiled import needs the blitter, which takes only its own GPU's dma-bufs: " +
               exporter_mismatch(import, node, node_rdev(node));
        return CL_INVALID_OPERATION;
    } else if (err != 0) {
        *why = "the blitter cannot import dma-buf fd " + std::to_string(req.props.fd) + " (PRIME_FD_TO_HANDLE: " +
               std::strerror(-err) + ")";
        return CL_INVALID_OPERATION;
    }
    attach_tiled(import, std::move(tiled));
    return CL_SUCCESS;
}

// The ICD's image for `route` over `pixels`; `buffer` receives the buffer
// under it, if any (released here when the image is refused).
IcdMem create_icd_image(cl_context context, const DmabufRequest &props, cl_mem_flags flags,
                        const cl_image_format *format, const cl_image_desc &desc, const Geometry &icd_g, Route route,
                        bool writable, char *pixels, IcdMem *buffer, cl_int *err) {
    const cl_mem_properties *icd_props = props.passthrough.empty() ? nullptr : props.passthrough.data();
    auto create = [&](cl_mem_flags f, const cl_image_desc *d, void *ptr) {
        return IcdMem(icd_props ? next().clCreateImageWithProperties(context, icd_props, f, format, d, ptr, err)
                                : next().clCreateImage(context, f, format, d, ptr, err));
    };
    cl_image_desc icd_desc = desc;
    icd_desc.image_row_pitch = desc.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 0 : icd_g.row_pitch;
    icd_desc.image_slice_pitch = icd_g.slice_pitch;
    if (desc.image_type == CL_MEM_OBJECT_IMAGE1D || desc.image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER)
        icd_desc.image_row_pitch = 0;  // 1D: no pitch to give; let the ICD derive it
    IcdMem mem;
    buffer->reset();
    switch (route) {
    case Route::image_from_buffer: {
        const cl_mem_flags buffer_flags = (writable ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY) | CL_MEM_USE_HOST_PTR;
        *buffer = IcdMem(next().clCreateBuffer(context, buffer_flags, icd_g.needed, pixels, err));
        if (!*buffer) return mem;
        icd_desc.buffer = buffer->get();
        if (desc.image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER) icd_desc.image_row_pitch = 0;
        mem = create(flags, &icd_desc, nullptr);
        break;
    }
    case Route::host_ptr: mem = create(flags | CL_MEM_USE_HOST_PTR, &icd_desc, pixels); break;
    case Route::copy:
        if (desc.image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER) {
            // A 1D image buffer always sits on a buffer: here the ICD's own copy.
            *buffer = IcdMem(next().clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, icd_g.needed,
                                                   pixels, err));
            if (!*buffer) return mem;
            icd_desc.buffer = buffer->get();
            mem = create(flags, &icd_desc, nullptr);
            break;
        }
        mem = create(flags | CL_MEM_COPY_HOST_PTR, &icd_desc, pixels);
        break;
    }
    if (!mem) buffer->reset();
    return mem;
}

}  // namespace

cl_mem import_dmabuf_image(cl_context context, DmabufRequest request, cl_mem_flags flags,
                           const cl_image_format *format, const cl_image_desc *desc, void *host_ptr,
                           cl_int *errcode_ret) {
    if (cl_mem mem = nullptr; native_image_import(context, request, flags, format, desc, host_ptr, errcode_ret, &mem))
        return fresh_mem(mem);

    std::string why;
    ImageRequest req;
    req.props = std::move(request);
    if (cl_int err = check_image_request(context, flags, format, desc, host_ptr, &req, &why);
        err != CL_SUCCESS)
        return fail_image_import(errcode_ret, err, why);
    std::unique_ptr<TiledImage> tiled;
    if (req.tiled)
        if (cl_int err = prepare_tiled(req, *desc, &tiled, &why); err != CL_SUCCESS)
            return fail_image_import(errcode_ret, err, why);

    // From here refusals undo what was taken (PendingImport): the layer's
    // dup, the mapping; the import's own state (GEM handle, shadow) goes with it.
    PendingImport import;
    if (cl_int err = adopt_import_fd(import, req.props, &why); err != CL_SUCCESS) return fail_image_import(errcode_ret, err, why);
    const int app_fd = req.props.fd;
    fill_import(*import, context, req.props, static_cast<uint64_t>(req.dmabuf_bytes), req.g.needed, flags,
                req.devices);
    import->is_image = true;
    import->image.offset = static_cast<size_t>(req.props.layer.plane_offset);
    import->image.row_pitch = req.g.row_pitch;
    import->image.slice_pitch = req.g.slice_pitch;
    std::copy(std::begin(req.g.region), std::end(req.g.region), import->image.region);
    import->image.bytes = req.g.bytes;
    Geometry icd_g;
    if (cl_int err = attach_storage(*import, req, *desc, flags, std::move(tiled), &icd_g, &why); err != CL_SUCCESS)
        return fail_image_import(errcode_ret, err, why);
    char *pixels = host_pixels(*import).ptr;

    RouteQuestion question;
    question.context = context;
    question.devices = &import->devices;
    question.exporter = import->exporter;
    question.fd = import->fd;
    question.image = true;
    question.image_type = desc->image_type;
    question.elem = icd_g.elem;
    question.row_pitch = icd_g.row_pitch;
    question.base = reinterpret_cast<uintptr_t>(pixels);
    question.tiled = tiled_of(*import) != nullptr;
    const RouteAnswer route = decide_route(question);
    set_route(*import, route.route);

    cl_int err = CL_SUCCESS;
    IcdMem buffer;
    IcdMem mem = create_icd_image(context, req.props, flags, format, *desc, icd_g, route.route,
                                  import->mapped_writable, pixels, &buffer, &err);
    if (!mem)
        return fail_image_import(errcode_ret, err, "the ICD refused the image (error " + std::to_string(err) + ", route " +
                                          route_name(route.route) + ")");
    if (commit_import(import, mem, std::move(buffer)) != CL_SUCCESS)
        return fail_image_import(errcode_ret, CL_OUT_OF_RESOURCES, "cannot register the destructor callback");

    count_import(*import, req.g.bytes);
    LOG_INFO("imported dma-buf fd %d as a %zux%zux%zu %simage (pitch %zu, offset %zu) %p, %s%s%s%s", app_fd,
             req.g.region[0], req.g.region[1], req.g.region[2], tiled_of(*import) ? "tiled " : "", req.g.row_pitch,
             import->image.offset, static_cast<void *>(mem.get()), route_name(route.route),
             tiled_of(*import) ? " over a linear shadow de-tiled by the blitter" : "", route.why.empty() ? "" : ": ",
             route.why.c_str());
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return mem.hand_off();  // the application's
}

}  // namespace cldmabuf
