// A 2D image import with the layer's plane offset, shared by the linear and
// the tiled image tests: the property list is `head` (the handle type, the
// fd, and what must come first: a modifier), then
// CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF when `offset` is not 0, then `extra`,
// then the terminator, in that order.
#pragma once

#include <vector>

#include "cl_fixture.hpp"

namespace e2e {

struct Image2d {
    size_t width, height, pitch, offset;
};

// The fd in `head` belongs to the image on success.
cl_mem import_image2d(const ClEnv &env, std::vector<cl_mem_properties> head, const Image2d &plane,
                      const std::vector<cl_mem_properties> &extra, const cl_image_format &format,
                      cl_mem_flags flags, cl_int *err);

}  // namespace e2e
