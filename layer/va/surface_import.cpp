// clCreateFromVA_APIMediaSurfaceINTEL: one plane of a VA surface as a 2D
// image, through the layer's image import (layer/import/image.cpp, the
// routes and zero-copy proof of docs/images.md).  The surface is exported
// with libva's public vaExportSurfaceHandle (DRM PRIME 2, one layer per
// plane); the plane's dma-buf, offset, pitch and modifier become the
// import's request (a tiled modifier is refused there unless the VA
// context was created with the layer's consent to a de-tiled copy).  The
// exported fds are all closed before this returns: the import holds its
// own duplicate.
#include <memory>
#include <string>

#include "layer/core/dispatch.hpp"
#include "layer/import/fresh_handles.hpp"
#include "layer/import/image.hpp"
#include "layer/core/refuse.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/base/owned_fd.hpp"
#include "layer/core/registry.hpp"
#include "layer/va/entry_points.hpp"
#include "layer/va/forwarding.hpp"
#include "layer/va/shared_objects.hpp"
#include "layer/va/surface_export.hpp"
#include "layer/icd/devices.hpp"
#include "layer/import/record.hpp"

namespace cldmabuf::va {
namespace {

constexpr const char *import_call = "clCreateFromVA_APIMediaSurfaceINTEL";

cl_mem fail_import(cl_int *errcode_ret, cl_int err, const std::string &why) {
    return refuse_import(errcode_ret, err, import_call, why);
}

// The export's access from the image's: a read-only image never writes.
uint32_t export_access(cl_mem_flags flags) {
    if (flags & CL_MEM_READ_ONLY) return kExportReadOnly;
    if (flags & CL_MEM_WRITE_ONLY) return kExportWriteOnly;
    return kExportReadOnly | kExportWriteOnly;
}

}  // namespace

cl_mem CL_API_CALL create_from_media_surface(cl_context context, cl_mem_flags flags, VASurfaceID *surface,
                                             cl_uint plane, cl_int *errcode_ret) {
    if (!context || next().clGetContextInfo(context, CL_CONTEXT_NUM_DEVICES, 0, nullptr, nullptr) != CL_SUCCESS)
        return fail_import(errcode_ret, CL_INVALID_CONTEXT, "invalid context");
    VaContext shared;
    if (!find_context(context, &shared)) {
        const cl_platform_id platform = context_platform(context);
        if (icd_has_va(platform)) {
            using Fn = decltype(&create_from_media_surface);
            if (auto icd = reinterpret_cast<Fn>(icd_function(platform, import_call)))
                return fresh_mem(icd(context, flags, surface, plane, errcode_ret));
        }
        return fail_import(errcode_ret, CL_INVALID_CONTEXT, "the context was not created with CL_CONTEXT_VA_API_DISPLAY_INTEL");
    }
    const cl_mem_flags access = flags & (CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY | CL_MEM_READ_WRITE);
    if (flags != access || (access != CL_MEM_READ_ONLY && access != CL_MEM_WRITE_ONLY && access != CL_MEM_READ_WRITE))
        return fail_import(errcode_ret, CL_INVALID_VALUE,
                    "flags must be exactly one of CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY, CL_MEM_READ_WRITE");
    if (!surface) return fail_import(errcode_ret, CL_INVALID_VA_API_MEDIA_SURFACE_INTEL, "surface is NULL");
    const Libva *api = libva();
    if (!api) return fail_import(errcode_ret, CL_INVALID_OPERATION, "libva cannot be loaded");

    ExportedSurface exported;
    if (VAStatus st = export_surface(*api, shared.display, *surface, export_access(flags), &exported);
        st != kVaSuccess)
        return fail_import(errcode_ret, CL_INVALID_VA_API_MEDIA_SURFACE_INTEL,
                    "vaExportSurfaceHandle of surface " + std::to_string(*surface) + " failed: " +
                        status_text(*api, st));
    PlaneImage image;
    std::string why;
    if (cl_int err = plane_image(exported.desc, plane, &image, &why); err != CL_SUCCESS)
        return fail_import(errcode_ret, err, "surface " + std::to_string(*surface) + ": " + why);

    // The import takes the plane's fd; the other objects' fds close with `exported`.
    OwnedFd taken(exported.take_fd(image.object));
    ImageLayerProperties layer;
    layer.plane_offset = image.offset;
    layer.has_modifier = true;
    layer.modifier = image.modifier;
    layer.allow_tiled = shared.allow_tiled;  // the context's consent (layer/va/contexts.cpp) is the import's
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = image.width;
    desc.image_height = image.height;
    desc.image_row_pitch = image.pitch;
    cl_int err = CL_SUCCESS;
    // The layer's own image import (the plane's offset and modifier keep it
    // from an ICD's), as an application's clCreateImageWithProperties would get.
    cl_mem mem = import_dmabuf_image(context, dmabuf_image_request(taken.get(), layer), flags, &image.format, &desc, nullptr,
                                     &err);
    if (!mem) {
        // `taken` closes: a refused import left it alone.  The import logged
        // its reason; in this extension's words a property it refused (a
        // tiled or unknown modifier, a plane past the dma-buf) is a surface
        // that cannot be shared.
        if (err == CL_INVALID_PROPERTY || err == CL_INVALID_IMAGE_SIZE) err = CL_INVALID_VA_API_MEDIA_SURFACE_INTEL;
        if (errcode_ret) *errcode_ret = err;
        return nullptr;
    }
    const std::shared_ptr<Import> import = close_handed_fd(mem, taken.release());
    if (import) import->properties.clear();  // not created with a property list: CL_MEM_PROPERTIES is empty
    auto entry = std::make_shared<VaImage>();
    entry->context = context;
    entry->display = shared.display;
    entry->surface = *surface;
    entry->plane = plane;
    entry->import = import;
    entry->layer_import = import != nullptr;
    remember_image(mem, entry);
    LOG_INFO("%s: surface %u plane %u (%zux%zu, pitch %zu, offset %zu) imported as %p", import_call, *surface, plane,
             image.width, image.height, image.pitch, image.offset, static_cast<void *>(mem));
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return mem;
}

}  // namespace cldmabuf::va
