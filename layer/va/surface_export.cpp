#include "layer/va/surface_export.hpp"

#include <cstdio>

#include "layer/base/kernel_ops.hpp"

namespace cldmabuf::va {
namespace {

constexpr uint32_t fourcc_of(char a, char b, char c, char d) {
    return uint32_t(uint8_t(a)) | uint32_t(uint8_t(b)) << 8 | uint32_t(uint8_t(c)) << 16 | uint32_t(uint8_t(d)) << 24;
}

// The DRM formats libva drivers give the planes of the surfaces FFmpeg
// maps (NV12, P010/P016, the packed 4:4:4 and RGB ones), and the OpenCL
// format NEO gives the same plane (R / RG of UNORM_INT8 or UNORM_INT16).
struct LayerFormat {
    uint32_t drm;
    cl_channel_order order;
    cl_channel_type type;
};
constexpr LayerFormat layer_formats[] = {
    {fourcc_of('R', '8', ' ', ' '), CL_R, CL_UNORM_INT8},
    {fourcc_of('G', 'R', '8', '8'), CL_RG, CL_UNORM_INT8},
    {fourcc_of('R', '1', '6', ' '), CL_R, CL_UNORM_INT16},
    {fourcc_of('G', 'R', '3', '2'), CL_RG, CL_UNORM_INT16},  // DRM_FORMAT_GR1616
    {fourcc_of('A', 'R', '2', '4'), CL_BGRA, CL_UNORM_INT8},  // ARGB8888: B, G, R, A in memory
    {fourcc_of('X', 'R', '2', '4'), CL_BGRA, CL_UNORM_INT8},
    {fourcc_of('A', 'B', '2', '4'), CL_RGBA, CL_UNORM_INT8},  // ABGR8888: R, G, B, A in memory
    {fourcc_of('X', 'B', '2', '4'), CL_RGBA, CL_UNORM_INT8},
};

// Surface fourccs whose planes after the first are subsampled 2x2 (4:2:0).
bool chroma_420(uint32_t surface_fourcc) {
    return surface_fourcc == fourcc_of('N', 'V', '1', '2') || surface_fourcc == fourcc_of('P', '0', '1', '0') ||
           surface_fourcc == fourcc_of('P', '0', '1', '6') || surface_fourcc == fourcc_of('Y', 'V', '1', '2') ||
           surface_fourcc == fourcc_of('I', '4', '2', '0');
}

std::string drm_format_text(uint32_t f) {
    char s[5] = {char(f), char(f >> 8), char(f >> 16), char(f >> 24), 0};
    return s;
}

}  // namespace

ExportedSurface::~ExportedSurface() {
    if (!filled) return;
    for (uint32_t i = 0; i < desc.num_objects && i < 4; ++i)
        if (desc.objects[i].fd >= 0) kernel().close(desc.objects[i].fd);
}

int ExportedSurface::take_fd(uint32_t index) {
    if (!filled || index >= desc.num_objects || index >= 4) return -1;
    const int fd = desc.objects[index].fd;
    desc.objects[index].fd = -1;
    return fd;
}

VAStatus export_surface(const Libva &api, VADisplay display, VASurfaceID surface, uint32_t access,
                        ExportedSurface *out) {
    PrimeDescriptor desc{};
    const VAStatus st = api.export_surface_handle(display, surface, kMemTypeDrmPrime2, access | kExportSeparateLayers,
                                                  &desc);
    if (st != kVaSuccess) return st;
    out->desc = desc;
    out->filled = true;
    return st;
}

bool drm_plane_format(uint32_t drm, cl_image_format *out) {
    for (const auto &f : layer_formats)
        if (f.drm == drm) {
            *out = {f.order, f.type};
            return true;
        }
    return false;
}

cl_int plane_image(const PrimeDescriptor &desc, cl_uint plane, PlaneImage *out, std::string *why) {
    if (plane >= desc.num_layers || plane >= 4) {
        *why = "plane " + std::to_string(plane) + " does not exist: the " + drm_format_text(desc.fourcc) +
               " surface has " + std::to_string(desc.num_layers) + " plane(s)";
        return CL_INVALID_VALUE;
    }
    const auto &layer = desc.layers[plane];
    if (layer.num_planes != 1 || layer.object_index[0] >= desc.num_objects) {
        *why = "the driver exported plane " + std::to_string(plane) + " as " + std::to_string(layer.num_planes) +
               " planes of object " + std::to_string(layer.object_index[0]) + " (one plane per layer expected)";
        return CL_INVALID_VA_API_MEDIA_SURFACE_INTEL;
    }
    if (!drm_plane_format(layer.drm_format, &out->format)) {
        *why = "plane " + std::to_string(plane) + " has DRM format " + drm_format_text(layer.drm_format) +
               ", which no OpenCL image format matches";
        return CL_INVALID_IMAGE_FORMAT_DESCRIPTOR;
    }
    const bool sub = plane > 0 && chroma_420(desc.fourcc);
    out->width = sub ? (desc.width + 1) / 2 : desc.width;
    out->height = sub ? (desc.height + 1) / 2 : desc.height;
    out->offset = layer.offset[0];
    out->pitch = layer.pitch[0];
    out->object = layer.object_index[0];
    out->modifier = desc.objects[out->object].drm_format_modifier;
    return CL_SUCCESS;
}

}  // namespace cldmabuf::va
