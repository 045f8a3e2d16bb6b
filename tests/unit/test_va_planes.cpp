// layer/va/surface_export: what a plane of an exported VA surface becomes as
// an OpenCL image, over descriptors written by hand (what iHD, Mesa and the
// virtual driver export), including every refusal.
#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "layer/va/surface_export.hpp"
#include "layer/va/surface_formats.hpp"

using namespace cldmabuf::va;

namespace {

constexpr uint32_t fourcc(char a, char b, char c, char d) {
    return uint32_t(uint8_t(a)) | uint32_t(uint8_t(b)) << 8 | uint32_t(uint8_t(c)) << 16 | uint32_t(uint8_t(d)) << 24;
}

// A two-layer (separate) export of a 4:2:0 surface in one object.
PrimeDescriptor two_plane(uint32_t surface, uint32_t y, uint32_t uv, uint32_t w, uint32_t h, uint32_t pitch) {
    PrimeDescriptor d{};
    d.fourcc = surface;
    d.width = w;
    d.height = h;
    d.num_objects = 1;
    d.objects[0].fd = -1;
    d.objects[0].size = pitch * h * 2;
    d.objects[0].drm_format_modifier = 0;
    d.num_layers = 2;
    d.layers[0].drm_format = y;
    d.layers[0].num_planes = 1;
    d.layers[0].pitch[0] = pitch;
    d.layers[1].drm_format = uv;
    d.layers[1].num_planes = 1;
    d.layers[1].offset[0] = pitch * ((h + 15) & ~15u);
    d.layers[1].pitch[0] = pitch;
    return d;
}

}  // namespace

TEST_CASE("va planes: NV12 is R8 at full size and RG8 at half size, rounded up", "[va]") {
    const auto d = two_plane(fourcc('N', 'V', '1', '2'), fourcc('R', '8', ' ', ' '), fourcc('G', 'R', '8', '8'), 250,
                             131, 256);
    PlaneImage y, uv;
    std::string why;
    REQUIRE(plane_image(d, 0, &y, &why) == CL_SUCCESS);
    REQUIRE(plane_image(d, 1, &uv, &why) == CL_SUCCESS);
    CHECK(y.format.image_channel_order == CL_R);
    CHECK(y.format.image_channel_data_type == CL_UNORM_INT8);
    CHECK((y.width == 250 && y.height == 131 && y.pitch == 256 && y.offset == 0));
    CHECK(uv.format.image_channel_order == CL_RG);
    CHECK(uv.format.image_channel_data_type == CL_UNORM_INT8);
    CHECK((uv.width == 125 && uv.height == 66 && uv.offset == 256 * 144));
}

TEST_CASE("va planes: P010 is R16 / RG16 (GR1616), packed RGB is BGRA / RGBA at full size", "[va]") {
    const auto p010 = two_plane(fourcc('P', '0', '1', '0'), fourcc('R', '1', '6', ' '), fourcc('G', 'R', '3', '2'),
                                192, 96, 384);
    PlaneImage y, uv;
    std::string why;
    REQUIRE(plane_image(p010, 0, &y, &why) == CL_SUCCESS);
    REQUIRE(plane_image(p010, 1, &uv, &why) == CL_SUCCESS);
    CHECK((y.format.image_channel_order == CL_R && y.format.image_channel_data_type == CL_UNORM_INT16));
    CHECK((uv.format.image_channel_order == CL_RG && uv.format.image_channel_data_type == CL_UNORM_INT16));
    CHECK((uv.width == 96 && uv.height == 48));

    PrimeDescriptor rgb = p010;
    rgb.fourcc = fourcc('B', 'G', 'R', 'X');
    rgb.num_layers = 1;
    rgb.layers[0].drm_format = fourcc('X', 'R', '2', '4');
    PlaneImage p;
    REQUIRE(plane_image(rgb, 0, &p, &why) == CL_SUCCESS);
    CHECK((p.format.image_channel_order == CL_BGRA && p.width == 192 && p.height == 96));
    rgb.layers[0].drm_format = fourcc('A', 'B', '2', '4');
    REQUIRE(plane_image(rgb, 0, &p, &why) == CL_SUCCESS);
    CHECK(p.format.image_channel_order == CL_RGBA);
}

