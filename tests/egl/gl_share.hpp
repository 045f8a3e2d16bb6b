// Helpers the GL interop tests share: test formats and patterns, GL texture
// set-up and read-back through an FBO, the invert kernel, a GL-sharing
// OpenCL context, and the GL state the layer must leave alone.
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "egl_fixture.hpp"

namespace egltest {


#ifndef GL_R16_EXT
#define GL_R16_EXT 0x822A
#define GL_RG16_EXT 0x822C
#endif

struct Format {
    const char *name;
    GLenum internal, format, type;
    int channels, bytes;  // per channel
    bool norm16;          // needs GL_EXT_texture_norm16
};
inline const Format formats[] = {
    {"R8", GL_R8, GL_RED, GL_UNSIGNED_BYTE, 1, 1, false},
    {"RG8", GL_RG8, GL_RG, GL_UNSIGNED_BYTE, 2, 1, false},
    {"RGBA8", GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, 4, 1, false},
    {"R16", GL_R16_EXT, GL_RED, GL_UNSIGNED_SHORT, 1, 2, true},
    {"RG16", GL_RG16_EXT, GL_RG, GL_UNSIGNED_SHORT, 2, 2, true},
};

constexpr int W = 61, H = 17;  // odd on purpose: pitch padding in the dma-buf

inline uint32_t pattern(int x, int y, int c, uint32_t seed, int bytes) {
    uint32_t v = (static_cast<uint32_t>(x) * 73856093u) ^ (static_cast<uint32_t>(y) * 19349663u) ^
                 (static_cast<uint32_t>(c) * 83492791u) ^ (seed * 2654435761u);
    v ^= v >> 13;
    return bytes == 1 ? v & 0xffu : v & 0xffffu;
}

// Channel-packed pixels as glTexSubImage2D takes them (unpack alignment 1).
inline std::vector<uint8_t> make_pixels(const Format &f, uint32_t seed) {
    std::vector<uint8_t> px(static_cast<size_t>(W) * H * f.channels * f.bytes);
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x)
            for (int c = 0; c < f.channels; ++c) {
                const uint32_t v = pattern(x, y, c, seed, f.bytes);
                const size_t i = ((static_cast<size_t>(y) * W + x) * f.channels + c) * f.bytes;
                std::memcpy(&px[i], &v, f.bytes);  // little-endian
            }
    return px;
}

inline GLuint make_texture(const Format &f, const std::vector<uint8_t> *pixels) {
    GLuint tex = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glTexStorage2D(GL_TEXTURE_2D, 1, f.internal, W, H);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    if (pixels) glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, W, H, f.format, f.type, pixels->data());
    glBindTexture(GL_TEXTURE_2D, 0);
    return tex;
}

// The texture's pixels through an FBO: RGBA of 8 or 16 bits per channel.
inline std::vector<uint32_t> read_texture(const Format &f, GLuint tex) {
    GLint old_fbo = 0;
    glGetIntegerv(GL_FRAMEBUFFER_BINDING, &old_fbo);
    GLuint fbo = 0;
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
    std::vector<uint32_t> out(static_cast<size_t>(W) * H * 4);
    if (glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE) {
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        if (f.bytes == 1) {
            std::vector<uint8_t> raw(out.size());
            glReadPixels(0, 0, W, H, GL_RGBA, GL_UNSIGNED_BYTE, raw.data());
            std::copy(raw.begin(), raw.end(), out.begin());
        } else {
            std::vector<uint16_t> raw(out.size());
            glReadPixels(0, 0, W, H, GL_RGBA, GL_UNSIGNED_SHORT, raw.data());
            std::copy(raw.begin(), raw.end(), out.begin());
        }
    }
    glBindFramebuffer(GL_FRAMEBUFFER, old_fbo);
    glDeleteFramebuffers(1, &fbo);
    return out;
}

// Mismatches of the first `channels` channels against expect(x, y, c).
template <typename Expect>
int count_mismatches(const Format &f, const std::vector<uint32_t> &rgba, Expect expect) {
    int bad = 0;
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x)
            for (int c = 0; c < f.channels; ++c) {
                const uint32_t got = rgba[(static_cast<size_t>(y) * W + x) * 4 + c];
                const uint32_t want = expect(x, y, c);
                if (got != want && bad++ < 4)
                    UNSCOPED_INFO(f.name << " (" << x << "," << y << ") channel " << c << ": got " << got
                                         << ", want " << want);
            }
    return bad;
}

inline const char *kernel_source = R"CLC(
__kernel void invert(read_only image2d_t src, write_only image2d_t dst) {
    const int2 p = (int2)(get_global_id(0), get_global_id(1));
    write_imagef(dst, p, (float4)(1.0f) - read_imagef(src, p));
}
)CLC";

