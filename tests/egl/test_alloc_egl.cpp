// The allocator's round trip through GL (issue #17, docs/allocator.md): a
// buffer the layer allocated (CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF) is exported
// with CL_MEM_DMA_BUF_FD_CLDMABUF, imported into GL as an EGLImage
// (EGL_EXT_image_dma_buf_import, DRM_FORMAT_ABGR8888, linear), rendered to by
// GL and read by an OpenCL kernel; then written by a kernel and read by GL,
// both through the framebuffer (glReadPixels) and by sampling the texture
// (texelFetch), bit-exact every way.  The OpenCL context is an ordinary one:
// the dma-buf is the only thing the two APIs share.  VM lane (Mesa llvmpipe
// on its software EGL device, see GlDisplay::foreign_dmabufs; the system
// dma-heap); skips without EGL.
#include <catch2/catch_test_macros.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <ios>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "gl_share.hpp"

using namespace egltest;

namespace {

constexpr int kW = 64, kH = 32;
constexpr EGLint kAbgr8888 = 0x34324241;  // fourcc 'AB24': bytes R, G, B, A

// The pixel GL renders at (x, y), as the 32-bit word of its bytes R, G, B, A:
// every pixel different, so a wrong pitch, row order or channel order shows.
uint32_t rendered(uint32_t x, uint32_t y) {
    const uint32_t r = (x * 3u + y) & 255u, g = (y * 5u + x * 7u) & 255u, b = (x ^ (y << 2)) & 255u,
                   a = (255u - x) & 255u;
    return r | g << 8 | b << 16 | a << 24;
}

// A triangle that covers the viewport; no vertex attributes.
const char *kVertex = R"GL(#version 300 es
void main() {
    gl_Position = vec4(float((gl_VertexID & 1) * 4 - 1), float((gl_VertexID >> 1) * 4 - 1), 0.0, 1.0);
}
)GL";
// rendered(x, y) in GL; n / 255.0 stores n exactly in an 8-bit UNORM channel.
const char *kPattern = R"GL(#version 300 es
precision highp float;
precision highp int;
out vec4 colour;
void main() {
    uint x = uint(gl_FragCoord.x), y = uint(gl_FragCoord.y);
    uvec4 v = uvec4(x * 3u + y, y * 5u + x * 7u, x ^ (y << 2), 255u - x) & 255u;
    colour = vec4(v) / 255.0;
}
)GL";
// Samples the texture (the dma-buf) texel by texel.
const char *kSample = R"GL(#version 300 es
precision highp float;
uniform highp sampler2D image;
out vec4 colour;
void main() { colour = texelFetch(image, ivec2(gl_FragCoord.xy), 0); }
)GL";

GLuint program_of(const char *fragment) {
    auto stage = [](GLenum type, const char *source) {
        GLuint s = glCreateShader(type);
        glShaderSource(s, 1, &source, nullptr);
        glCompileShader(s);
        GLint ok = 0;
        glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
        char log[512] = "";
        glGetShaderInfoLog(s, sizeof log, nullptr, log);
        INFO("shader log: " << log);
        REQUIRE(ok);
        return s;
    };
    const GLuint vs = stage(GL_VERTEX_SHADER, kVertex), fs = stage(GL_FRAGMENT_SHADER, fragment);
    GLuint p = glCreateProgram();
    glAttachShader(p, vs);
    glAttachShader(p, fs);
    glLinkProgram(p);
    glDeleteShader(vs);
    glDeleteShader(fs);
    GLint ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    REQUIRE(ok);
    return p;
}

const char *kSource = R"CL(
kernel void xor_copy(global const uint *in, global uint *out, uint key) {
    size_t i = get_global_id(0);
    out[i] = in[i] ^ key;
}
)CL";

}  // namespace

