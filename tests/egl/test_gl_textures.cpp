// GL textures and EGLImages through the layer on a real EGL (VM lane: Mesa
// llvmpipe, surfaceless platform).  Known patterns go into GL textures,
// a kernel reads them and writes other GL textures, and glReadPixels (through
// an FBO) must see exactly what the kernel wrote; then GL changes a texture
// and OpenCL must read the change.  Without EGL dma-buf export (the build
// host) the tests skip, unless CLDMABUF_TEST_EGL_REQUIRED=1.
#include <catch2/catch_test_macros.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "gl_share.hpp"

using namespace egltest;

TEST_CASE("GL textures: GL -> kernel -> GL, bit-exact, zero-copy", "[vm][gl]") {
    Gl gl;
    NEED_GL(gl);
    Shared s(gl);
    const std::string exts = platform_string(s.cl.platform, CL_PLATFORM_EXTENSIONS);
    CHECK(has_word(exts, "cl_khr_gl_sharing"));
    CHECK(has_word(exts, "cl_khr_egl_image"));
    std::printf("platform %s, GL_RENDERER %s\n", s.cl.name.c_str(),
                reinterpret_cast<const char *>(glGetString(GL_RENDERER)));

    // CL_CONTEXT_PROPERTIES answers the application's list, GL entries included.
    cl_context_properties got[16] = {};
    size_t got_size = 0;
    REQUIRE(clGetContextInfo(s.context, CL_CONTEXT_PROPERTIES, sizeof got, got, &got_size) == CL_SUCCESS);
    CHECK(got_size == 7 * sizeof(cl_context_properties));
    CHECK(got[2] == CL_GL_CONTEXT_KHR);

    cl_kernel kernel = s.invert();
    for (const Format &f : formats) {
        INFO("format " << f.name);
        if (f.norm16 && !gl.has_gl_extension("GL_EXT_texture_norm16")) {
            std::printf("%s: skipped (no GL_EXT_texture_norm16)\n", f.name);
            continue;
        }
        const auto pixels = make_pixels(f, 1);
        GLuint in = make_texture(f, &pixels), out = make_texture(f, nullptr);
        glFinish();

        // Some GL state the layer must leave alone.
        glActiveTexture(GL_TEXTURE3);
        glBindTexture(GL_TEXTURE_2D, in);
        glPixelStorei(GL_UNPACK_ALIGNMENT, 2);
        const GlState before = GlState::now();
        cl_int err = CL_SUCCESS;
        cl_mem src = clCreateFromGLTexture(s.context, CL_MEM_READ_WRITE, GL_TEXTURE_2D, 0, in, &err);
        REQUIRE(err == CL_SUCCESS);
        cl_mem dst = clCreateFromGLTexture(s.context, CL_MEM_WRITE_ONLY, GL_TEXTURE_2D, 0, out, &err);
        REQUIRE(err == CL_SUCCESS);
        CHECK(GlState::now() == before);
        glBindTexture(GL_TEXTURE_2D, 0);
        glActiveTexture(GL_TEXTURE0);
        glPixelStorei(GL_UNPACK_ALIGNMENT, 1);

        cl_uint route = 99;
        clGetMemObjectInfo(src, CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, sizeof route, &route, nullptr);
        size_t pitch = 0, width = 0, height = 0;
        clGetImageInfo(src, CL_IMAGE_ROW_PITCH, sizeof pitch, &pitch, nullptr);
        clGetImageInfo(src, CL_IMAGE_WIDTH, sizeof width, &width, nullptr);
        clGetImageInfo(src, CL_IMAGE_HEIGHT, sizeof height, &height, nullptr);
        CHECK(width == W);
        CHECK(height == H);
        std::printf("%s: imported %zux%zu, row pitch %zu, route %u\n", f.name, width, height, pitch, route);

        cl_gl_object_type type = 0;
        cl_GLuint name = 0;
        CHECK(clGetGLObjectInfo(src, &type, &name) == CL_SUCCESS);
        CHECK(type == CL_GL_OBJECT_TEXTURE2D);
        CHECK(name == in);
        cl_GLenum target = 0;
        cl_GLint level = -1;
        CHECK(clGetGLTextureInfo(src, CL_GL_TEXTURE_TARGET, sizeof target, &target, nullptr) == CL_SUCCESS);
        CHECK(target == GL_TEXTURE_2D);
        CHECK(clGetGLTextureInfo(src, CL_GL_MIPMAP_LEVEL, sizeof level, &level, nullptr) == CL_SUCCESS);
        CHECK(level == 0);

        // GL -> CL -> GL.
        cl_mem both[2] = {src, dst};
        cl_event acquired = nullptr;
        REQUIRE(clEnqueueAcquireGLObjects(s.queue, 2, both, 0, nullptr, &acquired) == CL_SUCCESS);
        cl_command_type ctype = 0;
        clGetEventInfo(acquired, CL_EVENT_COMMAND_TYPE, sizeof ctype, &ctype, nullptr);
        CHECK(ctype == CL_COMMAND_ACQUIRE_GL_OBJECTS);
        clReleaseEvent(acquired);
        clSetKernelArg(kernel, 0, sizeof src, &src);
        clSetKernelArg(kernel, 1, sizeof dst, &dst);
        const size_t global[2] = {W, H};
        REQUIRE(clEnqueueNDRangeKernel(s.queue, kernel, 2, nullptr, global, nullptr, 0, nullptr, nullptr) ==
                CL_SUCCESS);
        REQUIRE(clEnqueueReleaseGLObjects(s.queue, 2, both, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(clFinish(s.queue) == CL_SUCCESS);

        const uint32_t max = f.bytes == 1 ? 0xffu : 0xffffu;
        CHECK(count_mismatches(f, read_texture(f, out),
                               [&](int x, int y, int c) { return max - pattern(x, y, c, 1, f.bytes); }) == 0);
        CHECK(count_mismatches(f, read_texture(f, in),
                               [&](int x, int y, int c) { return pattern(x, y, c, 1, f.bytes); }) == 0);

        // GL changes the texture after the import: OpenCL reads the change.
        const auto pixels2 = make_pixels(f, 2);
        glBindTexture(GL_TEXTURE_2D, in);
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, W, H, f.format, f.type, pixels2.data());
        glBindTexture(GL_TEXTURE_2D, 0);
        glFinish();
        CHECK(read_through_cl(s.queue, src, pixels2.size()) == pixels2);

        clReleaseMemObject(src);
        clReleaseMemObject(dst);
        glDeleteTextures(1, &in);
        glDeleteTextures(1, &out);
    }
}

TEST_CASE("EGLImages: clCreateFromEGLImageKHR, acquire/release, errors", "[vm][egl]") {
    Gl gl;
    NEED_GL(gl);
    Shared s(gl);
    auto create_from_egl = reinterpret_cast<clCreateFromEGLImageKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(s.cl.platform, "clCreateFromEGLImageKHR"));
    auto acquire = reinterpret_cast<clEnqueueAcquireEGLObjectsKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(s.cl.platform, "clEnqueueAcquireEGLObjectsKHR"));
    auto release = reinterpret_cast<clEnqueueReleaseEGLObjectsKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(s.cl.platform, "clEnqueueReleaseEGLObjectsKHR"));
    auto gl_context_info = reinterpret_cast<clGetGLContextInfoKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(s.cl.platform, "clGetGLContextInfoKHR"));
    REQUIRE(create_from_egl);
    REQUIRE(acquire);
    REQUIRE(release);
    REQUIRE(gl_context_info);

    const Format &f = formats[2];  // RGBA8
    const auto pixels = make_pixels(f, 3);
    GLuint tex = make_texture(f, &pixels);
    glFinish();
    auto create_image = reinterpret_cast<PFNEGLCREATEIMAGEKHRPROC>(eglGetProcAddress("eglCreateImageKHR"));
    auto destroy_image = reinterpret_cast<PFNEGLDESTROYIMAGEKHRPROC>(eglGetProcAddress("eglDestroyImageKHR"));
    REQUIRE(create_image);
    const EGLint attribs[] = {EGL_GL_TEXTURE_LEVEL_KHR, 0, EGL_IMAGE_PRESERVED_KHR, EGL_TRUE, EGL_NONE};
    EGLImageKHR image = create_image(gl.dpy, gl.ctx, EGL_GL_TEXTURE_2D_KHR,
                                     reinterpret_cast<EGLClientBuffer>(static_cast<uintptr_t>(tex)), attribs);
    REQUIRE(image != EGL_NO_IMAGE_KHR);

    cl_int err = CL_SUCCESS;
    cl_mem mem = create_from_egl(s.context, gl.dpy, image, CL_MEM_READ_ONLY, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_event ev = nullptr;
    REQUIRE(acquire(s.queue, 1, &mem, 0, nullptr, &ev) == CL_SUCCESS);
    cl_command_type type = 0;
    clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr);
    CHECK(type == CL_COMMAND_ACQUIRE_EGL_OBJECTS_KHR);
    clReleaseEvent(ev);
    std::vector<uint8_t> seen(pixels.size());
    const size_t origin[3] = {0, 0, 0}, region[3] = {W, H, 1};
    REQUIRE(clEnqueueReadImage(s.queue, mem, CL_TRUE, origin, region, 0, 0, seen.data(), 0, nullptr, nullptr) ==
            CL_SUCCESS);
    REQUIRE(release(s.queue, 1, &mem, 0, nullptr, &ev) == CL_SUCCESS);
    clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr);
    CHECK(type == CL_COMMAND_RELEASE_EGL_OBJECTS_KHR);
    clReleaseEvent(ev);
    REQUIRE(clFinish(s.queue) == CL_SUCCESS);
    CHECK(seen == pixels);
    // An EGL object is not a GL object, and the reverse.
    CHECK(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr) == CL_INVALID_GL_OBJECT);
    clReleaseMemObject(mem);

    // Errors.
    CHECK(create_from_egl(s.context, gl.dpy, EGL_NO_IMAGE_KHR, CL_MEM_READ_ONLY, nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_EGL_OBJECT_KHR);
    CHECK(create_from_egl(s.context, EGL_NO_DISPLAY, image, CL_MEM_READ_ONLY, nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_EGL_OBJECT_KHR);
    CHECK(clCreateFromGLTexture(s.context, CL_MEM_READ_ONLY, GL_TEXTURE_2D, 0, 424242, &err) == nullptr);
    CHECK(err == CL_INVALID_GL_OBJECT);
    CHECK(clCreateFromGLTexture(s.context, CL_MEM_READ_ONLY, GL_TEXTURE_CUBE_MAP_POSITIVE_X, 0, tex, &err) ==
          nullptr);
    CHECK(err == CL_INVALID_OPERATION);
    CHECK(clCreateFromGLTexture(s.context, CL_MEM_READ_ONLY, GL_TEXTURE_2D, 3, tex, &err) == nullptr);
    CHECK(err != CL_SUCCESS);
    cl_context plain = clCreateContext(nullptr, 1, &s.cl.device, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(clCreateFromGLTexture(plain, CL_MEM_READ_ONLY, GL_TEXTURE_2D, 0, tex, &err) == nullptr);
    CHECK(err == CL_INVALID_CONTEXT);
    clReleaseContext(plain);

    // The display renders in software: only CPU devices pair with it.
    const cl_context_properties props[] = {
        CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(s.cl.platform),
        CL_GL_CONTEXT_KHR,   reinterpret_cast<cl_context_properties>(gl.ctx),
        CL_EGL_DISPLAY_KHR,  reinterpret_cast<cl_context_properties>(gl.dpy),
        0};
    size_t bytes = 0;
    REQUIRE(gl_context_info(props, CL_DEVICES_FOR_GL_CONTEXT_KHR, 0, nullptr, &bytes) == CL_SUCCESS);
    std::vector<cl_device_id> devices(bytes / sizeof(cl_device_id));
    REQUIRE(gl_context_info(props, CL_DEVICES_FOR_GL_CONTEXT_KHR, bytes, devices.data(), nullptr) == CL_SUCCESS);
    REQUIRE_FALSE(devices.empty());
    for (cl_device_id d : devices) {
        cl_device_type t = 0;
        clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, nullptr);
        CHECK((t & CL_DEVICE_TYPE_CPU) != 0);
    }
    // A GL context that is not one.
    const cl_context_properties bogus[] = {
        CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(s.cl.platform),
        CL_GL_CONTEXT_KHR,   reinterpret_cast<cl_context_properties>(&bytes),
        CL_EGL_DISPLAY_KHR,  reinterpret_cast<cl_context_properties>(gl.dpy),
        0};
    CHECK(clCreateContext(bogus, 1, &s.cl.device, nullptr, nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR);

    destroy_image(gl.dpy, image);
    glDeleteTextures(1, &tex);
}

TEST_CASE("GL renderbuffers and clCreateContextFromType", "[vm][gl]") {
    Gl gl;
    NEED_GL(gl);
    ClPick cl;
    REQUIRE(cl.platform);
    const cl_context_properties props[] = {
        CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(cl.platform),
        CL_GL_CONTEXT_KHR,   reinterpret_cast<cl_context_properties>(gl.ctx),
        CL_EGL_DISPLAY_KHR,  reinterpret_cast<cl_context_properties>(gl.dpy),
        0};
    cl_int err = CL_SUCCESS;
    cl_context context = clCreateContextFromType(props, CL_DEVICE_TYPE_CPU, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_device_id device = nullptr;
    REQUIRE(clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof device, &device, nullptr) == CL_SUCCESS);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);

    // A renderbuffer GL clears to a colour.
    GLuint rb = 0, fbo = 0;
    glGenRenderbuffers(1, &rb);
    glBindRenderbuffer(GL_RENDERBUFFER, rb);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, W, H);
    glBindRenderbuffer(GL_RENDERBUFFER, 0);
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, rb);
    REQUIRE(glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE);
    glClearColor(0.2f, 0.4f, 0.6f, 0.8f);
    glClear(GL_COLOR_BUFFER_BIT);
    std::vector<uint8_t> expected(static_cast<size_t>(W) * H * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, W, H, GL_RGBA, GL_UNSIGNED_BYTE, expected.data());
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glFinish();

    cl_mem mem = clCreateFromGLRenderbuffer(context, CL_MEM_READ_ONLY, rb, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_gl_object_type type = 0;
    cl_GLuint name = 0;
    CHECK(clGetGLObjectInfo(mem, &type, &name) == CL_SUCCESS);
    CHECK(type == CL_GL_OBJECT_RENDERBUFFER);
    CHECK(name == rb);
    cl_GLenum target = 0;
    CHECK(clGetGLTextureInfo(mem, CL_GL_TEXTURE_TARGET, sizeof target, &target, nullptr) == CL_INVALID_GL_OBJECT);
    CHECK(read_through_cl(queue, mem, expected.size()) == expected);

    clReleaseMemObject(mem);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    glDeleteFramebuffers(1, &fbo);
    glDeleteRenderbuffers(1, &rb);
}
