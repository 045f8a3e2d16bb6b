// A VADisplay on the virtual VA driver (tests/va/vva_driver.cpp) for the
// end-to-end tests: the DRM node is the virtual Gen9's on the host
// (LD_PRELOAD=libvgen9.so) or the first render node (vgem in the VM); the
// driver is named by LIBVA_DRIVER_NAME / LIBVA_DRIVERS_PATH (tests/va/meson.build).
#pragma once

#include <va/va.h>

#include <cstdint>
#include <string>
#include <vector>

namespace vatest {

struct Display {
    int fd = -1;
    VADisplay dpy = nullptr;
    std::string problem;  // why there is none (the test skips with it)
    Display();
    ~Display();
    Display(const Display &) = delete;
    Display &operator=(const Display &) = delete;
};

// One surface of `fourcc` (VA_FOURCC_NV12 or P010), destroyed with the object.
struct Surface {
    VADisplay dpy;
    VASurfaceID id = VA_INVALID_SURFACE;
    uint32_t fourcc;
    unsigned width, height;
    Surface(VADisplay d, uint32_t fourcc, unsigned w, unsigned h);
    ~Surface();
    Surface(const Surface &) = delete;
    Surface &operator=(const Surface &) = delete;
};

// A surface's two planes as tightly packed samples (uint16 each: 8-bit
// samples in the low byte for NV12; P010's 10 bits in the high bits).
struct Planes {
    std::vector<uint16_t> y, uv;  // y: w*h, uv: 2*ceil(w/2)*ceil(h/2)
};
// The test pattern: every sample a different function of plane, x, y and `seed`.
Planes pattern(uint32_t fourcc, unsigned w, unsigned h, unsigned seed);
// Written into / read out of the surface through vaDeriveImage + vaMapBuffer
// (FFmpeg's upload/download path on drivers that derive).  VAStatus.
VAStatus write_planes(const Surface &s, const Planes &p);
VAStatus read_planes(const Surface &s, Planes *p);

}  // namespace vatest
