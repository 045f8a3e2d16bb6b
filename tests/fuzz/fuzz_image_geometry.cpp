// Fuzz target 2: an image import's descriptor, format and plane geometry
// (layer/import/image_checks.*: describe_surface, image_geometry,
// check_modifier, plane_end; layer/blit/tiled_layout.cpp for X/Y-tiled
// surfaces), the checks an image import makes before the ICD is asked.
//
// Asserted for every accepted import:
//  * the pitches hold a row / a slice, no product overflowed, and every
//    pixel of the region lies inside `needed` bytes; `bytes` <= `needed`;
//  * plane_end accepts only when offset + needed fits the dma-buf, and
//    then every pixel lies inside the dma-buf (what the ICD reads through
//    the mapping, layer/blit/tiled_shadow.cpp host_pixels);
//  * the modifier rule: only LINEAR, INVALID with ASSUME_LINEAR, or X/Y
//    with ALLOW_TILED pass;
//  * a tiled surface that passes check_tiled_layout plans both blits
//    (de-tile and re-tile, over a 64 B-aligned linear shadow as on a device
//    without a pitch alignment) and those blits stay inside the dma-buf and
//    the shadow (plan_extent: the bound the engine checks before submit).
#include <climits>
#include <cstdint>
#include <string>

#include <drm_fourcc.h>

#include "CL/cl_ext_cldmabuf.h"
#include "fuzz_input.hpp"
#include "layer/blit/tiled_shadow.hpp"
#include "layer/i915/blit_plan.hpp"
#include "layer/import/image_checks.hpp"

using namespace cldmabuf;

