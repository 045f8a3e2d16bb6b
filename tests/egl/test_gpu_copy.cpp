// The tiled-export path on llvmpipe (which exports LINEAR): the test switch
// CLDMABUF_DEBUG=egl-force-copy makes the layer treat every export as tiled, so
// it allocates a linear GBM buffer and copies with glBlitFramebuffer inside
// the producer's context.  Checked: refusal without consent (naming the
// flag is in the log line), the same bits as the zero-copy path both ways,
// OpenCL's writes reaching GL only at the release (a copy, not an alias),
// and the producer's GL state restored exactly.
#include <cstdlib>

#include "gl_share.hpp"
#include "test_env.hpp"

using namespace egltest;

namespace {

// The layer reads egl-force-copy on every import.
struct ForceCopy : cldmabuf::test::DebugWordScope {
    ForceCopy() : DebugWordScope("egl-force-copy") {}
};

// Producer state nobody would leave as the default, so a sloppy restore shows.
struct OddState {
    GLuint fbo[2] = {0, 0}, rb = 0, tex = 0;
    OddState() {
        glGenFramebuffers(2, fbo);
        glGenRenderbuffers(1, &rb);
        glGenTextures(1, &tex);
        glBindFramebuffer(GL_DRAW_FRAMEBUFFER, fbo[0]);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo[1]);
        glBindRenderbuffer(GL_RENDERBUFFER, rb);
        glActiveTexture(GL_TEXTURE2);
        glBindTexture(GL_TEXTURE_2D, tex);
        glEnable(GL_SCISSOR_TEST);
        glScissor(1, 2, 3, 4);
        glColorMask(GL_TRUE, GL_FALSE, GL_TRUE, GL_FALSE);
        glViewport(5, 6, 7, 8);
        glEnable(GL_RASTERIZER_DISCARD);
    }
    ~OddState() {
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        glBindRenderbuffer(GL_RENDERBUFFER, 0);
        glBindTexture(GL_TEXTURE_2D, 0);
        glActiveTexture(GL_TEXTURE0);
        glDisable(GL_SCISSOR_TEST);
        glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
        glViewport(0, 0, W, H);
        glDisable(GL_RASTERIZER_DISCARD);
        glDeleteFramebuffers(2, fbo);
        glDeleteRenderbuffers(1, &rb);
        glDeleteTextures(1, &tex);
    }
};

}  // namespace

