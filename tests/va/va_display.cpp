#include "va_display.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>
#include <va/va_drm.h>

#include <cstring>

namespace vatest {

Display::Display() {
    std::string node;
    using NodePath = const char *(*)();
    if (auto vgen9 = reinterpret_cast<NodePath>(dlsym(RTLD_DEFAULT, "vgen9_node_path"))) node = vgen9();
    for (int minor = 128; node.empty() && minor < 136; ++minor) {
        const std::string path = "/dev/dri/renderD" + std::to_string(minor);
        if (access(path.c_str(), R_OK | W_OK) == 0) node = path;
    }
    if (node.empty()) {
        problem = "no DRM render node";
        return;
    }
    fd = open(node.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        problem = "cannot open " + node + ": " + std::strerror(errno);
        return;
    }
    dpy = vaGetDisplayDRM(fd);
    int major = 0, minor = 0;
    if (!dpy) problem = "vaGetDisplayDRM failed on " + node;
    else if (VAStatus st = vaInitialize(dpy, &major, &minor); st != VA_STATUS_SUCCESS) {
        problem = std::string("vaInitialize: ") + vaErrorStr(st) + " (LIBVA_DRIVER_NAME, LIBVA_DRIVERS_PATH?)";
        vaTerminate(dpy);
        dpy = nullptr;
    }
}

Display::~Display() {
    if (dpy) vaTerminate(dpy);
    if (fd >= 0) close(fd);
}

Surface::Surface(VADisplay d, uint32_t f, unsigned w, unsigned h) : dpy(d), fourcc(f), width(w), height(h) {
    VASurfaceAttrib attr{};
    attr.type = VASurfaceAttribPixelFormat;
    attr.flags = VA_SURFACE_ATTRIB_SETTABLE;
    attr.value.type = VAGenericValueTypeInteger;
    attr.value.value.i = static_cast<int>(f);
    const unsigned rt = f == VA_FOURCC_P010 ? VA_RT_FORMAT_YUV420_10 : VA_RT_FORMAT_YUV420;
    if (vaCreateSurfaces(d, rt, w, h, &id, 1, &attr, 1) != VA_STATUS_SUCCESS) id = VA_INVALID_SURFACE;
}

Surface::~Surface() {
    if (id != VA_INVALID_SURFACE) vaDestroySurfaces(dpy, &id, 1);
}

Planes pattern(uint32_t fourcc, unsigned w, unsigned h, unsigned seed) {
    const bool p010 = fourcc == VA_FOURCC_P010;
    const unsigned cw = (w + 1) / 2, ch = (h + 1) / 2;
    Planes p;
    p.y.resize(size_t(w) * h);
    p.uv.resize(size_t(cw) * ch * 2);
    auto sample = [&](unsigned v) { return p010 ? uint16_t((v & 0x3ff) << 6) : uint16_t(v & 0xff); };
    for (unsigned y = 0; y < h; ++y)
        for (unsigned x = 0; x < w; ++x) p.y[size_t(y) * w + x] = sample(x * 7 + y * 13 + seed);
    for (unsigned y = 0; y < ch; ++y)
        for (unsigned x = 0; x < cw * 2; ++x) p.uv[size_t(y) * cw * 2 + x] = sample(x * 5 + y * 11 + 3 * seed + 1);
    return p;
}

namespace {

// Runs `fn(base, image)` over a derived, mapped image of the surface.
template <typename Fn>
VAStatus with_mapped(const Surface &s, Fn fn) {
    VAImage image{};
    VAStatus st = vaDeriveImage(s.dpy, s.id, &image);
    if (st != VA_STATUS_SUCCESS) return st;
    void *base = nullptr;
    st = vaMapBuffer(s.dpy, image.buf, &base);
    if (st == VA_STATUS_SUCCESS) {
        fn(static_cast<uint8_t *>(base), image);
        st = vaUnmapBuffer(s.dpy, image.buf);
    }
    vaDestroyImage(s.dpy, image.image_id);
    return st;
}

template <bool Write>
void move_plane(uint8_t *base, uint32_t offset, uint32_t pitch, std::vector<uint16_t> &samples, unsigned row_samples,
                unsigned rows, bool p010) {
    for (unsigned y = 0; y < rows; ++y) {
        uint8_t *row = base + offset + size_t(y) * pitch;
        for (unsigned x = 0; x < row_samples; ++x) {
            uint16_t &v = samples[size_t(y) * row_samples + x];
            if (p010) {
                if (Write) std::memcpy(row + 2 * x, &v, 2);
                else std::memcpy(&v, row + 2 * x, 2);
            } else {
                if (Write) row[x] = static_cast<uint8_t>(v);
                else v = row[x];
            }
        }
    }
}

}  // namespace

VAStatus write_planes(const Surface &s, const Planes &p) {
    Planes copy = p;
    const bool p010 = s.fourcc == VA_FOURCC_P010;
    return with_mapped(s, [&](uint8_t *base, const VAImage &img) {
        move_plane<true>(base, img.offsets[0], img.pitches[0], copy.y, s.width, s.height, p010);
        move_plane<true>(base, img.offsets[1], img.pitches[1], copy.uv, 2 * ((s.width + 1) / 2), (s.height + 1) / 2,
                         p010);
    });
}

VAStatus read_planes(const Surface &s, Planes *p) {
    *p = pattern(s.fourcc, s.width, s.height, 0);  // sized
    const bool p010 = s.fourcc == VA_FOURCC_P010;
    return with_mapped(s, [&](uint8_t *base, const VAImage &img) {
        move_plane<false>(base, img.offsets[0], img.pitches[0], p->y, s.width, s.height, p010);
        move_plane<false>(base, img.offsets[1], img.pitches[1], p->uv, 2 * ((s.width + 1) / 2), (s.height + 1) / 2,
                          p010);
    });
}

}  // namespace vatest
