// clGetSupportedVA_APIMediaSurfaceFormatsINTEL (cl_intel_sharing_format_query,
// its VA-API part): the VA surface formats whose plane `plane` a context
// created with a VA display can share.  A format is listed when the ICD
// supports, for `flags` and `image_type`, the image format that
// clCreateFromVA_APIMediaSurfaceINTEL imports that plane as
// (layer/va/surface_formats.hpp); clGetSupportedImageFormats already answers
// the union over the context's devices, as the query asks.  Only 2D images
// are made from surfaces: any other image type has no formats.
#include <string>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/import/image_checks.hpp"
#include "layer/base/log.hpp"
#include "layer/va/entry_points.hpp"
#include "layer/va/forwarding.hpp"
#include "layer/va/shared_objects.hpp"
#include "layer/va/surface_export.hpp"
#include "layer/va/surface_formats.hpp"
#include "layer/icd/devices.hpp"

namespace cldmabuf::va {
namespace {

constexpr const char *query_call = "clGetSupportedVA_APIMediaSurfaceFormatsINTEL";

cl_int refuse_query(cl_int err, const std::string &why) {
    LOG_ERROR("%s: %s", query_call, why.c_str());
    return err;
}

bool image_type_valid(cl_mem_object_type type) {
    switch (type) {
    case CL_MEM_OBJECT_IMAGE2D:
    case CL_MEM_OBJECT_IMAGE3D:
    case CL_MEM_OBJECT_IMAGE2D_ARRAY:
    case CL_MEM_OBJECT_IMAGE1D:
    case CL_MEM_OBJECT_IMAGE1D_ARRAY:
    case CL_MEM_OBJECT_IMAGE1D_BUFFER: return true;
    default: return false;
    }
}

}  // namespace

cl_int CL_API_CALL get_supported_media_surface_formats(cl_context context, cl_mem_flags flags,
                                                       cl_mem_object_type image_type, cl_uint plane,
                                                       cl_uint num_entries, ImageFormat *formats,
                                                       cl_uint *num_formats) {
    if (!context || next().clGetContextInfo(context, CL_CONTEXT_NUM_DEVICES, 0, nullptr, nullptr) != CL_SUCCESS)
        return refuse_query(CL_INVALID_CONTEXT, "invalid context");
    VaContext shared;
    if (!find_context(context, &shared)) {
        const cl_platform_id platform = context_platform(context);
        if (icd_has_va(platform)) {
            using Fn = decltype(&get_supported_media_surface_formats);
            if (auto icd = reinterpret_cast<Fn>(icd_function(platform, query_call)))
                return icd(context, flags, image_type, plane, num_entries, formats, num_formats);
            return refuse_query(CL_INVALID_CONTEXT, "the ICD shares VA-API surfaces itself and has no format query");
        }
        return refuse_query(CL_INVALID_CONTEXT, "the context was not created with CL_CONTEXT_VA_API_DISPLAY_INTEL");
    }
    if (flags != CL_MEM_READ_WRITE && flags != CL_MEM_READ_ONLY && flags != CL_MEM_WRITE_ONLY &&
        flags != CL_MEM_KERNEL_READ_AND_WRITE)
        return refuse_query(CL_INVALID_VALUE, "flags must be one of CL_MEM_READ_WRITE, CL_MEM_READ_ONLY, "
                                        "CL_MEM_WRITE_ONLY, CL_MEM_KERNEL_READ_AND_WRITE");
    if (!image_type_valid(image_type))
        return refuse_query(CL_INVALID_VALUE, "image_type " + std::to_string(image_type) + " is not an image type");
    if (num_entries == 0 && formats) return refuse_query(CL_INVALID_VALUE, "num_entries is 0 and va_api_formats is not NULL");
    if (!formats && !num_formats) return refuse_query(CL_INVALID_VALUE, "va_api_formats and num_surface_formats are both NULL");

    std::vector<ImageFormat> list;
    if (image_type == CL_MEM_OBJECT_IMAGE2D) {
        size_t count = 0;
        const SurfaceFormat *table = surface_formats(&count);
        for (size_t i = 0; i < count; ++i) {
            cl_image_format f{};
            if (plane < table[i].planes && drm_plane_format(table[i].plane_drm[plane], &f) &&
                format_supported(context, flags, CL_MEM_OBJECT_IMAGE2D, f))
                list.push_back(table[i].va);
        }
    }
    for (cl_uint i = 0; formats && i < num_entries && i < list.size(); ++i) formats[i] = list[i];
    if (num_formats) *num_formats = static_cast<cl_uint>(list.size());
    return CL_SUCCESS;
}

}  // namespace cldmabuf::va