TEST_CASE("GPU copy path: refused without consent", "[vm][gl][copy]") {
    Gl gl;
    NEED_GL(gl);
    ForceCopy force;
    Shared s(gl);  // no CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF
    const Format &f = formats[2];
    const auto pixels = make_pixels(f, 5);
    GLuint tex = make_texture(f, &pixels);
    glFinish();
    cl_int err = CL_SUCCESS;
    CHECK(clCreateFromGLTexture(s.context, CL_MEM_READ_ONLY, GL_TEXTURE_2D, 0, tex, &err) == nullptr);
    CHECK(err == CL_INVALID_OPERATION);

    // An EGLImage: consent is its property; refused with CL_IMAGE_FORMAT_NOT_SUPPORTED without it.
    auto create_from_egl = reinterpret_cast<clCreateFromEGLImageKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(s.cl.platform, "clCreateFromEGLImageKHR"));
    REQUIRE(create_from_egl);
    auto create_image = reinterpret_cast<PFNEGLCREATEIMAGEKHRPROC>(eglGetProcAddress("eglCreateImageKHR"));
    auto destroy_image = reinterpret_cast<PFNEGLDESTROYIMAGEKHRPROC>(eglGetProcAddress("eglDestroyImageKHR"));
    const EGLint attribs[] = {EGL_GL_TEXTURE_LEVEL_KHR, 0, EGL_IMAGE_PRESERVED_KHR, EGL_TRUE, EGL_NONE};
    EGLImageKHR image = create_image(gl.dpy, gl.ctx, EGL_GL_TEXTURE_2D_KHR,
                                     reinterpret_cast<EGLClientBuffer>(static_cast<uintptr_t>(tex)), attribs);
    REQUIRE(image != EGL_NO_IMAGE_KHR);
    CHECK(create_from_egl(s.context, gl.dpy, image, CL_MEM_READ_ONLY, nullptr, &err) == nullptr);
    CHECK(err == CL_IMAGE_FORMAT_NOT_SUPPORTED);
    const cl_egl_image_properties_khr consent[] = {CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF, CL_TRUE, 0};
    cl_mem mem = create_from_egl(s.context, gl.dpy, image, CL_MEM_READ_ONLY, consent, &err);
    CHECK(err == CL_SUCCESS);
    if (mem) {
        // Read through the copy: the same pixels.
        auto acquire = reinterpret_cast<clEnqueueAcquireEGLObjectsKHR_fn>(
            clGetExtensionFunctionAddressForPlatform(s.cl.platform, "clEnqueueAcquireEGLObjectsKHR"));
        auto release = reinterpret_cast<clEnqueueReleaseEGLObjectsKHR_fn>(
            clGetExtensionFunctionAddressForPlatform(s.cl.platform, "clEnqueueReleaseEGLObjectsKHR"));
        REQUIRE(acquire(s.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
        std::vector<uint8_t> seen(pixels.size());
        const size_t origin[3] = {0, 0, 0}, region[3] = {W, H, 1};
        REQUIRE(clEnqueueReadImage(s.queue, mem, CL_TRUE, origin, region, 0, 0, seen.data(), 0, nullptr, nullptr) ==
                CL_SUCCESS);
        REQUIRE(release(s.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(clFinish(s.queue) == CL_SUCCESS);
        CHECK(seen == pixels);
        clReleaseMemObject(mem);
    }
    destroy_image(gl.dpy, image);
    glDeleteTextures(1, &tex);
}

TEST_CASE("GPU copy path: same bits both ways, producer state restored", "[vm][gl][copy]") {
    Gl gl;
    NEED_GL(gl);
    ForceCopy force;
    Shared s(gl, true);
    cl_kernel kernel = s.invert();
    for (const Format &f : formats) {
        INFO("format " << f.name);
        if (f.norm16 && !gl.has_gl_extension("GL_EXT_texture_norm16")) continue;
        const auto pixels = make_pixels(f, 7);
        GLuint in = make_texture(f, &pixels), out = make_texture(f, nullptr);
        glFinish();

        cl_int err = CL_SUCCESS;
        cl_mem src = nullptr, dst = nullptr;
        {
            OddState odd;
            const BlitState before = BlitState::now();
            src = clCreateFromGLTexture(s.context, CL_MEM_READ_ONLY, GL_TEXTURE_2D, 0, in, &err);
            REQUIRE(err == CL_SUCCESS);
            dst = clCreateFromGLTexture(s.context, CL_MEM_WRITE_ONLY, GL_TEXTURE_2D, 0, out, &err);
            REQUIRE(err == CL_SUCCESS);
            cl_mem both[2] = {src, dst};
            REQUIRE(clEnqueueAcquireGLObjects(s.queue, 2, both, 0, nullptr, nullptr) == CL_SUCCESS);
            CHECK(BlitState::now() == before);  // the copy into the linear buffers ran in this context
            clSetKernelArg(kernel, 0, sizeof src, &src);
            clSetKernelArg(kernel, 1, sizeof dst, &dst);
            const size_t global[2] = {W, H};
            REQUIRE(clEnqueueNDRangeKernel(s.queue, kernel, 2, nullptr, global, nullptr, 0, nullptr, nullptr) ==
                    CL_SUCCESS);
            REQUIRE(clFinish(s.queue) == CL_SUCCESS);
        }
        // Before the release the kernel's output is only in the linear copy.
        const uint32_t max = f.bytes == 1 ? 0xffu : 0xffffu;
        auto inverted = [&](int x, int y, int c) { return max - pattern(x, y, c, 7, f.bytes); };
        CHECK(count_mismatches(f, read_texture(f, out), inverted) > 0);
        {
            OddState odd;
            const BlitState before = BlitState::now();
            cl_mem both[2] = {src, dst};
            REQUIRE(clEnqueueReleaseGLObjects(s.queue, 2, both, 0, nullptr, nullptr) == CL_SUCCESS);
            CHECK(BlitState::now() == before);  // the copy back ran in this context
            REQUIRE(clFinish(s.queue) == CL_SUCCESS);
        }
        CHECK(count_mismatches(f, read_texture(f, out), inverted) == 0);
        CHECK(count_mismatches(f, read_texture(f, in),
                               [&](int x, int y, int c) { return pattern(x, y, c, 7, f.bytes); }) == 0);

        // GL changes the source: the next acquire copies the change.
        const auto pixels2 = make_pixels(f, 8);
        glBindTexture(GL_TEXTURE_2D, in);
        glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, W, H, f.format, f.type, pixels2.data());
        glBindTexture(GL_TEXTURE_2D, 0);
        glFinish();
        CHECK(read_through_cl(s.queue, src, pixels2.size()) == pixels2);
        std::printf("%s: GPU copy path bit-exact both ways, producer state restored\n", f.name);

        clReleaseMemObject(src);
        clReleaseMemObject(dst);
        glDeleteTextures(1, &in);
        glDeleteTextures(1, &out);
    }
}
