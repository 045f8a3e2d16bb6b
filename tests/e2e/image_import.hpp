// 2D image imports, shared by the linear and the tiled image tests.
#pragma once

#include <vector>

#include "cl_fixture.hpp"

namespace e2e {

struct Image2d {
    size_t width, height, pitch, offset;
};

// An import with the layer's plane offset: the property list is `head` (the
// handle type, the fd, and what must come first: a modifier), then
// CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF when `plane.offset` is not 0, then
// `extra`, then the terminator, in that order.  The fd in `head` belongs to
// the image on success.
cl_mem import_image2d(const ClEnv &env, std::vector<cl_mem_properties> head, const Image2d &plane,
                      const std::vector<cl_mem_properties> &extra, const cl_image_format &format,
                      cl_mem_flags flags, cl_int *err);

// A refused import: no image (one made anyway is released), `err` is the
// spec's `want`, and `fd` is still the application's (CHECKed).
void check_refused(cl_mem m, cl_int err, cl_int want, int fd);

}  // namespace e2e
