// What the layer knows of its VA-API sharing: contexts created with
// CL_CONTEXT_VA_API_DISPLAY_INTEL and the images it made from VA surfaces.
// Keyed by handle; an image's entry holds its import (layer/core/registry.hpp) and
// counts only while the registry still gives that import for the handle, so
// a handle the ICD reuses after the object died is never taken for a surface.
#pragma once

#include <memory>
#include <vector>

#include "layer/core/registry.hpp"
#include "layer/va/va_abi.hpp"

namespace cldmabuf::va {

struct VaContext {
    VADisplay display = nullptr;
    bool user_sync = false;                      // CL_CONTEXT_INTEROP_USER_SYNC = CL_TRUE
    bool allow_tiled = false;                    // CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF = CL_TRUE
    std::vector<cl_context_properties> original; // the application's list, for CL_CONTEXT_PROPERTIES
};

struct VaImage {
    cl_context context = nullptr;
    VADisplay display = nullptr;
    VASurfaceID surface = 0;   // CL_MEM_VA_API_MEDIA_SURFACE_INTEL answers a pointer to it
    cl_uint plane = 0;
    std::weak_ptr<Import> import;
    bool layer_import = false;  // the layer's import (else an ICD that imports dma-bufs itself made it)
    bool acquired = false;
};

void remember_context(cl_context context, const VaContext &info);
// Copies the context's entry; false when it was not created with a VA display.
bool find_context(cl_context context, VaContext *out);

void remember_image(cl_mem mem, const std::shared_ptr<VaImage> &image);
// The live image behind `mem`, or null (not one of ours, or a stale handle).
std::shared_ptr<VaImage> find_image(cl_mem mem);
// Acquired state flips under one lock: `set` true for an acquire.  False
// when any object's state is not the expected one (nothing changed then).
bool flip_acquired(const std::vector<std::shared_ptr<VaImage>> &images, bool set);

}  // namespace cldmabuf::va
