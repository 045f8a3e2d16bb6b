// The layout rules of a tiled image import, pure (split from
// tiled_shadow.cpp so that tests/fuzz links them without the blitter).
#include <string>

#include <drm_fourcc.h>

#include "layer/blit/tiled_shadow.hpp"

namespace cldmabuf {

using i915::Tiling;

namespace {

constexpr uint64_t kTileBytes = 4096;  // X and Y tiles alike

const char *layout_tiling_name(Tiling t) { return t == Tiling::X ? "X-tiled" : "Y-tiled"; }

size_t round_up_rows(size_t v, size_t a) { return (v + a - 1) / a * a; }

}  // namespace

bool tiling_of_modifier(uint64_t modifier, Tiling *tiling) {
    if (modifier == I915_FORMAT_MOD_X_TILED) *tiling = Tiling::X;
    else if (modifier == I915_FORMAT_MOD_Y_TILED) *tiling = Tiling::Y;
    else return false;
    return true;
}

size_t tiled_row_pitch(Tiling tiling, size_t row_bytes, size_t desc_pitch) {
    if (desc_pitch) return desc_pitch;
    const size_t tw = i915::tile_width_bytes(tiling);
    return (row_bytes + tw - 1) / tw * tw;
}

cl_int check_tiled_layout(const TiledRequest &req, std::string *why) {
    const std::string name = layout_tiling_name(req.tiling);
    if (req.type != CL_MEM_OBJECT_IMAGE2D) {
        *why = name + " import: only CL_MEM_OBJECT_IMAGE2D can be tiled";
        return CL_INVALID_IMAGE_DESCRIPTOR;
    }
    if (req.elem != 1 && req.elem != 2 && req.elem != 4 && req.elem != 8 && req.elem != 16) {
        *why = name + " import: the blitter copies pixels of 1, 2, 4, 8 or 16 bytes, not " +
               std::to_string(req.elem);
        return CL_IMAGE_FORMAT_NOT_SUPPORTED;
    }
    const size_t tw = i915::tile_width_bytes(req.tiling), th = i915::tile_height_rows(req.tiling);
    if (req.row_pitch % tw || req.row_pitch / 4 > i915::kMaxTiledPitchDwords) {
        *why = name + " import: image_row_pitch " + std::to_string(req.row_pitch) + " must be a multiple of the " +
               std::to_string(tw) + "-byte tile width (and at most " +
               std::to_string(size_t{i915::kMaxTiledPitchDwords} * 4) + ")";
        return CL_INVALID_IMAGE_DESCRIPTOR;
    }
    if (req.plane_offset % kTileBytes) {
        *why = name + " import: CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF " + std::to_string(req.plane_offset) +
               " must be a multiple of the 4096-byte tile";
        return CL_INVALID_PROPERTY;
    }
    // The surface spans whole tile rows.
    const uint64_t surface = uint64_t{req.row_pitch} * round_up_rows(req.height, th);
    if (req.plane_offset > req.dmabuf_size || surface > req.dmabuf_size - req.plane_offset) {
        *why = name + " import: plane offset " + std::to_string(req.plane_offset) + " + " +
               std::to_string(surface) + " bytes of whole tile rows is past the dma-buf's end (" +
               std::to_string(req.dmabuf_size) + " bytes)";
        return CL_INVALID_IMAGE_SIZE;
    }
    return CL_SUCCESS;
}

}  // namespace cldmabuf