namespace {

const uint32_t kOrders[] = {CL_R, CL_A, CL_RG, CL_RA, CL_RGB, CL_RGBA, CL_BGRA, CL_ARGB, CL_INTENSITY,
                            CL_LUMINANCE, CL_Rx, CL_RGx, CL_RGBx, CL_DEPTH, CL_sRGB, CL_sRGBx, CL_sRGBA,
                            CL_sBGRA, CL_ABGR, 0x10B7 /* CL_DEPTH_STENCIL */, 0x1234};
const uint32_t kTypes[] = {CL_SNORM_INT8, CL_SNORM_INT16, CL_UNORM_INT8, CL_UNORM_INT16, CL_UNORM_SHORT_565,
                           CL_UNORM_SHORT_555, CL_UNORM_INT_101010, CL_SIGNED_INT8, CL_SIGNED_INT16,
                           CL_SIGNED_INT32, CL_UNSIGNED_INT8, CL_UNSIGNED_INT16, CL_UNSIGNED_INT32, CL_HALF_FLOAT,
                           CL_FLOAT, CL_UNORM_INT24, 0x10E0 /* CL_UNORM_INT_101010_2 */, 0x4321};
const cl_mem_object_type kTypesObj[] = {CL_MEM_OBJECT_IMAGE1D, CL_MEM_OBJECT_IMAGE1D_BUFFER,
                                        CL_MEM_OBJECT_IMAGE1D_ARRAY, CL_MEM_OBJECT_IMAGE2D,
                                        CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_MEM_OBJECT_IMAGE3D, CL_MEM_OBJECT_BUFFER};

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// The offset of pixel (x, y, z) from the plane's start, as the layer records
// it for the ICD and the blitter (Import::image: row pitch, slice pitch).
bool region_inside(const cl_image_desc &desc, const Geometry &g) {
    // The last pixel of the last row of the last slice, in the recorded
    // geometry; a 1D array's layers are its rows (row_pitch = slice pitch).
    const uint64_t rows = g.region[1], slices = g.region[2];
    const uint64_t last = (slices - 1) * uint64_t{g.slice_pitch} + (rows - 1) * uint64_t{g.row_pitch} +
                          uint64_t{desc.image_width} * g.elem;
    return last <= g.needed;
}

void check_tiled(const cl_image_desc &desc, const SurfaceLayout &s, const ImageLayerProperties &layer,
                 uint64_t dmabuf) {
    TiledRequest tr;
    tr.tiling = s.tiling;
    tr.type = desc.image_type;
    tr.elem = s.elem;
    tr.width = desc.image_width;
    tr.height = desc.image_height;
    tr.row_pitch = s.g.row_pitch;
    tr.plane_offset = layer.plane_offset;
    tr.dmabuf_size = dmabuf;
    std::string why;
    const cl_int err = check_tiled_layout(tr, &why);
    FUZZ_ASSERT(err == CL_SUCCESS || !why.empty());
    if (err != CL_SUCCESS) return;
    // prepare_tiled_image's remaining rules, with a shadow pitch of whole 64 B.
    const size_t shadow_pitch = round_up(tr.width * tr.elem, 64);
    if (shadow_pitch > i915::kMaxLinearPitch || tr.width > i915::kMaxCoord || tr.height > UINT32_MAX) return;
    for (bool to_shadow : {true, false}) {
        i915::ImageCopy c;
        c.elem_size = static_cast<uint32_t>(tr.elem);
        c.width = static_cast<uint32_t>(tr.width);
        c.height = static_cast<uint32_t>(tr.height);
        const i915::ImageSide tiled{tr.plane_offset, static_cast<uint32_t>(tr.row_pitch), tr.tiling, 0, 0};
        const i915::ImageSide linear{0, static_cast<uint32_t>(shadow_pitch), i915::Tiling::Linear, 0, 0};
        c.src = to_shadow ? tiled : linear;
        c.dst = to_shadow ? linear : tiled;
        i915::BlitPlan plan;
        if (i915::plan_copy_2d(c, &plan) != 0) return;  // refused at import: CL_INVALID_IMAGE_DESCRIPTOR
        uint64_t src_end = 0, dst_end = 0;
        i915::plan_extent(plan, &src_end, &dst_end);
        const uint64_t tiled_end = to_shadow ? src_end : dst_end, linear_end = to_shadow ? dst_end : src_end;
        // An accepted import whose de-tile the engine would refuse fails every acquire.
        FUZZ_ASSERT(tiled_end <= dmabuf);
        FUZZ_ASSERT(linear_end <= uint64_t{shadow_pitch} * tr.height);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzedDataProvider in(data, size);
    ImageLayerProperties layer;
    layer.plane_offset = fuzz::pick(in, {0, 1, 64, 4096, 8192, 1u << 20, UINT32_MAX, UINT64_MAX});
    layer.has_modifier = in.ConsumeBool();
    layer.modifier = fuzz::pick(in, {DRM_FORMAT_MOD_LINEAR, DRM_FORMAT_MOD_INVALID, I915_FORMAT_MOD_X_TILED,
                                     I915_FORMAT_MOD_Y_TILED, I915_FORMAT_MOD_Yf_TILED,
                                     I915_FORMAT_MOD_Y_TILED_CCS});
    layer.allow_tiled = in.ConsumeBool();
    layer.assume_linear = in.ConsumeBool();
    cl_image_format format;
    format.image_channel_order = in.PickValueInArray(kOrders);
    format.image_channel_data_type = in.PickValueInArray(kTypes);
    cl_image_desc desc{};
    desc.image_type = in.PickValueInArray(kTypesObj);
    desc.image_width = fuzz::size(in, 4096);
    desc.image_height = fuzz::size(in, 512);
    desc.image_depth = fuzz::size(in, 16);
    desc.image_array_size = fuzz::size(in, 16);
    desc.image_row_pitch = in.ConsumeBool() ? 0 : fuzz::size(in, 70000);
    desc.image_slice_pitch = in.ConsumeBool() ? 0 : fuzz::size(in, 1u << 22);
    const int64_t dmabuf = static_cast<int64_t>(fuzz::size(in, 1u << 26) & INT64_MAX);

    // The modifier rule, on its own.
    std::string why;
    const cl_int mod_err = check_modifier(layer, &why);
    const bool mod_ok = !layer.has_modifier || layer.modifier == DRM_FORMAT_MOD_LINEAR ||
                        (layer.modifier == DRM_FORMAT_MOD_INVALID && layer.assume_linear) ||
                        ((layer.modifier == I915_FORMAT_MOD_X_TILED || layer.modifier == I915_FORMAT_MOD_Y_TILED) &&
                         layer.allow_tiled);
    FUZZ_ASSERT((mod_err == CL_SUCCESS) == mod_ok);
    FUZZ_ASSERT(mod_err == CL_SUCCESS || (mod_err == CL_INVALID_PROPERTY && !why.empty()));

    SurfaceLayout s;
    why.clear();
    const cl_int err = describe_surface(layer, format, desc, &s, &why);
    FUZZ_ASSERT(err == CL_SUCCESS || err == CL_INVALID_IMAGE_FORMAT_DESCRIPTOR || err == CL_INVALID_IMAGE_DESCRIPTOR ||
                err == CL_INVALID_IMAGE_SIZE);
    if (err != CL_SUCCESS) {
        FUZZ_ASSERT(!why.empty());
        return 0;
    }
    const Geometry &g = s.g;
    FUZZ_ASSERT(s.elem >= 1 && s.elem <= 16 && g.elem == s.elem);
    uint64_t row_bytes = 0;
    FUZZ_ASSERT(!__builtin_mul_overflow(uint64_t{desc.image_width}, uint64_t{s.elem}, &row_bytes));
    FUZZ_ASSERT(g.region[0] == desc.image_width && g.region[1] >= 1 && g.region[2] >= 1);
    FUZZ_ASSERT(g.row_pitch >= row_bytes && g.row_pitch % s.elem == 0);
    FUZZ_ASSERT(g.bytes <= g.needed);
    FUZZ_ASSERT(region_inside(desc, g));
    if (s.tiled) FUZZ_ASSERT(layer.allow_tiled && layer.has_modifier);
    // A tiled pitch left 0 is the row in whole tiles (1D arrays keep their slice pitch as the row pitch).
    // (A row within a tile of SIZE_MAX wraps when rounded up: such an image
    // is refused later by check_tiled_layout or plane_end, so it is left out.)
    if (s.tiled && desc.image_row_pitch == 0 && desc.image_type != CL_MEM_OBJECT_IMAGE1D_ARRAY &&
        row_bytes <= SIZE_MAX - 512)
        FUZZ_ASSERT(g.row_pitch % i915::tile_width_bytes(s.tiling) == 0);

    size_t end = 0;
    const bool fits = plane_end(layer.plane_offset, g.needed, dmabuf, &end);
    uint64_t want = 0;
    const bool want_fits = !__builtin_add_overflow(layer.plane_offset, uint64_t{g.needed}, &want) &&
                           want <= static_cast<uint64_t>(dmabuf);
    FUZZ_ASSERT(fits == want_fits);
    if (fits) FUZZ_ASSERT(end == want);
    if (!fits || mod_err != CL_SUCCESS) return 0;
    if (s.tiled) check_tiled(desc, s, layer, static_cast<uint64_t>(dmabuf));
    return 0;
}
