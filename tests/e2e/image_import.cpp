#include "image_import.hpp"

#include <catch2/catch_test_macros.hpp>

#include "CL/cl_ext_cldmabuf.h"
#include "image_desc.hpp"

namespace e2e {

cl_mem import_image2d(const ClEnv &env, std::vector<cl_mem_properties> props, const Image2d &plane,
                      const std::vector<cl_mem_properties> &extra, const cl_image_format &format,
                      cl_mem_flags flags, cl_int *err) {
    if (plane.offset) {
        props.push_back(CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF);
        props.push_back(plane.offset);
    }
    props.insert(props.end(), extra.begin(), extra.end());
    props.push_back(0);
    const cl_image_desc desc = cldmabuf::test::image2d_desc(plane.width, plane.height, plane.pitch);
    return clCreateImageWithProperties(env.context, props.data(), flags, &format, &desc, nullptr, err);
}

void check_refused(cl_mem m, cl_int err, cl_int want, int fd) {
    if (m) clReleaseMemObject(m);
    CHECK(m == nullptr);
    CHECK(err == want);
    CHECK(fd_is_open(fd));
}

}  // namespace e2e