struct GlState {
    GLint texture = 0, active = 0, fbo = 0, unpack = 0;
    EGLContext ctx = EGL_NO_CONTEXT;
    EGLDisplay dpy = EGL_NO_DISPLAY;
    EGLenum api = 0;
    static GlState now() {
        GlState s;
        glGetIntegerv(GL_TEXTURE_BINDING_2D, &s.texture);
        glGetIntegerv(GL_ACTIVE_TEXTURE, &s.active);
        glGetIntegerv(GL_FRAMEBUFFER_BINDING, &s.fbo);
        glGetIntegerv(GL_UNPACK_ALIGNMENT, &s.unpack);
        s.ctx = eglGetCurrentContext();
        s.dpy = eglGetCurrentDisplay();
        s.api = eglQueryAPI();
        return s;
    }
    bool operator==(const GlState &o) const {
        return texture == o.texture && active == o.active && fbo == o.fbo && unpack == o.unpack && ctx == o.ctx &&
               dpy == o.dpy && api == o.api;
    }
};

// The state a glBlitFramebuffer copy touches; the layer must restore it.
struct BlitState {
    GLint draw_fbo = 0, read_fbo = 0, renderbuffer = 0, texture = 0, active = 0;
    GLint viewport[4] = {};
    GLboolean mask[4] = {};
    GLboolean scissor = GL_FALSE, discard = GL_FALSE;
    GLint scissor_box[4] = {};
    EGLContext ctx = EGL_NO_CONTEXT;
    static BlitState now() {
        BlitState s;
        glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &s.draw_fbo);
        glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &s.read_fbo);
        glGetIntegerv(GL_RENDERBUFFER_BINDING, &s.renderbuffer);
        glGetIntegerv(GL_TEXTURE_BINDING_2D, &s.texture);
        glGetIntegerv(GL_ACTIVE_TEXTURE, &s.active);
        glGetIntegerv(GL_VIEWPORT, s.viewport);
        glGetBooleanv(GL_COLOR_WRITEMASK, s.mask);
        s.scissor = glIsEnabled(GL_SCISSOR_TEST);
        s.discard = glIsEnabled(GL_RASTERIZER_DISCARD);
        glGetIntegerv(GL_SCISSOR_BOX, s.scissor_box);
        s.ctx = eglGetCurrentContext();
        return s;
    }
    bool operator==(const BlitState &o) const {
        return draw_fbo == o.draw_fbo && read_fbo == o.read_fbo && renderbuffer == o.renderbuffer &&
               texture == o.texture && active == o.active && std::equal(viewport, viewport + 4, o.viewport) &&
               std::equal(mask, mask + 4, o.mask) && scissor == o.scissor && discard == o.discard &&
               std::equal(scissor_box, scissor_box + 4, o.scissor_box) && ctx == o.ctx;
    }
};

inline bool egl_required() {
    const char *v = std::getenv("CLDMABUF_TEST_EGL_REQUIRED");
    return v && *v == '1';
}

#define NEED_GL(gl)                                                             \
    do {                                                                        \
        if (!(gl).ok()) {                                                       \
            if (egl_required()) FAIL("EGL interop unavailable: " << (gl).why);  \
            SKIP("EGL interop unavailable: " << (gl).why);                      \
        }                                                                       \
    } while (0)

struct Shared {
    ClPick cl;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    cl_kernel kernel = nullptr;
    cl_program program = nullptr;
    // allow_tiled: CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF = CL_TRUE (consent to the GPU copy).
    explicit Shared(const Gl &gl, bool allow_tiled = false) {
        REQUIRE(cl.platform);
        const cl_context_properties props[] = {
            CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(cl.platform),
            CL_GL_CONTEXT_KHR,   reinterpret_cast<cl_context_properties>(gl.ctx),
            CL_EGL_DISPLAY_KHR,  reinterpret_cast<cl_context_properties>(gl.dpy),
            allow_tiled ? CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF : 0, CL_TRUE,
            0};
        cl_int err = CL_SUCCESS;
        context = clCreateContext(props, 1, &cl.device, nullptr, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        queue = clCreateCommandQueueWithProperties(context, cl.device, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
    }
    cl_kernel invert() {
        if (kernel) return kernel;
        cl_int err = CL_SUCCESS;
        program = clCreateProgramWithSource(context, 1, &kernel_source, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        REQUIRE(clBuildProgram(program, 1, &cl.device, nullptr, nullptr, nullptr) == CL_SUCCESS);
        kernel = clCreateKernel(program, "invert", &err);
        REQUIRE(err == CL_SUCCESS);
        return kernel;
    }
    ~Shared() {
        if (kernel) clReleaseKernel(kernel);
        if (program) clReleaseProgram(program);
        if (queue) clReleaseCommandQueue(queue);
        if (context) clReleaseContext(context);
    }
};

// What OpenCL sees of a whole W x H GL image import `mem`: acquired, read
// (blocking) into `bytes` bytes, released, the queue finished; each step
// REQUIREd.
inline std::vector<uint8_t> read_through_cl(cl_command_queue queue, cl_mem mem, size_t bytes) {
    REQUIRE(clEnqueueAcquireGLObjects(queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    std::vector<uint8_t> seen(bytes);
    const size_t origin[3] = {0, 0, 0}, region[3] = {W, H, 1};
    REQUIRE(clEnqueueReadImage(queue, mem, CL_TRUE, origin, region, 0, 0, seen.data(), 0, nullptr, nullptr) ==
            CL_SUCCESS);
    REQUIRE(clEnqueueReleaseGLObjects(queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(queue) == CL_SUCCESS);
    return seen;
}


}  // namespace egltest
