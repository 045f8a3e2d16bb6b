// Image copies between imports on the Gen9 blitter (layer/blit/image_copy.cpp):
// clEnqueueCopyImage, clEnqueueCopyImageToBuffer, clEnqueueCopyBufferToImage
// bit-exact against a CPU reference over the whole dma-buf (row padding and
// bytes outside the region must stay as they were), the spec's argument
// errors, fallbacks that stay right, and a kernel consuming the copy in the
// same queue.  Tagged [blt][blt-image]: e2e-sim runs them on the virtual
// Gen9, e2e-sim-blt-off and e2e-sim-copy through the ICD (same bytes).
#include <catch2/catch_test_macros.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "cl_fixture.hpp"
#include "event_info.hpp"
#include "layer_probe.hpp"
#include "test_dmabufs.hpp"
#include "test_env.hpp"
#include "vgen9_control.hpp"

using namespace e2e;
using cldmabuf::test::env_is;
using cldmabuf::test::vgen9;
namespace tsup = cldmabuf::test;

namespace {

constexpr uint64_t SYNC_READ = 1, SYNC_WRITE = 2, SYNC_END = 4;

// Batches the virtual Gen9 executed, when it is preloaded (0 otherwise).
uint64_t batches() {
    // The blitter probe's own copy runs before any test reads a batch count.
    static const bool probed = vgen9().loaded && layer_takes_blitter();
    (void)probed;
    return vgen9().executed();
}

// The layer is asked (tests/e2e/layer_probe.hpp), not assumed from the
// virtual Gen9 being preloaded: it sends a device's copies it does not pair
// with the Gen9 node (NVIDIA) to the ICD.
bool expect_blt() {
    return vgen9().loaded && !env_is("CLDMABUF_IMPORT", "copy") &&
           !env_is("CLDMABUF_BLT", "off") && layer_takes_blitter();
}

bool device_is_cpu(const ClEnv &env) {
    cl_device_type type = 0;
    clGetDeviceInfo(env.device, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
    return type & CL_DEVICE_TYPE_CPU;
}

#define REQUIRE_IMAGE_DMABUF(env)                                                \
    do {                                                                         \
        if (!device_has_images(env)) SKIP("the device has no image support");   \
    } while (0)

size_t base_align(const ClEnv &env) {
    cl_uint bits = 0;
    clGetDeviceInfo(env.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, nullptr);
    return std::max<size_t>(bits / 8, 64);
}

// An unsigned-integer format of `es` bytes the device supports for `type`
// (bytes are bytes: the copy must not care about channels).
bool format_for(const ClEnv &env, cl_mem_object_type type, size_t es, cl_image_format *out) {
    static const struct {
        size_t es;
        cl_image_format f;
    } candidates[] = {
        {1, {CL_R, CL_UNSIGNED_INT8}},     {1, {CL_R, CL_UNORM_INT8}},      {2, {CL_R, CL_UNSIGNED_INT16}},
        {2, {CL_RG, CL_UNSIGNED_INT8}},    {2, {CL_R, CL_UNORM_INT16}},     {4, {CL_RGBA, CL_UNSIGNED_INT8}},
        {4, {CL_R, CL_UNSIGNED_INT32}},    {8, {CL_RGBA, CL_UNSIGNED_INT16}}, {8, {CL_RG, CL_UNSIGNED_INT32}},
        {16, {CL_RGBA, CL_UNSIGNED_INT32}}, {16, {CL_RGBA, CL_FLOAT}},
    };
    cl_uint n = 0;
    clGetSupportedImageFormats(env.context, CL_MEM_READ_WRITE, type, 0, nullptr, &n);
    std::vector<cl_image_format> fs(n);
    if (n) clGetSupportedImageFormats(env.context, CL_MEM_READ_WRITE, type, n, fs.data(), nullptr);
    for (const auto &c : candidates) {
        if (c.es != es) continue;
        for (const auto &f : fs)
            if (f.image_channel_order == c.f.image_channel_order &&
                f.image_channel_data_type == c.f.image_channel_data_type) {
                *out = f;
                return true;
            }
    }
    return false;
}

// Geometry of an image import in the spec's terms plus its layout in the dma-buf.
struct Geo {
    cl_mem_object_type type = CL_MEM_OBJECT_IMAGE2D;
    size_t es = 4;
    size_t w = 1, h = 1, d = 1;  // d: depth or layers; h: layers for 1D arrays
    size_t row_pitch = 0, slice_pitch = 0, offset = 0;
    // Bytes between rows / slices as the layer's surface sees them.
    size_t rp() const { return type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? slice_pitch : row_pitch; }
    size_t sp() const { return type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 0 : slice_pitch; }
    size_t bytes_needed() const {
        switch (type) {
        case CL_MEM_OBJECT_IMAGE1D: return w * es;
        case CL_MEM_OBJECT_IMAGE1D_ARRAY: return slice_pitch * h;
        case CL_MEM_OBJECT_IMAGE2D: return row_pitch * h;
        default: return slice_pitch * d;
        }
    }
    size_t at(size_t x, size_t y, size_t z) const { return offset + z * sp() + y * rp() + x * es; }
};

// An image import over a fresh dma-buf filled with random bytes, and the
// test's own CPU view of that dma-buf.  The cl_mem owns its fd.
struct ImageImport {
    Dmabuf buf;
    Geo g;
    cl_image_format format{};
    cl_mem mem = nullptr;
    int view_fd = -1;
    unsigned char *bytes = nullptr;
    std::vector<uint8_t> ref;  // what the dma-buf must hold

    ImageImport(const ClEnv &env, const Geo &geo, const cl_image_format &f, std::mt19937_64 &rng)
        : buf(make_dmabuf(geo.offset + geo.bytes_needed())), g(geo), format(f) {
        view_fd = buf.dup_fd();
        bytes = static_cast<unsigned char *>(mmap(nullptr, buf.size, PROT_READ | PROT_WRITE, MAP_SHARED, view_fd, 0));
        REQUIRE(bytes != MAP_FAILED);
        ref.resize(buf.size);
        for (auto &b : ref) b = static_cast<uint8_t>(rng());
        tsup::sync(view_fd, SYNC_WRITE);
        std::memcpy(bytes, ref.data(), ref.size());
        tsup::sync(view_fd, SYNC_WRITE | SYNC_END);

        std::vector<cl_mem_properties> props{CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                             static_cast<cl_mem_properties>(buf.fd)};
        if (g.offset) props.insert(props.end(), {CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF, g.offset});
        props.push_back(0);
        cl_image_desc desc{};
        desc.image_type = g.type;
        desc.image_width = g.w;
        desc.image_height = g.type == CL_MEM_OBJECT_IMAGE1D || g.type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 0 : g.h;
        desc.image_depth = g.type == CL_MEM_OBJECT_IMAGE3D ? g.d : 0;
        desc.image_array_size = g.type == CL_MEM_OBJECT_IMAGE2D_ARRAY ? g.d
                                : g.type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? g.h
                                                                         : 0;
        desc.image_row_pitch = g.type == CL_MEM_OBJECT_IMAGE1D ? 0 : g.row_pitch;
        desc.image_slice_pitch = g.sp() || g.type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? g.slice_pitch : 0;
        if (g.type == CL_MEM_OBJECT_IMAGE1D_ARRAY) desc.image_row_pitch = 0;
        cl_int err = CL_SUCCESS;
        mem = clCreateImageWithProperties(env.context, props.data(), CL_MEM_READ_WRITE, &format, &desc, nullptr, &err);
        INFO("image type 0x" << std::hex << g.type << std::dec << " " << g.w << "x" << g.h << "x" << g.d << " es "
                             << g.es << " pitch " << g.row_pitch << "/" << g.slice_pitch << " offset " << g.offset);
        REQUIRE(err == CL_SUCCESS);
        REQUIRE(mem);
        buf.release_fd();
    }
    ~ImageImport() {
        if (mem) clReleaseMemObject(mem);
        munmap(bytes, buf.size);
        close(view_fd);
    }
    ImageImport(const ImageImport &) = delete;
    ImageImport &operator=(const ImageImport &) = delete;

    // The dma-buf's bytes, read the way any other client reads them.
    std::vector<uint8_t> contents() const {
        tsup::sync(view_fd, SYNC_READ);
        std::vector<uint8_t> v(bytes, bytes + buf.size);
        tsup::sync(view_fd, SYNC_READ | SYNC_END);
        return v;
    }
    bool zero_copy() const {
        cl_uint route = 0;
        clGetMemObjectInfo(mem, CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, sizeof route, &route, nullptr);
        return route != CL_DMA_BUF_ROUTE_COPY_CLDMABUF;
    }
};

// A buffer import with random contents and its CPU view.
struct BufferImport {
    Dmabuf buf;
    cl_mem mem = nullptr;
    int view_fd = -1;
    unsigned char *bytes = nullptr;
    std::vector<uint8_t> ref;
    BufferImport(const ClEnv &env, size_t size, std::mt19937_64 &rng) : buf(make_dmabuf(size)) {
        view_fd = buf.dup_fd();
        bytes = static_cast<unsigned char *>(mmap(nullptr, buf.size, PROT_READ | PROT_WRITE, MAP_SHARED, view_fd, 0));
        REQUIRE(bytes != MAP_FAILED);
        ref.resize(size);
        for (auto &b : ref) b = static_cast<uint8_t>(rng());
        tsup::sync(view_fd, SYNC_WRITE);
        std::memcpy(bytes, ref.data(), size);
        tsup::sync(view_fd, SYNC_WRITE | SYNC_END);
        const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                           static_cast<cl_mem_properties>(buf.fd), 0};
        cl_int err = CL_SUCCESS;
        mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, size, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        buf.release_fd();
    }
    ~BufferImport() {
        if (mem) clReleaseMemObject(mem);
        munmap(bytes, buf.size);
        close(view_fd);
    }
    std::vector<uint8_t> contents() const {
        tsup::sync(view_fd, SYNC_READ);
        std::vector<uint8_t> v(bytes, bytes + ref.size());
        tsup::sync(view_fd, SYNC_READ | SYNC_END);
        return v;
    }
};

size_t first_mismatch(const std::vector<uint8_t> &a, const std::vector<uint8_t> &b) {
    if (a.size() != b.size()) return 0;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i]) return i;
    return SIZE_MAX;
}