// On its first VM run (2026-12-03) this died with SIGSEGV on PoCL 6 and on
// rusticl: the surfaceless display there is kms_swrast on vgem, which cannot
// map an imported dma-buf (GlDisplay::foreign_dmabufs says why); it now asks
// for a display that can.
TEST_CASE("allocation: GL renders into a layer-allocated dma-buf, a kernel reads it, and back", "[vm][alloc-gl]") {
    Gl gl(GlDisplay::foreign_dmabufs);
    NEED_GL(gl);
    const char *dpy_exts = eglQueryString(gl.dpy, EGL_EXTENSIONS);
    if (!dpy_exts || !has_word(dpy_exts, "EGL_EXT_image_dma_buf_import")) {
        if (egl_required()) FAIL("the EGL display (" << gl.driver << ") has no EGL_EXT_image_dma_buf_import");
        SKIP("the EGL display has no EGL_EXT_image_dma_buf_import");
    }
    auto create_image = reinterpret_cast<PFNEGLCREATEIMAGEKHRPROC>(eglGetProcAddress("eglCreateImageKHR"));
    auto destroy_image = reinterpret_cast<PFNEGLDESTROYIMAGEKHRPROC>(eglGetProcAddress("eglDestroyImageKHR"));
    auto target_texture =
        reinterpret_cast<PFNGLEGLIMAGETARGETTEXTURE2DOESPROC>(eglGetProcAddress("glEGLImageTargetTexture2DOES"));
    REQUIRE(create_image);
    REQUIRE(destroy_image);
    REQUIRE(target_texture);

    ClPick cl;
    REQUIRE(cl.device);
    cl_int err = CL_SUCCESS;
    cl_context context = clCreateContext(nullptr, 1, &cl.device, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, cl.device, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    auto acquire = reinterpret_cast<clEnqueueAcquireExternalMemObjectsKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(cl.platform, "clEnqueueAcquireExternalMemObjectsKHR"));
    auto release = reinterpret_cast<clEnqueueReleaseExternalMemObjectsKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(cl.platform, "clEnqueueReleaseExternalMemObjectsKHR"));
    REQUIRE(acquire);
    REQUIRE(release);

    const size_t n = size_t{kW} * kH, bytes = n * 4;
    const cl_mem_properties props[] = {CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, CL_DMA_BUF_EXPORTER_ANY_CLDMABUF, 0};
    cl_mem shared = clCreateBufferWithProperties(context, props, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    if (!shared) {
        if (egl_required()) FAIL("the layer allocated no dma-buf (error " << err << ")");
        SKIP("the layer allocated no dma-buf here (error " << err << ")");
    }
    cl_mem plain = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_int fd = -1;
    REQUIRE(clGetMemObjectInfo(shared, CL_MEM_DMA_BUF_FD_CLDMABUF, sizeof fd, &fd, nullptr) == CL_SUCCESS);

    const EGLint attrs[] = {EGL_WIDTH, kW, EGL_HEIGHT, kH, EGL_LINUX_DRM_FOURCC_EXT, kAbgr8888,
                            EGL_DMA_BUF_PLANE0_FD_EXT, fd, EGL_DMA_BUF_PLANE0_OFFSET_EXT, 0,
                            EGL_DMA_BUF_PLANE0_PITCH_EXT, kW * 4, EGL_NONE};
    EGLImageKHR image = create_image(gl.dpy, EGL_NO_CONTEXT, EGL_LINUX_DMA_BUF_EXT, nullptr, attrs);
    close(fd);  // EGL keeps its own reference to the dma-buf
    REQUIRE(image != EGL_NO_IMAGE_KHR);
    GLuint tex = 0, fbo = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    target_texture(GL_TEXTURE_2D, image);
    // One level only: without this the texture is incomplete and samples 0.
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
    REQUIRE(glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE);
    REQUIRE(glGetError() == GL_NO_ERROR);

    // GL -> OpenCL: a draw writes rendered(x, y) into every pixel.
    glViewport(0, 0, kW, kH);  // a surfaceless context starts with an empty one
    const GLuint pattern_program = program_of(kPattern);
    glUseProgram(pattern_program);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glFinish();
    REQUIRE(glGetError() == GL_NO_ERROR);

    cl_program program = clCreateProgramWithSource(context, 1, &kSource, nullptr, &err);
    REQUIRE(clBuildProgram(program, 1, &cl.device, nullptr, nullptr, nullptr) == CL_SUCCESS);
    cl_kernel kernel = clCreateKernel(program, "xor_copy", &err);
    REQUIRE(err == CL_SUCCESS);
    auto run = [&](cl_mem in, cl_mem out, cl_uint key) {
        REQUIRE(clSetKernelArg(kernel, 0, sizeof in, &in) == CL_SUCCESS);
        REQUIRE(clSetKernelArg(kernel, 1, sizeof out, &out) == CL_SUCCESS);
        REQUIRE(clSetKernelArg(kernel, 2, sizeof key, &key) == CL_SUCCESS);
        REQUIRE(acquire(queue, 1, &shared, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &n, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(release(queue, 1, &shared, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(clFinish(queue) == CL_SUCCESS);
    };
    // Counts the words equal to want(x, y), naming the first few that are not.
    auto matches = [](const std::vector<uint32_t> &got, const char *what, auto want) {
        size_t good = 0, shown = 0;
        for (uint32_t y = 0; y < kH; ++y)  // GL's row 0 is the dma-buf's first row
            for (uint32_t x = 0; x < kW; ++x) {
                const uint32_t g = got[size_t(y) * kW + x], w = want(x, y);
                if (g == w) ++good;
                else if (shown++ < 4) UNSCOPED_INFO(what << " (" << x << "," << y << "): 0x" << std::hex << g << ", want 0x" << w << std::dec);
            }
        return good;
    };
    run(shared, plain, 0);
    std::vector<uint32_t> got(n);
    REQUIRE(clEnqueueReadBuffer(queue, plain, CL_TRUE, 0, bytes, got.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(matches(got, "kernel read of GL's draw", rendered) == n);

    // OpenCL -> GL: a kernel writes every pixel; GL reads the framebuffer
    // (glReadPixels) and samples the texture into a texture of its own.
    constexpr uint32_t key = 0x5a5a5a5au;
    auto written = [](uint32_t x, uint32_t y) { return (y * kW + x) * 0x9E3779B1u ^ key; };
    std::vector<uint32_t> source(n);
    for (size_t i = 0; i < n; ++i) source[i] = static_cast<uint32_t>(i * 0x9E3779B1u);
    REQUIRE(clEnqueueWriteBuffer(queue, plain, CL_TRUE, 0, bytes, source.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    run(plain, shared, key);
    std::vector<uint32_t> read(n);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glReadPixels(0, 0, kW, kH, GL_RGBA, GL_UNSIGNED_BYTE, read.data());
    REQUIRE(glGetError() == GL_NO_ERROR);
    CHECK(matches(read, "glReadPixels of the kernel's write", written) == n);

    GLuint copy = 0, copy_fbo = 0;
    glGenTextures(1, &copy);
    glBindTexture(GL_TEXTURE_2D, copy);
    glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA8, kW, kH);
    glGenFramebuffers(1, &copy_fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, copy_fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, copy, 0);
    REQUIRE(glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE);
    const GLuint sample_program = program_of(kSample);
    glUseProgram(sample_program);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, tex);
    glUniform1i(glGetUniformLocation(sample_program, "image"), 0);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    std::vector<uint32_t> sampled(n);
    glReadPixels(0, 0, kW, kH, GL_RGBA, GL_UNSIGNED_BYTE, sampled.data());
    REQUIRE(glGetError() == GL_NO_ERROR);
    const size_t sampled_good = matches(sampled, "texelFetch of the kernel's write", written);
    CHECK(sampled_good == n);
    cl_uint exporter = 0;
    clGetMemObjectInfo(shared, CL_MEM_DMA_BUF_EXPORTER_CLDMABUF, sizeof exporter, &exporter, nullptr);
    std::printf("alloc-gl: %s, EGL driver %s, exporter %u: GL draw -> kernel, kernel -> glReadPixels and "
                "texelFetch (%zu/%zu sampled)\n",
                cl.name.c_str(), gl.driver.c_str(), exporter, sampled_good, n);

    glUseProgram(0);
    glDeleteProgram(pattern_program);
    glDeleteProgram(sample_program);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &copy_fbo);
    glDeleteFramebuffers(1, &fbo);
    glBindTexture(GL_TEXTURE_2D, 0);
    glDeleteTextures(1, &copy);
    glDeleteTextures(1, &tex);
    destroy_image(gl.dpy, image);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseMemObject(plain);
    clReleaseMemObject(shared);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
}
