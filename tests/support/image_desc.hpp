// A 2D image's descriptor, the one the image tests write again and again:
// the width, height and row pitch (0: the tight pitch), all else zero.
#pragma once

#include <CL/cl.h>

#include <cstddef>

namespace cldmabuf::test {

inline cl_image_desc image2d_desc(size_t width, size_t height, size_t row_pitch = 0) {
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = width;
    desc.image_height = height;
    desc.image_row_pitch = row_pitch;
    return desc;
}

}  // namespace cldmabuf::test