// Acquire before and release after, as the extension requires: a copy
// import (e2e-sim-copy) only writes its dma-buf back on release.
void acquire(const ClEnv &env, std::vector<cl_mem> mems) {
    REQUIRE(env.acquire(env.queue, cl_uint(mems.size()), mems.data(), 0, nullptr, nullptr) == CL_SUCCESS);
}
void release(const ClEnv &env, std::vector<cl_mem> mems) {
    REQUIRE(env.release(env.queue, cl_uint(mems.size()), mems.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
}

// Extents of a geometry as the spec's (x, y, z) bounds.
void extents(const Geo &g, size_t out[3]) {
    out[0] = g.w;
    out[1] = g.type == CL_MEM_OBJECT_IMAGE1D ? 1 : g.h;
    out[2] = g.type == CL_MEM_OBJECT_IMAGE2D_ARRAY || g.type == CL_MEM_OBJECT_IMAGE3D ? g.d : 1;
}

Geo random_geo(std::mt19937_64 &rng, cl_mem_object_type type, size_t es, size_t align) {
    Geo g;
    g.type = type;
    g.es = es;
    g.w = 1 + rng() % 300;
    g.h = type == CL_MEM_OBJECT_IMAGE1D ? 1 : 1 + rng() % 70;
    g.d = type == CL_MEM_OBJECT_IMAGE2D_ARRAY || type == CL_MEM_OBJECT_IMAGE3D ? 1 + rng() % 5 : 1;
    // Pitched: tight, or padded by a few elements; slices padded by whole rows.
    g.row_pitch = g.w * es + (rng() % 2 ? 0 : (rng() % 9) * es);
    if (type == CL_MEM_OBJECT_IMAGE1D_ARRAY) {
        g.row_pitch = g.w * es;
        // PoCL 3.1 ignores a 1D array's padded image_slice_pitch on
        // CL_MEM_USE_HOST_PTR images (reproduced without the layer: its own
        // clEnqueueCopyImage packs the layers tightly), so padded layers are
        // only asked of the blitter.
        const bool pad = expect_blt() && rng() % 2;
        g.slice_pitch = g.row_pitch + (pad ? g.row_pitch * (1 + rng() % 2) : 0);
    } else if (type == CL_MEM_OBJECT_IMAGE2D_ARRAY || type == CL_MEM_OBJECT_IMAGE3D) {
        g.slice_pitch = g.row_pitch * (g.h + rng() % 3);
    }
    // A plane offset the device accepts in place (CL_DEVICE_MEM_BASE_ADDR_ALIGN).
    g.offset = (rng() % 4) * align;
    return g;
}

// A random region inside both extents, at random origins.
void random_region(std::mt19937_64 &rng, const size_t se[3], const size_t de[3], size_t so[3], size_t dof[3],
                   size_t region[3]) {
    for (int i = 0; i < 3; ++i) {
        const size_t m = std::min(se[i], de[i]);
        region[i] = 1 + rng() % m;
        so[i] = rng() % (se[i] - region[i] + 1);
        dof[i] = rng() % (de[i] - region[i] + 1);
    }
}

void ref_copy(const std::vector<uint8_t> &src, const Geo &s, const size_t so[3], std::vector<uint8_t> &dst,
              const Geo &d, const size_t dof[3], const size_t region[3]) {
    for (size_t z = 0; z < region[2]; ++z)
        for (size_t y = 0; y < region[1]; ++y)
            std::memcpy(dst.data() + d.at(dof[0], dof[1] + y, dof[2] + z),
                        src.data() + s.at(so[0], so[1] + y, so[2] + z), region[0] * s.es);
}

const char *type_name(cl_mem_object_type t) {
    switch (t) {
    case CL_MEM_OBJECT_IMAGE1D: return "1D";
    case CL_MEM_OBJECT_IMAGE1D_ARRAY: return "1D array";
    case CL_MEM_OBJECT_IMAGE2D: return "2D";
    case CL_MEM_OBJECT_IMAGE2D_ARRAY: return "2D array";
    case CL_MEM_OBJECT_IMAGE3D: return "3D";
    default: return "?";
    }
}

}  // namespace

TEST_CASE("[blt] random clEnqueueCopyImage cases between image imports are bit-exact", "[kernel][blt][blt-image]") {
    REQUIRE_DMABUF();
    ClEnv env;
    REQUIRE_IMAGE_DMABUF(env);
    std::mt19937_64 rng(0x1a6e);
    const size_t align = base_align(env);
    const cl_mem_object_type types[] = {CL_MEM_OBJECT_IMAGE2D, CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_MEM_OBJECT_IMAGE1D,
                                        CL_MEM_OBJECT_IMAGE1D_ARRAY, CL_MEM_OBJECT_IMAGE3D};
    int copies = 0, tested_pairs = 0;
    const uint64_t before = batches();
    for (cl_mem_object_type type : types) {
        for (size_t es : {1, 2, 4, 8, 16}) {
            cl_image_format f;
            if (!format_for(env, type, es, &f)) {
                WARN("no " << es << "-byte format for " << type_name(type) << " images here");
                continue;
            }
            for (int pair = 0; pair < 2; ++pair) {
                ImageImport a(env, random_geo(rng, type, es, align), f, rng);
                ImageImport b(env, random_geo(rng, type, es, align), f, rng);
                // An ICD that keeps its own copy of an image (copy route) gets
                // the copies of that pair: right bytes, no batch.
                const bool in_place = a.zero_copy() && b.zero_copy();
                if (!in_place && expect_blt()) WARN(type_name(type) << " es " << es << ": an import took the copy route");
                // Host PoCL (a CPU device): proven in place.  NEO keeps its own
                // copy of images over host memory: the copy route.
                if (dmabuf_source() == "sim" && expect_blt() && device_is_cpu(env)) REQUIRE(in_place);
                ++tested_pairs;
                acquire(env, {a.mem, b.mem});
                size_t ae[3], be[3];
                extents(a.g, ae);
                extents(b.g, be);
                for (int k = 0; k < 4; ++k) {
                    const bool a_to_b = rng() & 1;
                    ImageImport &s = a_to_b ? a : b, &d = a_to_b ? b : a;
                    size_t so[3], dof[3], region[3];
                    random_region(rng, a_to_b ? ae : be, a_to_b ? be : ae, so, dof, region);
                    INFO(type_name(type) << " es " << es << " region " << region[0] << "x" << region[1] << "x"
                                         << region[2] << " src (" << so[0] << "," << so[1] << "," << so[2]
                                         << ") dst (" << dof[0] << "," << dof[1] << "," << dof[2] << ")");
                    cl_event ev = nullptr;
                    REQUIRE(clEnqueueCopyImage(env.queue, s.mem, d.mem, so, dof, region, 0, nullptr, &ev) ==
                            CL_SUCCESS);
                    ref_copy(s.ref, s.g, so, d.ref, d.g, dof, region);
                    REQUIRE(clWaitForEvents(1, &ev) == CL_SUCCESS);
                    CHECK(type_of(ev) == CL_COMMAND_COPY_IMAGE);
                    clReleaseEvent(ev);
                    copies += in_place;
                }
                release(env, {a.mem, b.mem});
                INFO(type_name(type) << " es " << es << " geometry a " << a.g.w << "x" << a.g.h << "x" << a.g.d
                                     << " pitch " << a.g.row_pitch << "/" << a.g.slice_pitch << " off " << a.g.offset
                                     << ", b " << b.g.w << "x" << b.g.h << "x" << b.g.d << " pitch " << b.g.row_pitch
                                     << "/" << b.g.slice_pitch << " off " << b.g.offset);
                CHECK(first_mismatch(a.contents(), a.ref) == SIZE_MAX);
                CHECK(first_mismatch(b.contents(), b.ref) == SIZE_MAX);
            }
        }
    }
    CHECK(tested_pairs >= 10);  // at least 2D and 2D arrays of all five sizes
    if (expect_blt()) CHECK(batches() - before == uint64_t(copies));
}

TEST_CASE("[blt] image <-> buffer copies between imports use the spec's packing, bit-exact",
          "[kernel][blt][blt-image]") {
    REQUIRE_DMABUF();
    ClEnv env;
    REQUIRE_IMAGE_DMABUF(env);
    // Mesa 25 rusticl (VM lane) fails this case with and without the blitter:
    // without it (every copy rusticl's own) the process dies of SIGSEGV inside
    // a 2D R16UI CopyImageToBuffer/CopyBufferToImage; with it, bytes outside
    // the copied regions differ.  Not root-caused yet (docs/blitter.md).
    if (env.platform_name.find("rusticl") != std::string::npos)
        SKIP("rusticl: image <-> buffer copies between imports not understood yet (docs/blitter.md)");
    std::mt19937_64 rng(0x1b2b);
    const size_t align = base_align(env);
    int copies = 0;
    const uint64_t before = batches();
    for (cl_mem_object_type type : {CL_MEM_OBJECT_IMAGE2D, CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_MEM_OBJECT_IMAGE1D}) {
        for (size_t es : {1, 2, 4, 8, 16}) {
            cl_image_format f;
            if (!format_for(env, type, es, &f)) continue;
            ImageImport img(env, random_geo(rng, type, es, align), f, rng);
            size_t e[3];
            extents(img.g, e);
            const size_t bsize = e[0] * e[1] * e[2] * es + 1000;
            BufferImport buf(env, bsize, rng);
            acquire(env, {img.mem, buf.mem});
            for (int k = 0; k < 6; ++k) {
                size_t o[3], unused[3], region[3];
                random_region(rng, e, e, o, unused, region);
                const size_t bytes = region[0] * region[1] * region[2] * es;
                const size_t off = rng() % (bsize - bytes + 1);
                // The buffer side as a tightly packed image of the region's size.
                Geo packed;
                packed.type = CL_MEM_OBJECT_IMAGE3D;
                packed.es = es;
                packed.row_pitch = region[0] * es;
                packed.slice_pitch = packed.row_pitch * region[1];
                packed.offset = off;
                static const size_t zero[3] = {0, 0, 0};
                INFO(type_name(type) << " es " << es << " origin (" << o[0] << "," << o[1] << "," << o[2]
                                     << ") region " << region[0] << "x" << region[1] << "x" << region[2]
                                     << " buffer offset " << off);
                cl_event ev = nullptr;
                if (rng() & 1) {
                    REQUIRE(clEnqueueCopyImageToBuffer(env.queue, img.mem, buf.mem, o, region, off, 0, nullptr,
                                                       &ev) == CL_SUCCESS);
                    ref_copy(img.ref, img.g, o, buf.ref, packed, zero, region);
                    REQUIRE(clWaitForEvents(1, &ev) == CL_SUCCESS);
                    CHECK(type_of(ev) == CL_COMMAND_COPY_IMAGE_TO_BUFFER);
                } else {
                    REQUIRE(clEnqueueCopyBufferToImage(env.queue, buf.mem, img.mem, off, o, region, 0, nullptr,
                                                       &ev) == CL_SUCCESS);
                    ref_copy(buf.ref, packed, zero, img.ref, img.g, o, region);
                    REQUIRE(clWaitForEvents(1, &ev) == CL_SUCCESS);
                    CHECK(type_of(ev) == CL_COMMAND_COPY_BUFFER_TO_IMAGE);
                }
                clReleaseEvent(ev);
                copies += img.zero_copy();
            }
            release(env, {img.mem, buf.mem});
            CHECK(first_mismatch(img.contents(), img.ref) == SIZE_MAX);
            CHECK(first_mismatch(buf.contents(), buf.ref) == SIZE_MAX);
        }
    }
    if (expect_blt()) CHECK(batches() - before == uint64_t(copies));
}

TEST_CASE("[blt] image copy argument errors follow the spec", "[blt][blt-image]") {
    REQUIRE_DMABUF();
    ClEnv env;
    REQUIRE_IMAGE_DMABUF(env);
    std::mt19937_64 rng(5);
    cl_image_format rgba8;
    REQUIRE(format_for(env, CL_MEM_OBJECT_IMAGE2D, 4, &rgba8));
    Geo g;
    g.w = 64, g.h = 32, g.row_pitch = 64 * 4 + 16;
    ImageImport a(env, g, rgba8, rng), b(env, g, rgba8, rng);
    BufferImport buf(env, 64 * 32 * 4, rng);
    const uint64_t before = batches();
    const size_t o0[3] = {0, 0, 0};
    size_t region[3] = {16, 16, 1};

    // The layer's own checks, made when it takes the copy.  Without the
    // blitter they are the ICD's: PoCL 3.1 accepts an x origin + region past
    // the width (clEnqueueCopyImage and clEnqueueCopyBufferToImage) and would
    // copy out of bounds, so they are not asked of it.
    const bool layer_checks = expect_blt() && a.zero_copy() && b.zero_copy();
    if (layer_checks) {
        // Formats that differ: the next test case.
        // Out of bounds on either side, a 2D image with z != 0 or depth != 1, a zero or NULL region.
        const size_t x_edge[3] = {49, 0, 0}, y_edge[3] = {0, 17, 0}, z1[3] = {0, 0, 1};
        CHECK(clEnqueueCopyImage(env.queue, a.mem, b.mem, x_edge, o0, region, 0, nullptr, nullptr) == CL_INVALID_VALUE);
        CHECK(clEnqueueCopyImage(env.queue, a.mem, b.mem, o0, y_edge, region, 0, nullptr, nullptr) == CL_INVALID_VALUE);
        CHECK(clEnqueueCopyImage(env.queue, a.mem, b.mem, z1, o0, region, 0, nullptr, nullptr) == CL_INVALID_VALUE);
        region[2] = 2;
        CHECK(clEnqueueCopyImage(env.queue, a.mem, b.mem, o0, o0, region, 0, nullptr, nullptr) == CL_INVALID_VALUE);
        region[2] = 0;
        CHECK(clEnqueueCopyImage(env.queue, a.mem, b.mem, o0, o0, region, 0, nullptr, nullptr) == CL_INVALID_VALUE);
        region[2] = 1;
        CHECK(clEnqueueCopyImage(env.queue, a.mem, b.mem, o0, o0, nullptr, 0, nullptr, nullptr) == CL_INVALID_VALUE);
        const size_t huge[3] = {SIZE_MAX, 0, 0};
        CHECK(clEnqueueCopyImage(env.queue, a.mem, b.mem, huge, o0, region, 0, nullptr, nullptr) == CL_INVALID_VALUE);
        // The same image: overlapping regions are refused, disjoint ones copied.
        const size_t o8[3] = {8, 8, 0}, o16[3] = {16, 0, 0};
        CHECK(clEnqueueCopyImage(env.queue, a.mem, a.mem, o0, o8, region, 0, nullptr, nullptr) == CL_MEM_COPY_OVERLAP);
        CHECK(clEnqueueCopyImage(env.queue, a.mem, a.mem, o8, o0, region, 0, nullptr, nullptr) == CL_MEM_COPY_OVERLAP);
        CHECK(clEnqueueCopyImage(env.queue, a.mem, a.mem, o0, o16, region, 0, nullptr, nullptr) == CL_SUCCESS);
        // Image <-> buffer: a range past the buffer's end, an image region out of bounds.
        const size_t whole[3] = {64, 32, 1};
        CHECK(clEnqueueCopyImageToBuffer(env.queue, a.mem, buf.mem, o0, whole, 1, 0, nullptr, nullptr) ==
              CL_INVALID_VALUE);
        CHECK(clEnqueueCopyBufferToImage(env.queue, buf.mem, a.mem, 4, o0, whole, 0, nullptr, nullptr) ==
              CL_INVALID_VALUE);
        CHECK(clEnqueueCopyImageToBuffer(env.queue, a.mem, buf.mem, y_edge, region, 0, 0, nullptr, nullptr) ==
              CL_INVALID_VALUE);
        CHECK(clEnqueueCopyBufferToImage(env.queue, buf.mem, a.mem, 0, x_edge, region, 0, nullptr, nullptr) ==
              CL_INVALID_VALUE);
        CHECK(clEnqueueCopyImageToBuffer(env.queue, a.mem, buf.mem, o0, whole, 0, 0, nullptr, nullptr) == CL_SUCCESS);
    }
    // Wrong object types go to the ICD, whose answer comes back: the spec's
    // CL_INVALID_MEM_OBJECT (PoCL), CL_INVALID_VALUE from NVIDIA 580 for a
    // buffer passed as clEnqueueCopyImage's source.
    const cl_int wrong_src = clEnqueueCopyImage(env.queue, buf.mem, a.mem, o0, o0, region, 0, nullptr, nullptr);
    CHECK((wrong_src == CL_INVALID_MEM_OBJECT || wrong_src == CL_INVALID_VALUE));
    CHECK(clEnqueueCopyImageToBuffer(env.queue, a.mem, b.mem, o0, region, 0, 0, nullptr, nullptr) ==
          CL_INVALID_MEM_OBJECT);
    CHECK(clEnqueueCopyBuffer(env.queue, a.mem, buf.mem, 0, 0, 64, 0, nullptr, nullptr) == CL_INVALID_MEM_OBJECT);
    // A wait-list count without a list: the layer's answer for imports on
    // every route (NEO 22.43 crashes if it is asked).
    CHECK(clEnqueueCopyImage(env.queue, a.mem, b.mem, o0, o0, region, 1, nullptr, nullptr) ==
          CL_INVALID_EVENT_WAIT_LIST);
    CHECK(clEnqueueCopyImageToBuffer(env.queue, a.mem, buf.mem, o0, region, 0, 1, nullptr, nullptr) ==
          CL_INVALID_EVENT_WAIT_LIST);
    CHECK(clEnqueueCopyBufferToImage(env.queue, buf.mem, a.mem, 0, o0, region, 1, nullptr, nullptr) ==
          CL_INVALID_EVENT_WAIT_LIST);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    if (layer_checks) CHECK(batches() - before == 2);  // the two successful copies only
    else CHECK(batches() == before);
}

// Split from the argument errors above so that a device without a second
// 4-byte format counts this check as skipped, not as part of a pass.
TEST_CASE("[blt] image copy between imports of different formats: CL_IMAGE_FORMAT_MISMATCH", "[blt][blt-image]") {
    REQUIRE_DMABUF();
    ClEnv env;
    REQUIRE_IMAGE_DMABUF(env);
    std::mt19937_64 rng(6);
    cl_image_format rgba8, r32;
    REQUIRE(format_for(env, CL_MEM_OBJECT_IMAGE2D, 4, &rgba8));
    Geo g;
    g.w = 64, g.h = 32, g.row_pitch = 64 * 4 + 16;
    ImageImport a(env, g, rgba8, rng);
    const size_t o0[3] = {0, 0, 0}, region[3] = {16, 16, 1};
    // The layer's check, made when it takes the copy (see the test above).
    if (!(expect_blt() && a.zero_copy())) SKIP("the blitter does not take image copies here: the ICD's check, not ours");
    const uint64_t before = batches();
    // Formats differ (both 4 bytes per element): CL_IMAGE_FORMAT_MISMATCH.
    const bool have_r32 = [&] {
        cl_uint n = 0;
        clGetSupportedImageFormats(env.context, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 0, nullptr, &n);
        std::vector<cl_image_format> fs(n);
        clGetSupportedImageFormats(env.context, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, n, fs.data(), nullptr);
        for (auto &f : fs)
            if (f.image_channel_order == CL_R && f.image_channel_data_type == CL_UNSIGNED_INT32 &&
                !(rgba8.image_channel_order == CL_R && rgba8.image_channel_data_type == CL_UNSIGNED_INT32)) {
                r32 = f;
                return true;
            }
        return false;
    }();
    if (!have_r32) SKIP("no CL_R/CL_UNSIGNED_INT32 images here: the format mismatch is not tested");
    ImageImport c(env, g, r32, rng);
    CHECK(clEnqueueCopyImage(env.queue, a.mem, c.mem, o0, o0, region, 0, nullptr, nullptr) ==
          CL_IMAGE_FORMAT_MISMATCH);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(batches() == before);  // refused before any batch
}

TEST_CASE("[blt] image copies mixing an import with a plain image or buffer go to the ICD and are right",
          "[kernel][blt][blt-image]") {
    REQUIRE_DMABUF();
    ClEnv env;
    REQUIRE_IMAGE_DMABUF(env);
    std::mt19937_64 rng(11);
    cl_image_format f;
    REQUIRE(format_for(env, CL_MEM_OBJECT_IMAGE2D, 4, &f));
    Geo g;
    g.w = 100, g.h = 40, g.row_pitch = 100 * 4 + 12;
    ImageImport a(env, g, f, rng);
    std::vector<uint8_t> plain_px(100 * 40 * 4);
    for (auto &b : plain_px) b = static_cast<uint8_t>(rng());
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = 100;
    desc.image_height = 40;
    cl_int err = CL_SUCCESS;
    cl_mem plain = clCreateImage(env.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &f, &desc, plain_px.data(),
                                 &err);
    REQUIRE(err == CL_SUCCESS);
    cl_mem plain_buf = clCreateBuffer(env.context, CL_MEM_READ_WRITE, 100 * 40 * 4, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    const uint64_t before = batches();
    acquire(env, {a.mem});
    // import -> plain image, then plain image -> import at another place
    const size_t so[3] = {3, 5, 0}, dof[3] = {10, 1, 0}, region[3] = {50, 20, 1};
    REQUIRE(clEnqueueCopyImage(env.queue, a.mem, plain, so, dof, region, 0, nullptr, nullptr) == CL_SUCCESS);
    Geo pg;
    pg.w = 100, pg.h = 40, pg.row_pitch = 400;
    ref_copy(a.ref, a.g, so, plain_px, pg, dof, region);
    const size_t so2[3] = {0, 0, 0}, dof2[3] = {40, 20, 0}, region2[3] = {60, 20, 1};
    REQUIRE(clEnqueueCopyImage(env.queue, plain, a.mem, so2, dof2, region2, 0, nullptr, nullptr) == CL_SUCCESS);
    ref_copy(plain_px, pg, so2, a.ref, a.g, dof2, region2);
    // import -> plain buffer
    REQUIRE(clEnqueueCopyImageToBuffer(env.queue, a.mem, plain_buf, so2, region2, 0, 0, nullptr, nullptr) ==
            CL_SUCCESS);
    release(env, {a.mem});
    std::vector<uint8_t> got(100 * 40 * 4);
    const size_t full[3] = {100, 40, 1};
    REQUIRE(clEnqueueReadImage(env.queue, plain, CL_TRUE, so2, full, 0, 0, got.data(), 0, nullptr, nullptr) ==
            CL_SUCCESS);
    CHECK(first_mismatch(got, plain_px) == SIZE_MAX);
    CHECK(first_mismatch(a.contents(), a.ref) == SIZE_MAX);
    std::vector<uint8_t> gotb(60 * 20 * 4), wantb(60 * 20 * 4);
    REQUIRE(clEnqueueReadBuffer(env.queue, plain_buf, CL_TRUE, 0, gotb.size(), gotb.data(), 0, nullptr, nullptr) ==
            CL_SUCCESS);
    for (size_t y = 0; y < 20; ++y) std::memcpy(&wantb[y * 240], &a.ref[a.g.at(0, y, 0)], 240);
    CHECK(first_mismatch(gotb, wantb) == SIZE_MAX);
    CHECK(batches() == before);  // no batch: all of them were the ICD's
    clReleaseMemObject(plain);
    clReleaseMemObject(plain_buf);
}

TEST_CASE("[blt] end to end: CopyImage between two image imports, then a kernel reads the result in the same queue",
          "[kernel][blt][blt-image]") {
    REQUIRE_DMABUF();
    ClEnv env;
    REQUIRE_IMAGE_DMABUF(env);
    std::mt19937_64 rng(13);
    cl_image_format f;
    REQUIRE(format_for(env, CL_MEM_OBJECT_IMAGE2D, 4, &f));
    constexpr size_t W = 128, H = 64;
    Geo g;
    g.w = W, g.h = H, g.row_pitch = W * 4 + 64;
    ImageImport a(env, g, f, rng), b(env, g, f, rng);
    cl_int err = CL_SUCCESS;
    cl_mem out = clCreateBuffer(env.context, CL_MEM_WRITE_ONLY, W * H * 16, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_kernel k = env.build_kernel(
        "kernel void rd(read_only image2d_t img, global uint4 *out) {"
        "  int x = get_global_id(0), y = get_global_id(1);"
        "  out[y * get_global_size(0) + x] = read_imageui(img, (int2)(x, y)); }",
        "rd");
    const uint64_t before = batches();
    acquire(env, {a.mem, b.mem});
    const size_t so[3] = {7, 3, 0}, dof[3] = {20, 11, 0}, region[3] = {90, 40, 1};
    cl_event copy = nullptr;
    REQUIRE(clEnqueueCopyImage(env.queue, a.mem, b.mem, so, dof, region, 0, nullptr, &copy) == CL_SUCCESS);
    ref_copy(a.ref, a.g, so, b.ref, b.g, dof, region);
    REQUIRE(clSetKernelArg(k, 0, sizeof(cl_mem), &b.mem) == CL_SUCCESS);
    REQUIRE(clSetKernelArg(k, 1, sizeof(cl_mem), &out) == CL_SUCCESS);
    const size_t gws[2] = {W, H};
    REQUIRE(clEnqueueNDRangeKernel(env.queue, k, 2, nullptr, gws, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
    std::vector<uint32_t> got(W * H * 4);
    REQUIRE(clEnqueueReadBuffer(env.queue, out, CL_TRUE, 0, got.size() * 4, got.data(), 0, nullptr, nullptr) ==
            CL_SUCCESS);
    release(env, {a.mem, b.mem});
    cl_int st = 0;
    clGetEventInfo(copy, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr);
    CHECK(st == CL_COMPLETE);
    clReleaseEvent(copy);
    size_t bad = 0;
    for (size_t y = 0; y < H; ++y)
        for (size_t x = 0; x < W; ++x)
            for (size_t c = 0; c < 4; ++c) {
                // read_imageui widens each channel of the 4-byte element.
                const size_t ch = f.image_channel_order == CL_R ? 1 : 4;
                if (c >= ch) continue;
                uint32_t want = 0;
                if (ch == 4) want = b.ref[b.g.at(x, y, 0) + c];
                else std::memcpy(&want, &b.ref[b.g.at(x, y, 0)], 4);
                bad += got[(y * W + x) * 4 + c] != want;
            }
    CHECK(bad == 0);
    CHECK(first_mismatch(b.contents(), b.ref) == SIZE_MAX);
    if (expect_blt()) CHECK(batches() - before == uint64_t(a.zero_copy() && b.zero_copy()));
    clReleaseKernel(k);
    clReleaseMemObject(out);
}

TEST_CASE("[blt] image copies leave no fd, mapping or GEM object behind", "[blt][blt-image][maps]") {
    REQUIRE_DMABUF();
    ClEnv env;
    REQUIRE_IMAGE_DMABUF(env);
    std::mt19937_64 rng(17);
    cl_image_format f;
    REQUIRE(format_for(env, CL_MEM_OBJECT_IMAGE2D, 4, &f));
    auto live_gem = [] { return vgen9().now().live_objects; };
    // Warm up once: the engine's context and batch pool live for the process.
    auto round = [&] {
        Geo g;
        g.w = 200, g.h = 50, g.row_pitch = 200 * 4 + 32;
        ImageImport a(env, g, f, rng), b(env, g, f, rng);
        BufferImport buf(env, 200 * 50 * 4, rng);
        acquire(env, {a.mem, b.mem, buf.mem});
        const size_t o[3] = {0, 0, 0}, region[3] = {200, 50, 1};
        REQUIRE(clEnqueueCopyImage(env.queue, a.mem, b.mem, o, o, region, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(clEnqueueCopyImageToBuffer(env.queue, b.mem, buf.mem, o, region, 0, 0, nullptr, nullptr) ==
                CL_SUCCESS);
        REQUIRE(clEnqueueCopyBufferToImage(env.queue, buf.mem, a.mem, 0, o, region, 0, nullptr, nullptr) ==
                CL_SUCCESS);
        release(env, {a.mem, b.mem, buf.mem});
    };
    round();
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    auto settle = [&](int fds, int maps, uint64_t gem) {
        // Host steps drop their references on the worker, just after clFinish.
        for (int i = 0; i < 200 && (unparked_fds() != fds || unparked_mappings() != maps || live_gem() != gem); ++i)
            usleep(10 * 1000);
    };
    // The warm-up's objects may still be going (lazy destruction on the
    // worker or in the ICD): take the baseline once the counts hold still.
    int fds = settled_fds(), maps = settled_mappings();
    uint64_t gem = live_gem();
    for (int still = 0, i = 0; still < 10 && i < 300; ++i) {
        usleep(20 * 1000);
        const int f = unparked_fds(), m = unparked_mappings();
        const uint64_t g = live_gem();
        still = f == fds && m == maps && g == gem ? still + 1 : 0;
        fds = f, maps = m, gem = g;
    }
    for (int i = 0; i < 3; ++i) round();
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    settle(fds, maps, gem);
    CHECK(open_fds_toward(fds) == fds);
    CHECK(settled_mappings() == maps);
    CHECK(live_gem() == gem);
}
