#include "layer/va/surface_formats.hpp"

#include <iterator>

namespace cldmabuf::va {
namespace {

constexpr uint32_t fourcc(char a, char b, char c, char d) {
    return uint32_t(uint8_t(a)) | uint32_t(uint8_t(b)) << 8 | uint32_t(uint8_t(c)) << 16 | uint32_t(uint8_t(d)) << 24;
}

constexpr uint32_t R8 = fourcc('R', '8', ' ', ' '), GR88 = fourcc('G', 'R', '8', '8');
constexpr uint32_t R16 = fourcc('R', '1', '6', ' '), GR1616 = fourcc('G', 'R', '3', '2');

// YUV: fourcc, byte order, bits per pixel (libva's and the drivers' values).
constexpr ImageFormat yuv(uint32_t f, uint32_t bpp) { return {f, kVaLsbFirst, bpp, 0, 0, 0, 0, 0, {}}; }
// Packed 8-bit RGB in a little-endian 32-bit word.
constexpr ImageFormat rgb(uint32_t f, uint32_t depth, uint32_t r, uint32_t g, uint32_t b, uint32_t a) {
    return {f, kVaLsbFirst, 32, depth, r, g, b, a, {}};
}

// What FFmpeg maps (NV12, P010; P016 as P010), the 3-plane 4:2:0 ones and
// the packed RGB ones whose single layer has an OpenCL format.
constexpr SurfaceFormat table[] = {
    {yuv(fourcc('N', 'V', '1', '2'), 12), 2, {R8, GR88, 0}},
    {yuv(fourcc('P', '0', '1', '0'), 24), 2, {R16, GR1616, 0}},
    {yuv(fourcc('P', '0', '1', '6'), 24), 2, {R16, GR1616, 0}},
    {yuv(fourcc('Y', 'V', '1', '2'), 12), 3, {R8, R8, R8}},
    {yuv(fourcc('I', '4', '2', '0'), 12), 3, {R8, R8, R8}},
    {rgb(fourcc('A', 'R', 'G', 'B'), 32, 0x00ff0000, 0x0000ff00, 0x000000ff, 0xff000000), 1,
     {fourcc('A', 'R', '2', '4'), 0, 0}},
    {rgb(fourcc('X', 'R', 'G', 'B'), 24, 0x00ff0000, 0x0000ff00, 0x000000ff, 0), 1, {fourcc('X', 'R', '2', '4'), 0, 0}},
    {rgb(fourcc('A', 'B', 'G', 'R'), 32, 0x000000ff, 0x0000ff00, 0x00ff0000, 0xff000000), 1,
     {fourcc('A', 'B', '2', '4'), 0, 0}},
    {rgb(fourcc('X', 'B', 'G', 'R'), 24, 0x000000ff, 0x0000ff00, 0x00ff0000, 0), 1, {fourcc('X', 'B', '2', '4'), 0, 0}},
};

}  // namespace

const SurfaceFormat *surface_formats(size_t *count) {
    *count = std::size(table);
    return table;
}

}  // namespace cldmabuf::va
