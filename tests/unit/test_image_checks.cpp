// The image import's checks that need no ICD (layer/import/image_checks.hpp):
// geometry of the descriptor, element sizes, the modifier rules.
#include <catch2/catch_test_macros.hpp>

#include <drm_fourcc.h>

#include "layer/import/image_checks.hpp"

using namespace cldmabuf;

namespace {
cl_image_desc desc_of(cl_mem_object_type type, size_t w, size_t h, size_t d_or_layers, size_t pitch = 0) {
    cl_image_desc d{};
    d.image_type = type;
    d.image_width = w;
    d.image_height = h;
    d.image_depth = type == CL_MEM_OBJECT_IMAGE3D ? d_or_layers : 0;
    d.image_array_size = type == CL_MEM_OBJECT_IMAGE3D ? 0 : d_or_layers;
    d.image_row_pitch = pitch;
    return d;
}
}  // namespace

TEST_CASE("element sizes of the spec's formats, 0 for a pair it does not define") {
    CHECK(image_element_size({CL_RGBA, CL_UNORM_INT8}) == 4);
    CHECK(image_element_size({CL_R, CL_FLOAT}) == 4);
    CHECK(image_element_size({CL_RG, CL_HALF_FLOAT}) == 4);
    CHECK(image_element_size({CL_RGB, CL_UNORM_SHORT_565}) == 2);
    CHECK(image_element_size({0x1234, CL_UNORM_INT8}) == 0);
}

TEST_CASE("a 2D image's geometry keeps the dma-buf's pitch") {
    Geometry g;
    std::string why;
    REQUIRE(image_geometry(desc_of(CL_MEM_OBJECT_IMAGE2D, 100, 10, 0, 512), 4, &g, &why) == CL_SUCCESS);
    CHECK(g.row_pitch == 512);
    CHECK(g.needed == 5120);
    CHECK(g.bytes == 4000);
    CHECK(g.region[0] == 100);
    CHECK(g.region[1] == 10);
    CHECK(g.region[2] == 1);
}

TEST_CASE("a 1D array's rows are its layers, one slice pitch apart") {
    Geometry g;
    std::string why;
    REQUIRE(image_geometry(desc_of(CL_MEM_OBJECT_IMAGE1D_ARRAY, 16, 0, 3), 4, &g, &why) == CL_SUCCESS);
    CHECK(g.region[1] == 3);
    CHECK(g.row_pitch == g.slice_pitch);
    CHECK(g.needed == 3 * 64);
}

TEST_CASE("descriptor errors, each with a reason") {
    Geometry g;
    std::string why;
    CHECK(image_geometry(desc_of(CL_MEM_OBJECT_IMAGE2D, 100, 10, 0, 200), 4, &g, &why) ==
          CL_INVALID_IMAGE_DESCRIPTOR);
    CHECK(why.find("smaller than a row") != std::string::npos);
    CHECK(image_geometry(desc_of(CL_MEM_OBJECT_IMAGE2D, 100, 10, 0, 402), 4, &g, &why) ==
          CL_INVALID_IMAGE_DESCRIPTOR);
    CHECK(image_geometry(desc_of(CL_MEM_OBJECT_IMAGE2D, 0, 10, 0), 4, &g, &why) == CL_INVALID_IMAGE_DESCRIPTOR);
    CHECK(image_geometry(desc_of(CL_MEM_OBJECT_IMAGE2D, SIZE_MAX / 2, 10, 0), 4, &g, &why) == CL_INVALID_IMAGE_SIZE);
    CHECK(image_geometry(desc_of(CL_MEM_OBJECT_BUFFER, 16, 16, 0), 4, &g, &why) == CL_INVALID_IMAGE_DESCRIPTOR);
}

TEST_CASE("modifiers: linear, consented tiling, assumed linear; nothing else") {
    std::string why;
    ImageLayerProperties p;
    CHECK(check_modifier(p, &why) == CL_SUCCESS);  // none given
    p.has_modifier = true;
    p.modifier = DRM_FORMAT_MOD_LINEAR;
    CHECK(check_modifier(p, &why) == CL_SUCCESS);
    p.modifier = I915_FORMAT_MOD_Y_TILED;
    CHECK(check_modifier(p, &why) == CL_INVALID_PROPERTY);
    CHECK(why.find("ALLOW_TILED") != std::string::npos);
    p.allow_tiled = true;
    CHECK(check_modifier(p, &why) == CL_SUCCESS);
    p.modifier = DRM_FORMAT_MOD_INVALID;
    CHECK(check_modifier(p, &why) == CL_INVALID_PROPERTY);
    p.assume_linear = true;
    CHECK(check_modifier(p, &why) == CL_SUCCESS);
    p.modifier = I915_FORMAT_MOD_Y_TILED_CCS;
    CHECK(check_modifier(p, &why) == CL_INVALID_PROPERTY);
    CHECK(why.find("not supported") != std::string::npos);
}