TEST_CASE("va planes: a missing plane, a composed layer, an unknown format and a bad object index are refused",
          "[va]") {
    auto d = two_plane(fourcc('N', 'V', '1', '2'), fourcc('R', '8', ' ', ' '), fourcc('G', 'R', '8', '8'), 64, 32, 64);
    PlaneImage p;
    std::string why;
    CHECK(plane_image(d, 2, &p, &why) == CL_INVALID_VALUE);
    CHECK(why.find("2 plane(s)") != std::string::npos);
    CHECK(plane_image(d, 4, &p, &why) == CL_INVALID_VALUE);

    auto composed = d;  // one layer holding both planes: the layer asked for separate layers
    composed.num_layers = 1;
    composed.layers[0].drm_format = fourcc('N', 'V', '1', '2');
    composed.layers[0].num_planes = 2;
    CHECK(plane_image(composed, 0, &p, &why) == CL_INVALID_VA_API_MEDIA_SURFACE_INTEL);

    auto unknown = d;
    unknown.layers[1].drm_format = fourcc('Y', 'U', 'Y', 'V');
    CHECK(plane_image(unknown, 1, &p, &why) == CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
    CHECK(why.find("YUYV") != std::string::npos);

    auto bad_object = d;
    bad_object.layers[1].object_index[0] = 3;  // only one object exported
    CHECK(plane_image(bad_object, 1, &p, &why) == CL_INVALID_VA_API_MEDIA_SURFACE_INTEL);
}

TEST_CASE("va planes: the exported fds are closed with the export unless taken", "[va]") {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    {
        ExportedSurface e;
        e.filled = true;
        e.desc.num_objects = 2;
        e.desc.objects[0].fd = fds[0];
        e.desc.objects[1].fd = fds[1];
        CHECK(e.take_fd(0) == fds[0]);
        CHECK(e.take_fd(0) == -1);  // taken once
        CHECK(e.take_fd(2) == -1);  // out of range
    }
    CHECK(fcntl(fds[0], F_GETFD) != -1);  // the taken one is the caller's
    CHECK(fcntl(fds[1], F_GETFD) == -1);  // the other closed with the export
    close(fds[0]);
}

// The format query's table (layer/va/surface_formats.hpp) and the import
// agree: every plane of every listed surface format is a layer format the
// import takes, with NEO's channel order for it.
TEST_CASE("va planes: every plane of every shareable surface format has the import's image format", "[va]") {
    size_t count = 0;
    const SurfaceFormat *table = surface_formats(&count);
    REQUIRE(count >= 2);
    bool nv12 = false, p010 = false;
    for (size_t i = 0; i < count; ++i) {
        const SurfaceFormat &s = table[i];
        INFO("surface format #" << i);
        REQUIRE(s.planes >= 1);
        REQUIRE(s.planes <= 3);
        CHECK(s.va.byte_order == kVaLsbFirst);
        for (uint32_t p = 0; p < s.planes; ++p) {
            cl_image_format f{};
            CHECK(drm_plane_format(s.plane_drm[p], &f));
        }
        if (s.va.fourcc == fourcc('N', 'V', '1', '2')) {
            nv12 = true;
            cl_image_format y{}, uv{};
            REQUIRE(drm_plane_format(s.plane_drm[0], &y));
            REQUIRE(drm_plane_format(s.plane_drm[1], &uv));
            CHECK((y.image_channel_order == CL_R && y.image_channel_data_type == CL_UNORM_INT8));
            CHECK((uv.image_channel_order == CL_RG && uv.image_channel_data_type == CL_UNORM_INT8));
        }
        if (s.va.fourcc == fourcc('P', '0', '1', '0')) {
            p010 = true;
            cl_image_format uv{};
            REQUIRE(drm_plane_format(s.plane_drm[1], &uv));
            CHECK((uv.image_channel_order == CL_RG && uv.image_channel_data_type == CL_UNORM_INT16));
        }
    }
    CHECK(nv12);
    CHECK(p010);
    cl_image_format f{};
    CHECK_FALSE(drm_plane_format(fourcc('Y', 'U', 'Y', 'V'), &f));
}
