#include "layer/blit/owned_sides.hpp"

#include <cstdint>

#include "layer/core/dispatch.hpp"
#include "layer/icd/devices.hpp"
#include "layer/base/log.hpp"
#include "layer/core/registry.hpp"

namespace cldmabuf {
namespace {

constexpr uint64_t kIcdJudges = UINT64_MAX;

// One side: an import (its size), a sub-buffer of one (its size from the
// ICD, its origin checked against the queue's device), or a plain cl_mem.
cl_int side_of(cl_mem mem, cl_command_queue queue, const char *what, const char *name, CopySide *side,
               std::shared_ptr<Import> *owner) {
    size_t base = 0;
    *owner = imports().find(mem, &base);
    side->base = base;
    side->size = kIcdJudges;
    if (*owner && (*owner)->is_image) owner->reset();  // a buffer call on an image: the ICD's CL_INVALID_MEM_OBJECT
    if (!*owner) return CL_SUCCESS;
    if ((*owner)->mem == mem) {
        side->size = (*owner)->size;
        return CL_SUCCESS;
    }
    size_t size = 0;
    if (next().clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, nullptr) != CL_SUCCESS) {
        LOG_ERROR("%s: %s (a sub-buffer of an import) is not a valid memory object", what, name);
        return CL_INVALID_MEM_OBJECT;
    }
    side->size = size;
    cl_uint align_bits = 0;
    cl_device_id device = queue_device(queue);
    if (!device) {
        LOG_ERROR("%s: invalid command queue", what);
        return CL_INVALID_COMMAND_QUEUE;
    }
    if (next().clGetDeviceInfo(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, nullptr) ==
            CL_SUCCESS &&
        !sub_buffer_origin_aligned(base, align_bits)) {
        LOG_ERROR("%s: %s is a sub-buffer of an import at origin %zu, not a multiple of the queue device's "
                  "CL_DEVICE_MEM_BASE_ADDR_ALIGN (%u bytes)",
                  what, name, base, align_bits / 8);
        return CL_MISALIGNED_SUB_BUFFER_OFFSET;
    }
    return CL_SUCCESS;
}

}  // namespace

cl_int owned_copy_sides(cl_command_queue queue, cl_mem src, cl_mem dst, cl_uint num_events,
                        const cl_event *wait_list, const char *what, OwnedCopy *out) {
    *out = OwnedCopy{};
    if (imports().empty()) return CL_SUCCESS;
    std::shared_ptr<Import> si, di;
    size_t ignored = 0;
    if (!imports().find(src, &ignored) && !imports().find(dst, &ignored)) return CL_SUCCESS;
    if (!wait_list_consistent(num_events, wait_list)) {
        LOG_ERROR("%s: num_events_in_wait_list (%u) and event_wait_list disagree", what, num_events);
        return CL_INVALID_EVENT_WAIT_LIST;
    }
    if (cl_int err = side_of(src, queue, what, "src_buffer", &out->src, &si); err != CL_SUCCESS) return err;
    if (cl_int err = side_of(dst, queue, what, "dst_buffer", &out->dst, &di); err != CL_SUCCESS) return err;
    out->any = true;
    out->same_storage = si && si == di;
    return CL_SUCCESS;
}

cl_int check_owned_wait_list(cl_mem src, cl_mem dst, cl_uint num_events, const cl_event *wait_list,
                             const char *what) {
    if (imports().empty() || wait_list_consistent(num_events, wait_list)) return CL_SUCCESS;
    if (!imports().find(src) && !imports().find(dst)) return CL_SUCCESS;
    LOG_ERROR("%s: num_events_in_wait_list (%u) and event_wait_list disagree", what, num_events);
    return CL_INVALID_EVENT_WAIT_LIST;
}

cl_int check_owned_copy_buffer(const OwnedCopy &c, size_t src_offset, size_t dst_offset, size_t size) {
    if (!c.any || size == 0) return CL_SUCCESS;
    const cl_int err = check_copy_buffer(c.src, c.dst, c.same_storage, src_offset, dst_offset, size);
    if (err == CL_INVALID_VALUE)
        LOG_ERROR("clEnqueueCopyBuffer: %zu bytes from offset %zu to offset %zu run past a buffer of an import "
                  "(sizes %llu and %llu)",
                  size, src_offset, dst_offset, static_cast<unsigned long long>(c.src.size),
                  static_cast<unsigned long long>(c.dst.size));
    else if (err == CL_MEM_COPY_OVERLAP)
        LOG_ERROR("clEnqueueCopyBuffer: source and destination overlap inside the same import (bytes %llu and "
                  "%llu of it, %zu long)",
                  static_cast<unsigned long long>(c.src.base + src_offset),
                  static_cast<unsigned long long>(c.dst.base + dst_offset), size);
    return err;
}

cl_int check_owned_copy_rect(const OwnedCopy &c, bool same_object, const size_t *src_origin,
                             const size_t *dst_origin, const size_t *region, size_t src_row_pitch,
                             size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch,
                             RectArgs *r) {
    if (!c.any) return CL_SUCCESS;
    if (normalize_rect(src_origin, dst_origin, region, src_row_pitch, src_slice_pitch, dst_row_pitch,
                             dst_slice_pitch, c.src, c.dst, r) != CL_SUCCESS) {
        LOG_ERROR("clEnqueueCopyBufferRect: origin, region or pitches out of the spec's rules or past a buffer "
                  "of an import");
        return CL_INVALID_VALUE;
    }
    if (same_object && !same_buffer_pitches_allowed(*r)) {
        LOG_ERROR("clEnqueueCopyBufferRect: same buffer with different row and slice pitches");
        return CL_INVALID_VALUE;
    }
    if (c.same_storage && rects_overlap(*r, c.src, c.dst)) {
        LOG_ERROR("clEnqueueCopyBufferRect: source and destination rectangles overlap inside the same import");
        return CL_MEM_COPY_OVERLAP;
    }
    return CL_SUCCESS;
}

}  // namespace cldmabuf
