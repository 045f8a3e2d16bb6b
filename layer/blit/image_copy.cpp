// clEnqueueCopyImage, clEnqueueCopyImageToBuffer and clEnqueueCopyBufferToImage
// between zero-copy imports on the Gen9 blitter (docs/blitter.md, "Image
// copies").
//
// Every image the layer imports is a linear surface inside its dma-buf:
// plane offset, row pitch, slice pitch (layer/import/image.cpp records
// them on Import::image; a 1D array is stored as rows of one element row
// each, so its layer index is the y coordinate as the spec has it).  A copy
// between such surfaces is therefore a byte rectangle per slice: the rect
// planner (plan_copy_rect) folds contiguous slices into one blit and gives
// each padded slice (2D array layer, 3D slice) its own blit in the same
// batch.  The buffer side of image<->buffer copies is the linear surface the
// spec packs it as: row pitch = region width x element size, slice pitch =
// row pitch x region height.
//
// Once the layer takes a copy the ICD never sees it, so the layer checks what
// the spec names for these calls: CL_INVALID_VALUE (NULL or zero region,
// origin + region outside an image, a buffer range outside the buffer),
// CL_IMAGE_FORMAT_MISMATCH, CL_MEM_COPY_OVERLAP (same image, regions meet).
// Object-type errors (a buffer where an image belongs) and everything the
// blitter does not take go to the ICD unchanged, so its own codes come back.
#include "layer/blit/copy_overrides.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "layer/blit/copy_checks.hpp"
#include "layer/blit/eligibility.hpp"
#include "layer/blit/fence_chain.hpp"
#include "layer/blit/owned_sides.hpp"
#include "layer/blit/submit.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/queue/epoch.hpp"
#include "layer/base/image_format.hpp"
#include "layer/i915/blit_plan.hpp"
#include "layer/base/log.hpp"
#include "layer/core/registry.hpp"
#include "layer/base/stats.hpp"

