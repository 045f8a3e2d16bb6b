#include "layer/blit/tiled_shadow.hpp"

#include <cerrno>
#include <cstring>
#include <numeric>
#include <string>

#include <drm_fourcc.h>

#include "layer/blit/device_pairing.hpp"
#include "layer/blit/gem_cache.hpp"
#include "layer/blit/submit.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/i915/blit_plan.hpp"
#include "layer/core/import_state.hpp"
#include "layer/base/log.hpp"
#include "layer/base/stats.hpp"

namespace cldmabuf {

using i915::Tiling;

TiledImage::~TiledImage() {
    if (engine && shadow.obj.handle) engine->release_shadow(shadow);
}

namespace {

const char *tiling_name(Tiling t) { return t == Tiling::X ? "X-tiled" : "Y-tiled"; }

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// The shadow's pitch: blitter-legal (64 B, as Mesa aligns linear blit
// surfaces) and a whole number of CL_DEVICE_IMAGE_PITCH_ALIGNMENT pixels, so
// an ICD that wraps a buffer in an image can take it in place.
size_t shadow_pitch_for(const std::vector<cl_device_id> &devices, size_t row_bytes, size_t elem) {
    size_t align = 64;
    for (cl_device_id d : devices) {
        cl_uint pixels = 0;
        if (next().clGetDeviceInfo(d, CL_DEVICE_IMAGE_PITCH_ALIGNMENT, sizeof pixels, &pixels, nullptr) ==
                CL_SUCCESS &&
            pixels)
            align = std::lcm(align, size_t{pixels} * elem);
    }
    return round_up(row_bytes, align);
}

i915::ImageCopy blit_of(const TiledImage &t, bool to_shadow) {
    i915::ImageCopy c;
    c.elem_size = t.elem;
    c.width = t.width;
    c.height = t.height;
    i915::ImageSide tiled{t.plane_offset, t.tiled_pitch, t.tiling, 0, 0};
    i915::ImageSide linear{0, t.shadow_pitch, Tiling::Linear, 0, 0};
    c.src = to_shadow ? tiled : linear;
    c.dst = to_shadow ? linear : tiled;
    return c;
}

}  // namespace

cl_int prepare_tiled_image(const TiledRequest &req, const std::vector<cl_device_id> &devices,
                           std::unique_ptr<TiledImage> *out, std::string *why) {
    const std::string name = tiling_name(req.tiling);
    i915::BltEngine *engine = i915::BltEngine::instance();
    if (!engine) {
        *why = name + " import: no Gen9 blitter to de-tile with (no i915 Gen9 render node, or CLDMABUF_BLT=off)";
        return CL_INVALID_OPERATION;
    }
    for (cl_device_id d : devices)
        if (const char *mismatch = blt_device_mismatch(d)) {
            *why = name + " import: the blitter's node does not serve a device of the import (" + mismatch + ")";
            return CL_INVALID_OPERATION;
        }
    if (cl_int err = check_tiled_layout(req, why); err != CL_SUCCESS) return err;
    auto t = std::make_unique<TiledImage>();
    t->tiling = req.tiling;
    t->elem = static_cast<uint32_t>(req.elem);
    t->width = static_cast<uint32_t>(req.width);
    t->height = static_cast<uint32_t>(req.height);
    t->tiled_pitch = static_cast<uint32_t>(req.row_pitch);
    t->plane_offset = req.plane_offset;
    const size_t shadow_pitch = shadow_pitch_for(devices, req.width * req.elem, req.elem);
    if (shadow_pitch > i915::kMaxLinearPitch || req.width > i915::kMaxCoord || req.height > UINT32_MAX) {
        *why = name + " import: a row of " + std::to_string(req.width * req.elem) +
               " bytes is wider than the blitter's linear pitch limit (" + std::to_string(i915::kMaxLinearPitch) +
               " bytes)";
        return CL_INVALID_IMAGE_SIZE;
    }
    t->shadow_pitch = static_cast<uint32_t>(shadow_pitch);
    i915::BlitPlan plan;
    if (i915::plan_copy_2d(blit_of(*t, true), &plan) != 0 || i915::plan_copy_2d(blit_of(*t, false), &plan) != 0) {
        *why = name + " import: the blitter cannot express this surface";
        return CL_INVALID_IMAGE_DESCRIPTOR;
    }
    if (int r = engine->create_shadow(uint64_t{shadow_pitch} * req.height, &t->shadow); r != 0) {
        *why = name + " import: cannot allocate the linear shadow (" + std::to_string(shadow_pitch * req.height) +
               " bytes): " + std::strerror(-r);
        return CL_OUT_OF_RESOURCES;
    }
    t->engine = engine;
    *out = std::move(t);
    return CL_SUCCESS;
}

namespace {
void forget_tiled(const Import &import);
ImportState<std::unique_ptr<TiledImage>> shadows(forget_tiled);
void forget_tiled(const Import &import) { shadows.forget(import); }
}  // namespace

TiledImage *tiled_of(const Import &import) {
    std::unique_ptr<TiledImage> *t = shadows.find(import);
    return t ? t->get() : nullptr;
}

void attach_tiled(const Import &import, std::unique_ptr<TiledImage> tiled) { shadows.emplace(import, std::move(tiled)); }

HostPixels host_pixels(const Import &import) {
    if (const TiledImage *t = tiled_of(import))
        return {static_cast<char *>(t->shadow.map), t->shadow_pitch, 0};
    return {static_cast<char *>(import.mapping) + import.image.offset, import.image.row_pitch,
            import.image.slice_pitch};
}

namespace {

// One blit between the dma-buf and the shadow, waited for within the fence
// bound (layer/blit/submit.hpp), on the engine's own GEM context: the acquire
// or release asking for it names no queue here.  The dma-buf's GEM import is made once and
// cached on the import.
cl_int blit(Import &import, bool to_shadow, const char *step) {
    TiledImage &t = *tiled_of(import);
    const std::string what = std::string(step) + " of dma-buf fd " + std::to_string(import.fd);
    i915::BltImport dmabuf;
    if (int r = blt_import_of(import, *t.engine, &dmabuf); r != 0) {
        LOG_ERROR("%s: the blitter cannot import the dma-buf: %s", what.c_str(), std::strerror(-r));
        return CL_OUT_OF_RESOURCES;
    }
    const i915::BltImport &src = to_shadow ? dmabuf : t.shadow.obj;
    const i915::BltImport &dst = to_shadow ? t.shadow.obj : dmabuf;
    const uint64_t bytes = uint64_t{t.width} * t.height * t.elem;
    return submit_and_wait(what.c_str(), to_shadow ? BlitKind::detile : BlitKind::retile, bytes,
                           [&](const i915::BltContext *ctx, int, int *fence) {
                               return t.engine->submit_copy_2d(src, dst, blit_of(t, to_shadow), fence, -1, ctx);
                           });
}

}  // namespace

cl_int detile(Import &import) {
    // The execbuffer waits for the dma-buf's fences without a bound on a
    // real kernel (implicit sync), so wait with poll first: a fence that
    // never signals must fail the acquire, not hang the ring.
    stats().fence_waits++;
    const int wait = dmabuf_wait_idle(import.fd, (import.flags & CL_MEM_READ_ONLY) == 0, fence_timeout_ms());
    if (wait == -ETIME) {
        stats().fence_timeouts++;
        LOG_ERROR("acquire: dma-buf fd %d still has pending fences after %d ms (CLDMABUF_FENCE_TIMEOUT_MS)",
                  import.fd, fence_timeout_ms());
        return CL_OUT_OF_RESOURCES;
    }
    if (wait < 0) {
        LOG_ERROR("acquire: waiting for the fences of dma-buf fd %d failed: %s", import.fd, std::strerror(-wait));
        return CL_OUT_OF_RESOURCES;
    }
    return blit(import, true, "acquire (de-tile)");
}

cl_int retile(Import &import) { return blit(import, false, "release (re-tile)"); }

}  // namespace cldmabuf
