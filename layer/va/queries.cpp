// The extension's object queries on the layer's VA images:
// CL_MEM_VA_API_MEDIA_SURFACE_INTEL (a VASurfaceID *, pointing at the
// layer's copy of the id, valid while the object lives) and
// CL_IMAGE_VA_API_PLANE_INTEL (the plane).  Every other name is the
// import's (layer/import/queries.cpp) or the ICD's.
#include "layer/core/dispatch.hpp"
#include "layer/base/param_answer.hpp"
#include "layer/va/entry_points.hpp"
#include "layer/va/shared_objects.hpp"

namespace cldmabuf::va {

bool mem_object_info(cl_mem mem, cl_mem_info name, size_t size, void *value, size_t *size_ret, cl_int *err) {
    if (name != CL_MEM_VA_API_MEDIA_SURFACE_INTEL) return false;
    std::shared_ptr<VaImage> image = find_image(mem);
    if (!image) return false;
    VASurfaceID *id = &image->surface;
    *err = answer(&id, sizeof id, size, value, size_ret);
    return true;
}

bool image_info(cl_mem mem, cl_image_info name, size_t size, void *value, size_t *size_ret, cl_int *err) {
    if (name != CL_IMAGE_VA_API_PLANE_INTEL) return false;
    std::shared_ptr<VaImage> image = find_image(mem);
    if (!image) return false;
    *err = answer(&image->plane, sizeof image->plane, size, value, size_ret);
    return true;
}

}  // namespace cldmabuf::va
