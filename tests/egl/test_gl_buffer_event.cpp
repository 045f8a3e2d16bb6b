// clCreateFromGLBuffer (EGL_MESA_gl_interop), cl_khr_gl_event
// (clCreateEventFromGLsyncKHR) and a producer fence that never signals, on
// the VM lane's llvmpipe.
#include <dirent.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/dma-buf.h>

#include <chrono>

#include "dmabuf_source.hpp"
#include "gl_share.hpp"

using namespace egltest;

namespace {

int open_fds() {
    int n = 0;
    if (DIR *d = opendir("/proc/self/fd")) {
        while (readdir(d)) ++n;
        closedir(d);
    }
    return n;
}

const char *add_source = R"CLC(
__kernel void add(__global uchar *p, uchar v) { p[get_global_id(0)] += v; }
)CLC";

}  // namespace

TEST_CASE("GL buffers: clCreateFromGLBuffer, GL -> CL -> GL", "[vm][gl][buffer]") {
    Gl gl;
    NEED_GL(gl);
    Shared s(gl);
    constexpr size_t N = 4096 + 333;
    std::vector<uint8_t> data(N);
    for (size_t i = 0; i < N; ++i) data[i] = static_cast<uint8_t>(i * 31 + 7);
    GLuint buf = 0;
    glGenBuffers(1, &buf);
    glBindBuffer(GL_ARRAY_BUFFER, buf);
    glBufferData(GL_ARRAY_BUFFER, N, data.data(), GL_DYNAMIC_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    glFinish();

    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateFromGLBuffer(s.context, CL_MEM_READ_WRITE, buf, &err);
    REQUIRE(err == CL_SUCCESS);
    size_t size = 0;
    clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, nullptr);
    CHECK(size >= N);
    cl_gl_object_type type = 0;
    cl_GLuint name = 0;
    CHECK(clGetGLObjectInfo(mem, &type, &name) == CL_SUCCESS);
    CHECK(type == CL_GL_OBJECT_BUFFER);
    CHECK(name == buf);
    cl_GLenum target = 0;
    CHECK(clGetGLTextureInfo(mem, CL_GL_TEXTURE_TARGET, sizeof target, &target, nullptr) == CL_INVALID_GL_OBJECT);

    cl_program program = clCreateProgramWithSource(s.context, 1, &add_source, nullptr, &err);
    REQUIRE(clBuildProgram(program, 1, &s.cl.device, nullptr, nullptr, nullptr) == CL_SUCCESS);
    cl_kernel add = clCreateKernel(program, "add", &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    std::vector<uint8_t> seen(N);
    REQUIRE(clEnqueueReadBuffer(s.queue, mem, CL_TRUE, 0, N, seen.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(seen == data);
    const cl_uchar three = 3;
    clSetKernelArg(add, 0, sizeof mem, &mem);
    clSetKernelArg(add, 1, sizeof three, &three);
    const size_t global = N;
    REQUIRE(clEnqueueNDRangeKernel(s.queue, add, 1, nullptr, &global, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(s.queue) == CL_SUCCESS);

    glBindBuffer(GL_ARRAY_BUFFER, buf);
    const auto *gl_view = static_cast<const uint8_t *>(glMapBufferRange(GL_ARRAY_BUFFER, 0, N, GL_MAP_READ_BIT));
    REQUIRE(gl_view);
    int bad = 0;
    for (size_t i = 0; i < N; ++i) bad += gl_view[i] != static_cast<uint8_t>(data[i] + 3);
    glUnmapBuffer(GL_ARRAY_BUFFER);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    CHECK(bad == 0);
    std::printf("GL buffer %zu bytes: CL read GL's bytes, GL read CL's writes (%d mismatches)\n", N, bad);
    clReleaseMemObject(mem);

    // Errors: no buffer, not a buffer, bad flags, a context without GL.
    CHECK(clCreateFromGLBuffer(s.context, CL_MEM_READ_WRITE, 0, &err) == nullptr);
    CHECK(err == CL_INVALID_GL_OBJECT);
    CHECK(clCreateFromGLBuffer(s.context, CL_MEM_READ_WRITE, 424242, &err) == nullptr);
    CHECK(err == CL_INVALID_GL_OBJECT);
    CHECK(clCreateFromGLBuffer(s.context, CL_MEM_USE_HOST_PTR, buf, &err) == nullptr);
    CHECK(err == CL_INVALID_VALUE);
    cl_context plain = clCreateContext(nullptr, 1, &s.cl.device, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(clCreateFromGLBuffer(plain, CL_MEM_READ_WRITE, buf, &err) == nullptr);
    CHECK(err == CL_INVALID_CONTEXT);
    clReleaseContext(plain);
    clReleaseKernel(add);
    clReleaseProgram(program);
    glDeleteBuffers(1, &buf);
}

TEST_CASE("cl_khr_gl_event: an event from a GL sync gates the acquire", "[vm][gl][event]") {
    Gl gl;
    NEED_GL(gl);
    Shared s(gl);
    CHECK(has_word(platform_string(s.cl.platform, CL_PLATFORM_EXTENSIONS), "cl_khr_gl_event"));
    auto from_sync = reinterpret_cast<decltype(&::clCreateEventFromGLsyncKHR)>(
        clGetExtensionFunctionAddressForPlatform(s.cl.platform, "clCreateEventFromGLsyncKHR"));
    REQUIRE(from_sync);

    const Format &f = formats[2];
    const auto pixels = make_pixels(f, 11);
    GLuint tex = make_texture(f, nullptr);
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateFromGLTexture(s.context, CL_MEM_READ_ONLY, GL_TEXTURE_2D, 0, tex, &err);
    REQUIRE(err == CL_SUCCESS);

    // GL writes, fences, flushes: no glFinish; the event orders the acquire after the write.
    glBindTexture(GL_TEXTURE_2D, tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, W, H, f.format, f.type, pixels.data());
    glBindTexture(GL_TEXTURE_2D, 0);
    GLsync sync = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    glFlush();
    cl_event gl_done = from_sync(s.context, reinterpret_cast<cl_GLsync>(sync), &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(gl_done);
    cl_command_type ctype = 0;
    CHECK(clGetEventInfo(gl_done, CL_EVENT_COMMAND_TYPE, sizeof ctype, &ctype, nullptr) == CL_SUCCESS);
    CHECK(ctype == CL_COMMAND_GL_FENCE_SYNC_OBJECT_KHR);
    const auto start = std::chrono::steady_clock::now();
    REQUIRE(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 1, &gl_done, nullptr) == CL_SUCCESS);
    std::vector<uint8_t> seen(pixels.size());
    const size_t origin[3] = {0, 0, 0}, region[3] = {W, H, 1};
    REQUIRE(clEnqueueReadImage(s.queue, mem, CL_TRUE, origin, region, 0, 0, seen.data(), 0, nullptr, nullptr) ==
            CL_SUCCESS);
    REQUIRE(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(s.queue) == CL_SUCCESS);
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
    CHECK(seen == pixels);
    cl_int status = 1;
    CHECK(clGetEventInfo(gl_done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) == CL_SUCCESS);
    CHECK(status == CL_COMPLETE);
    std::printf("gl_event: acquire gated by a GLsync event, read back bit-exact, %lld us\n",
                static_cast<long long>(us.count()));
    clReleaseEvent(gl_done);
    glDeleteSync(sync);

    // Errors: NULL and a name that is no sync (the producer's context is current: checked at once).
    CHECK(from_sync(s.context, nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_GL_OBJECT);
    CHECK(from_sync(s.context, reinterpret_cast<cl_GLsync>(0x1234), &err) == nullptr);
    CHECK(err == CL_INVALID_GL_OBJECT);
    cl_context plain = clCreateContext(nullptr, 1, &s.cl.device, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    GLsync other = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    CHECK(from_sync(plain, reinterpret_cast<cl_GLsync>(other), &err) == nullptr);
    CHECK(err == CL_INVALID_CONTEXT);
    glDeleteSync(other);
    clReleaseContext(plain);
    clReleaseMemObject(mem);
    glDeleteTextures(1, &tex);
}

// A fence that never signals on the GL texture's dma-buf: a vgem fence
// (unsignalled), exported as a sync_file and imported into the texture's
// dma-buf as a write fence.  The acquire must fail within
// CLDMABUF_FENCE_TIMEOUT_MS (default 1000 ms; vgem itself gives up after
// ~10 s), later commands still run, nothing leaks.
TEST_CASE("a producer fence that never signals times out cleanly", "[vm][gl][fence]") {
    Gl gl;
    NEED_GL(gl);
    using namespace cldmabuf::test;
    if (!available(DmabufKind::vgem)) {
        if (egl_required()) FAIL("no vgem");
        SKIP("no vgem");
    }
    Shared s(gl);
    const Format &f = formats[2];
    const auto pixels = make_pixels(f, 13);
    GLuint tex = make_texture(f, &pixels);
    glFinish();
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateFromGLTexture(s.context, CL_MEM_READ_ONLY, GL_TEXTURE_2D, 0, tex, &err);
    REQUIRE(err == CL_SUCCESS);
    // Everything the timeout path opens must be closed again: count with the import alive.
    const int fds_before = open_fds();

    // The texture's dma-buf, exported by the test itself (the same buffer the layer imported).
    auto create_image = reinterpret_cast<PFNEGLCREATEIMAGEKHRPROC>(eglGetProcAddress("eglCreateImageKHR"));
    auto destroy_image = reinterpret_cast<PFNEGLDESTROYIMAGEKHRPROC>(eglGetProcAddress("eglDestroyImageKHR"));
    auto export_image =
        reinterpret_cast<PFNEGLEXPORTDMABUFIMAGEMESAPROC>(eglGetProcAddress("eglExportDMABUFImageMESA"));
    const EGLint attribs[] = {EGL_GL_TEXTURE_LEVEL_KHR, 0, EGL_IMAGE_PRESERVED_KHR, EGL_TRUE, EGL_NONE};
    EGLImageKHR image = create_image(gl.dpy, gl.ctx, EGL_GL_TEXTURE_2D_KHR,
                                     reinterpret_cast<EGLClientBuffer>(static_cast<uintptr_t>(tex)), attribs);
    REQUIRE(image != EGL_NO_IMAGE_KHR);
    int tex_fd = -1;
    EGLint stride = 0, offset = 0;
    REQUIRE(export_image(gl.dpy, image, &tex_fd, &stride, &offset));

    Dmabuf fence_holder = allocate(DmabufKind::vgem, 4096);
    const uint32_t fence = attach_fence(fence_holder, true);
    dma_buf_export_sync_file exp{};
    exp.flags = DMA_BUF_SYNC_WRITE;
    exp.fd = -1;
    REQUIRE(ioctl(fence_holder.fd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &exp) == 0);
    dma_buf_import_sync_file imp{};
    imp.flags = DMA_BUF_SYNC_WRITE;
    imp.fd = exp.fd;
    REQUIRE(ioctl(tex_fd, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &imp) == 0);
    close(exp.fd);

    const auto start = std::chrono::steady_clock::now();
    cl_event acquired = nullptr;
    REQUIRE(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, &acquired) == CL_SUCCESS);
    clWaitForEvents(1, &acquired);  // may report the failure; the status below is what counts
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    cl_int status = 1;
    CHECK(clGetEventInfo(acquired, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) ==
          CL_SUCCESS);
    CHECK(status < 0);
    CHECK(ms >= 500);
    CHECK(ms < 9000);  // the layer's bound, not vgem's own 10 s timeout
    std::printf("never-signalling fence: acquire failed with %d after %lld ms\n", status, static_cast<long long>(ms));
    clReleaseEvent(acquired);
    // clFinish reports the failed step once (docs/layer-rules.md, "When host
    // work fails"); until it has, later layer steps of the queue are refused.
    CHECK(clFinish(s.queue) == CL_OUT_OF_RESOURCES);

    // Later commands still run.
    signal_fence(fence_holder, fence);
    REQUIRE(clEnqueueAcquireGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    std::vector<uint8_t> seen(pixels.size());
    const size_t origin[3] = {0, 0, 0}, region[3] = {W, H, 1};
    CHECK(clEnqueueReadImage(s.queue, mem, CL_TRUE, origin, region, 0, 0, seen.data(), 0, nullptr, nullptr) ==
          CL_SUCCESS);
    CHECK(clEnqueueReleaseGLObjects(s.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(clFinish(s.queue) == CL_SUCCESS);
    CHECK(seen == pixels);

    close(tex_fd);
    destroy_image(gl.dpy, image);
    fence_holder.reset();
    const int fds_after = open_fds();
    CHECK(fds_after <= fds_before);
    clReleaseMemObject(mem);
    clFinish(s.queue);
    glDeleteTextures(1, &tex);
}
