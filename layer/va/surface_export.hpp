// A VA surface as dma-bufs: vaExportSurfaceHandle (DRM PRIME 2, one layer
// per plane) and what each plane is as an OpenCL image.
#pragma once

#include <string>

#include "layer/va/libva.hpp"

namespace cldmabuf::va {

// The descriptor libva filled; its object fds are closed with it unless
// taken (take_fd).
struct ExportedSurface {
    PrimeDescriptor desc{};
    bool filled = false;
    ExportedSurface() = default;
    ExportedSurface(const ExportedSurface &) = delete;
    ExportedSurface &operator=(const ExportedSurface &) = delete;
    ~ExportedSurface();
    // The fd of object `index`, now the caller's (-1 if out of range).
    int take_fd(uint32_t index);
};

// vaExportSurfaceHandle(display, surface, DRM_PRIME_2, access | SEPARATE_LAYERS).
VAStatus export_surface(const Libva &api, VADisplay display, VASurfaceID surface, uint32_t access,
                        ExportedSurface *out);

// One plane (layer) of an exported surface as an OpenCL 2D image.
struct PlaneImage {
    cl_image_format format{};
    size_t width = 0, height = 0;
    size_t offset = 0, pitch = 0;
    uint32_t object = 0;
    uint64_t modifier = 0;
};

// The OpenCL image format of a plane exported with DRM format `drm` (R8,
// GR88, R16, GR1616, the packed 8-bit RGB ones); false for any other.
bool drm_plane_format(uint32_t drm, cl_image_format *out);

// CL_SUCCESS and *out, or the spec's error with *why: CL_INVALID_VALUE for a
// plane the surface does not have, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR for a
// layer format no OpenCL image format matches.
cl_int plane_image(const PrimeDescriptor &desc, cl_uint plane, PlaneImage *out, std::string *why);

}  // namespace cldmabuf::va