namespace cldmabuf {
namespace {

// One side of an image copy: a linear surface inside its import, in bytes.
struct Surface {
    uint64_t base = 0;  // byte offset of element (0,0,0) in the import
    uint64_t row_pitch = 0, slice_pitch = 0;
    uint64_t extent[3] = {0, 0, 0};  // elements, rows, slices: the bounds origin + region must keep
};

bool same_format(const cl_image_format &a, const cl_image_format &b) {
    return a.image_channel_order == b.image_channel_order && a.image_channel_data_type == b.image_channel_data_type;
}

bool image_format(cl_mem image, cl_image_format *out) {
    return next().clGetImageInfo(image, CL_IMAGE_FORMAT, sizeof *out, out, nullptr) == CL_SUCCESS;
}

Surface image_surface(const Import &imp) {
    Surface s;
    s.base = imp.image.offset;
    s.row_pitch = imp.image.row_pitch;
    // A 1D array's layers are its rows (its slice pitch is their stride), so
    // its one "slice" spans them all.
    s.slice_pitch = std::max<uint64_t>(imp.image.slice_pitch, uint64_t{imp.image.row_pitch} * imp.image.region[1]);
    std::copy(std::begin(imp.image.region), std::end(imp.image.region), s.extent);
    return s;
}

// The spec's packing of an image region in a buffer, starting at `offset`.
Surface buffer_surface(const CopySide &side, uint64_t offset, const size_t region[3], uint64_t es) {
    Surface s;
    s.base = side.base + offset;
    s.row_pitch = region[0] * es;
    s.slice_pitch = s.row_pitch * region[1];
    s.extent[0] = region[0], s.extent[1] = region[1], s.extent[2] = region[2];
    return s;
}

// CL_INVALID_VALUE unless origin + region lies inside the image.
cl_int check_image_region(const size_t *origin, const size_t *region, const Surface &s, const char *what,
                          const char *side) {
    if (region_inside(origin, region, s.extent)) return CL_SUCCESS;
    LOG_ERROR("%s: %s origin + region (%zu, %zu, %zu) + (%zu, %zu, %zu) is outside the image "
              "(%llu x %llu x %llu)",
              what, side, origin[0], origin[1], origin[2], region[0], region[1], region[2],
              static_cast<unsigned long long>(s.extent[0]), static_cast<unsigned long long>(s.extent[1]),
              static_cast<unsigned long long>(s.extent[2]));
    return CL_INVALID_VALUE;
}

// CL_INVALID_VALUE for a NULL or zero region (the rule of all three calls).
cl_int check_region(const size_t *a, const size_t *b, const size_t *region, const char *what) {
    if (!region_given(a, b, region)) {
        LOG_ERROR("%s: origin or region is NULL", what);
        return CL_INVALID_VALUE;
    }
    if (!region_nonzero(region)) {
        LOG_ERROR("%s: region (%zu, %zu, %zu) has a zero extent", what, region[0], region[1], region[2]);
        return CL_INVALID_VALUE;
    }
    return CL_SUCCESS;
}

// CL_INVALID_VALUE when the packed region at `offset` leaves the buffer.
cl_int check_buffer_range(uint64_t offset, const size_t region[3], uint64_t es, uint64_t size, const char *what) {
    if (packed_range_inside(offset, region, es, size)) return CL_SUCCESS;
    LOG_ERROR("%s: buffer offset %llu + %zu x %zu x %zu elements of %llu bytes is past the buffer's %llu bytes",
              what, static_cast<unsigned long long>(offset), region[0], region[1], region[2],
              static_cast<unsigned long long>(es), static_cast<unsigned long long>(size));
    return CL_INVALID_VALUE;
}

// The byte rectangle of a copy between two surfaces.
i915::RectCopy byte_rect(const Surface &s, const size_t *so, const Surface &d, const size_t *dor,
                         const size_t *region, uint64_t es) {
    i915::RectCopy rc;
    rc.src_base = s.base, rc.dst_base = d.base;
    rc.src_x = so[0] * es, rc.src_y = so[1], rc.src_z = so[2];
    rc.dst_x = dor[0] * es, rc.dst_y = dor[1], rc.dst_z = dor[2];
    rc.width = region[0] * es, rc.height = region[1], rc.depth = region[2];
    rc.src_row_pitch = s.row_pitch, rc.src_slice_pitch = s.slice_pitch;
    rc.dst_row_pitch = d.row_pitch, rc.dst_slice_pitch = d.slice_pitch;
    return rc;
}

// Plans once before enqueueing: a copy the blitter cannot express (a pitch
// past the limits in every direction) still goes to the ICD instead of
// failing at run time.
bool expressible(const i915::RectCopy &rc) {
    thread_local i915::BlitPlan plan;
    return i915::plan_copy_rect(rc, &plan) == 0;
}

cl_int enqueue_rect(cl_command_queue queue, cl_mem src, cl_mem dst, cl_command_type type, cl_uint num_events,
                    const cl_event *wait_list, cl_event *event, const char *what, const BltTarget &t,
                    const i915::RectCopy &rc) {
    const uint64_t bytes = rc.width * rc.height * rc.depth;
    return enqueue_blit(queue, src, dst, type, num_events, wait_list, event, what, bytes,
                        [engine = t.engine, s = t.src, d = t.dst, rc](const i915::BltContext *ctx, int in_fence,
                                                                      int *fence) {
                            return engine->submit_copy_rect(s, d, rc, fence, in_fence, ctx);
                        });
}

// The element size of `image`'s format, or 0 (then the ICD judges).
uint64_t element_size(cl_mem image, cl_image_format *format) {
    if (!image_format(image, format)) return 0;
    return image_element_size(*format);
}

bool device_has_images(cl_device_id device) {
    cl_bool images = CL_FALSE;
    return next().clGetDeviceInfo(device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, nullptr) == CL_SUCCESS &&
           images == CL_TRUE;
}

// The checks every image override makes once take_blitter said yes: the
// device takes images and the image's format has an element size.  0 sends
// the call to the ICD (counted with `why`).
uint64_t usable_element_size(const BltTarget &t, cl_mem image, cl_image_format *format, const char **why) {
    if (!device_has_images(t.device)) {
        *why = "device without image support (ICD reports)";
        return 0;
    }
    const uint64_t es = element_size(image, format);
    if (!es) *why = "image format without a known element size";
    return es;
}

}  // namespace

cl_int CL_API_CALL enqueue_copy_image(cl_command_queue queue, cl_mem src, cl_mem dst, const size_t *src_origin,
                                      const size_t *dst_origin, const size_t *region, cl_uint num_events,
                                      const cl_event *wait_list, cl_event *event) {
    auto pass = [&] {
        break_fence_chain(queue);
        CountedCommand counted;  // in flight until the ICD has it (layer/queue/epoch.hpp)
        return next().clEnqueueCopyImage(queue, src, dst, src_origin, dst_origin, region, num_events, wait_list,
                                         event);
    };
    constexpr const char *what = "clEnqueueCopyImage";
    if (cl_int err = check_owned_wait_list(src, dst, num_events, wait_list, what); err != CL_SUCCESS) return err;
    BltTarget t;
    cl_int status;
    if (!take_blitter(queue, src, MemKind::image, dst, MemKind::image, &t, &status))
        return status != CL_SUCCESS ? status : pass();
    cl_image_format sf{}, df{};
    const char *why = nullptr;
    const uint64_t es = usable_element_size(t, src, &sf, &why);
    if (!es || !image_format(dst, &df)) {
        stats().count_fallback(why ? why : "image format query failed");
        return pass();
    }
    if (!same_format(sf, df)) {
        LOG_ERROR("%s: source and destination formats differ (order 0x%x type 0x%x vs order 0x%x type 0x%x)", what,
                  sf.image_channel_order, sf.image_channel_data_type, df.image_channel_order,
                  df.image_channel_data_type);
        return CL_IMAGE_FORMAT_MISMATCH;
    }
    if (cl_int err = check_region(src_origin, dst_origin, region, what); err != CL_SUCCESS) return err;
    const Surface s = image_surface(*t.src_import), d = image_surface(*t.dst_import);
    if (cl_int err = check_image_region(src_origin, region, s, what, "source"); err != CL_SUCCESS) return err;
    if (cl_int err = check_image_region(dst_origin, region, d, what, "destination"); err != CL_SUCCESS) return err;
    const i915::RectCopy rc = byte_rect(s, src_origin, d, dst_origin, region, es);
    if (src == dst) {
        // Same image, same pitches: the regions meet exactly when their bytes do.
        RectArgs r;
        const CopySide whole{0, UINT64_MAX};
        r.src_origin[0] = rc.src_x, r.src_origin[1] = rc.src_y, r.src_origin[2] = rc.src_z;
        r.dst_origin[0] = rc.dst_x, r.dst_origin[1] = rc.dst_y, r.dst_origin[2] = rc.dst_z;
        r.region[0] = rc.width, r.region[1] = rc.height, r.region[2] = rc.depth;
        r.src_row_pitch = r.dst_row_pitch = s.row_pitch;
        r.src_slice_pitch = r.dst_slice_pitch = s.slice_pitch;
        if (rects_overlap(r, whole, whole)) {
            LOG_ERROR("%s: source and destination regions of image %p overlap", what, static_cast<void *>(src));
            return CL_MEM_COPY_OVERLAP;
        }
    }
    if (!expressible(rc)) {
        stats().count_fallback("image copy the blitter cannot express");
        return pass();
    }
    return enqueue_rect(queue, src, dst, CL_COMMAND_COPY_IMAGE, num_events, wait_list, event, what, t, rc);
}

cl_int CL_API_CALL enqueue_copy_image_to_buffer(cl_command_queue queue, cl_mem src, cl_mem dst,
                                                const size_t *src_origin, const size_t *region, size_t dst_offset,
                                                cl_uint num_events, const cl_event *wait_list, cl_event *event) {
    auto pass = [&] {
        break_fence_chain(queue);
        CountedCommand counted;  // in flight until the ICD has it (layer/queue/epoch.hpp)
        return next().clEnqueueCopyImageToBuffer(queue, src, dst, src_origin, region, dst_offset, num_events,
                                                 wait_list, event);
    };
    constexpr const char *what = "clEnqueueCopyImageToBuffer";
    if (cl_int err = check_owned_wait_list(src, dst, num_events, wait_list, what); err != CL_SUCCESS) return err;
    BltTarget t;
    cl_int status;
    if (!take_blitter(queue, src, MemKind::image, dst, MemKind::buffer, &t, &status))
        return status != CL_SUCCESS ? status : pass();
    cl_image_format f{};
    const char *why = nullptr;
    const uint64_t es = usable_element_size(t, src, &f, &why);
    if (!es) {
        stats().count_fallback(why);
        return pass();
    }
    if (cl_int err = check_region(src_origin, src_origin, region, what); err != CL_SUCCESS) return err;
    const Surface s = image_surface(*t.src_import);
    if (cl_int err = check_image_region(src_origin, region, s, what, "source"); err != CL_SUCCESS) return err;
    if (cl_int err = check_buffer_range(dst_offset, region, es, t.dst_side.size, what); err != CL_SUCCESS)
        return err;
    const Surface d = buffer_surface(t.dst_side, dst_offset, region, es);
    static constexpr size_t zero[3] = {0, 0, 0};
    const i915::RectCopy rc = byte_rect(s, src_origin, d, zero, region, es);
    if (!expressible(rc)) {
        stats().count_fallback("image copy the blitter cannot express");
        return pass();
    }
    return enqueue_rect(queue, src, dst, CL_COMMAND_COPY_IMAGE_TO_BUFFER, num_events, wait_list, event, what, t,
                        rc);
}

cl_int CL_API_CALL enqueue_copy_buffer_to_image(cl_command_queue queue, cl_mem src, cl_mem dst, size_t src_offset,
                                                const size_t *dst_origin, const size_t *region, cl_uint num_events,
                                                const cl_event *wait_list, cl_event *event) {
    auto pass = [&] {
        break_fence_chain(queue);
        CountedCommand counted;  // in flight until the ICD has it (layer/queue/epoch.hpp)
        return next().clEnqueueCopyBufferToImage(queue, src, dst, src_offset, dst_origin, region, num_events,
                                                 wait_list, event);
    };
    constexpr const char *what = "clEnqueueCopyBufferToImage";
    if (cl_int err = check_owned_wait_list(src, dst, num_events, wait_list, what); err != CL_SUCCESS) return err;
    BltTarget t;
    cl_int status;
    if (!take_blitter(queue, src, MemKind::buffer, dst, MemKind::image, &t, &status))
        return status != CL_SUCCESS ? status : pass();
    cl_image_format f{};
    const char *why = nullptr;
    const uint64_t es = usable_element_size(t, dst, &f, &why);
    if (!es) {
        stats().count_fallback(why);
        return pass();
    }
    if (cl_int err = check_region(dst_origin, dst_origin, region, what); err != CL_SUCCESS) return err;
    const Surface d = image_surface(*t.dst_import);
    if (cl_int err = check_image_region(dst_origin, region, d, what, "destination"); err != CL_SUCCESS) return err;
    if (cl_int err = check_buffer_range(src_offset, region, es, t.src_side.size, what); err != CL_SUCCESS)
        return err;
    const Surface s = buffer_surface(t.src_side, src_offset, region, es);
    static constexpr size_t zero[3] = {0, 0, 0};
    const i915::RectCopy rc = byte_rect(s, zero, d, dst_origin, region, es);
    if (!expressible(rc)) {
        stats().count_fallback("image copy the blitter cannot express");
        return pass();
    }
    return enqueue_rect(queue, src, dst, CL_COMMAND_COPY_BUFFER_TO_IMAGE, num_events, wait_list, event, what, t,
                        rc);
}

}  // namespace cldmabuf
