// EGL/GLES producer -> OpenCL kernel -> back to GL, zero-copy, through the
// cldmabuf layer (cl_khr_gl_sharing on EGL; docs/egl.md).
//
//   1. GL renders a gradient into texture `src` (surfaceless EGL, GLES 3).
//   2. OpenCL shares `src` and `dst` (clCreateFromGLTexture), acquires them,
//      runs a kernel that turns `src` into a grey-scale negative in `dst`, and
//      releases them.  The layer exports both textures as dma-bufs and imports
//      them in place: no pixel is copied between the APIs.
//   3. GL reads `dst` back through an FBO and checks every pixel.
//
//   OPENCL_LAYERS=$PWD/build/layer/libcldmabuf.so CLDMABUF_LOG=info build/examples/egl-to-cl
//
// Needs an EGL with EGL_MESA_platform_surfaceless and
// EGL_MESA_image_dma_buf_export (Mesa; the VM lane's llvmpipe), and a CPU
// OpenCL device for a software renderer (PoCL, rusticl on llvmpipe).
// CLDMABUF_TEST_PLATFORM picks the OpenCL platform by a substring of its name.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_gl.h>

#include "CL/cl_ext_cldmabuf.h"  // CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF: how the layer shared a texture

#define EGL_NO_X11 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int W = 256, H = 128;

int die(const char *what, long code = 0) {
    std::fprintf(stderr, "egl-to-cl: %s (%ld)\n", what, code);
    return 1;
}

GLuint shader(GLenum type, const char *src) {
    GLuint s = glCreateShader(type);
    glShaderSource(s, 1, &src, nullptr);
    glCompileShader(s);
    GLint ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    return ok ? s : 0;
}

GLuint texture() {
    GLuint t = 0;
    glGenTextures(1, &t);
    glBindTexture(GL_TEXTURE_2D, t);
    glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA8, W, H);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glBindTexture(GL_TEXTURE_2D, 0);
    return t;
}

std::vector<unsigned char> read_back(GLuint fbo, GLuint tex) {
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
    std::vector<unsigned char> px(static_cast<size_t>(W) * H * 4);
    glReadPixels(0, 0, W, H, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
    return px;
}

const char *vs = "#version 300 es\n"
                 "out vec2 uv;\n"
                 "void main() {\n"
                 "  vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));\n"
                 "  uv = p * 0.5 + 0.0; gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);\n"
                 "}\n";
const char *fs = "#version 300 es\n"
                 "precision highp float; in vec2 uv; out vec4 color;\n"
                 "void main() { color = vec4(uv.x, uv.y, 0.5 + 0.5 * sin(uv.x * 20.0), 1.0); }\n";

const char *kernel_src = R"CLC(
__kernel void negative_grey(read_only image2d_t src, write_only image2d_t dst) {
    const int2 p = (int2)(get_global_id(0), get_global_id(1));
    const float4 c = read_imagef(src, p);
    const float g = 1.0f - (0.25f * c.x + 0.5f * c.y + 0.25f * c.z);
    write_imagef(dst, p, (float4)(g, g, g, 1.0f));
}
)CLC";

}  // namespace

int main() {
    // ---- EGL + GLES 3, surfaceless ----
    auto get_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    if (!get_display) return die("no eglGetPlatformDisplayEXT");
    EGLDisplay dpy = get_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, nullptr, nullptr)) return die("no surfaceless EGL display");
    eglBindAPI(EGL_OPENGL_ES_API);
    const EGLint ctx_attribs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_NONE};
    EGLContext ctx = eglCreateContext(dpy, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, ctx_attribs);
    if (ctx == EGL_NO_CONTEXT || !eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx))
        return die("no GLES 3 context");
    std::printf("GL: %s\n", reinterpret_cast<const char *>(glGetString(GL_RENDERER)));

    // ---- 1. GL renders the source ----
    GLuint src_tex = texture(), dst_tex = texture(), fbo = 0;
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, src_tex, 0);
    GLuint prog = glCreateProgram();
    GLuint v = shader(GL_VERTEX_SHADER, vs), f = shader(GL_FRAGMENT_SHADER, fs);
    if (!v || !f) return die("shader compile failed");
    glAttachShader(prog, v);
    glAttachShader(prog, f);
    glLinkProgram(prog);
    glUseProgram(prog);
    GLuint vao = 0;
    glGenVertexArrays(1, &vao);
    glBindVertexArray(vao);
    glViewport(0, 0, W, H);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glFinish();  // cl_khr_gl_sharing: GL work is complete before clEnqueueAcquireGLObjects
    const auto src_pixels = read_back(fbo, src_tex);

    // ---- 2. OpenCL on the same textures ----
    cl_uint n = 0;
    clGetPlatformIDs(0, nullptr, &n);
    std::vector<cl_platform_id> platforms(n);
    clGetPlatformIDs(n, platforms.data(), nullptr);
    const char *want = std::getenv("CLDMABUF_TEST_PLATFORM");
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    for (cl_platform_id p : platforms) {
        char name[256] = "";
        clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
        if (want && *want && !std::strstr(name, want)) continue;
        // The device that can share with this GL context (the layer pairs a
        // software renderer with CPU devices only).
        const cl_context_properties probe[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(p),
                                               CL_GL_CONTEXT_KHR, reinterpret_cast<cl_context_properties>(ctx),
                                               CL_EGL_DISPLAY_KHR, reinterpret_cast<cl_context_properties>(dpy), 0};
        auto gl_context_info = reinterpret_cast<clGetGLContextInfoKHR_fn>(
            clGetExtensionFunctionAddressForPlatform(p, "clGetGLContextInfoKHR"));
        size_t bytes = 0;
        if (gl_context_info &&
            gl_context_info(probe, CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR, sizeof device, &device, &bytes) ==
                CL_SUCCESS &&
            bytes) {
            platform = p;
            std::printf("OpenCL: %s\n", name);
            break;
        }
    }
    if (!platform) return die("no OpenCL device shares with this GL context (is OPENCL_LAYERS set?)");
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform),
                                           CL_GL_CONTEXT_KHR, reinterpret_cast<cl_context_properties>(ctx),
                                           CL_EGL_DISPLAY_KHR, reinterpret_cast<cl_context_properties>(dpy), 0};
    cl_int err = CL_SUCCESS;
    cl_context context = clCreateContext(props, 1, &device, nullptr, nullptr, &err);
    if (!context) return die("clCreateContext with GL sharing", err);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, nullptr, &err);
    cl_program program = clCreateProgramWithSource(context, 1, &kernel_src, nullptr, &err);
    if ((err = clBuildProgram(program, 1, &device, nullptr, nullptr, nullptr)) != CL_SUCCESS)
        return die("clBuildProgram", err);
    cl_kernel kernel = clCreateKernel(program, "negative_grey", &err);

    cl_mem src = clCreateFromGLTexture(context, CL_MEM_READ_ONLY, GL_TEXTURE_2D, 0, src_tex, &err);
    if (!src) return die("clCreateFromGLTexture(src)", err);
    cl_mem dst = clCreateFromGLTexture(context, CL_MEM_WRITE_ONLY, GL_TEXTURE_2D, 0, dst_tex, &err);
    if (!dst) return die("clCreateFromGLTexture(dst)", err);
    cl_mem objects[2] = {src, dst};
    // Zero-copy check: the layer says how the ICD reaches each texture's
    // dma-buf; only CL_DMA_BUF_ROUTE_COPY_CLDMABUF would copy.
    for (cl_mem m : objects) {
        cl_uint route = CL_DMA_BUF_ROUTE_COPY_CLDMABUF;
        clGetMemObjectInfo(m, CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF, sizeof route, &route, nullptr);
        std::printf("%s: %s\n", m == src ? "src" : "dst",
                    route == CL_DMA_BUF_ROUTE_COPY_CLDMABUF ? "device copy (not zero-copy)" : "zero-copy");
    }
    clSetKernelArg(kernel, 0, sizeof src, &src);
    clSetKernelArg(kernel, 1, sizeof dst, &dst);
    const size_t global[2] = {W, H};
    if ((err = clEnqueueAcquireGLObjects(queue, 2, objects, 0, nullptr, nullptr)) != CL_SUCCESS)
        return die("clEnqueueAcquireGLObjects", err);
    if ((err = clEnqueueNDRangeKernel(queue, kernel, 2, nullptr, global, nullptr, 0, nullptr, nullptr)) != CL_SUCCESS)
        return die("clEnqueueNDRangeKernel", err);
    if ((err = clEnqueueReleaseGLObjects(queue, 2, objects, 0, nullptr, nullptr)) != CL_SUCCESS)
        return die("clEnqueueReleaseGLObjects", err);
    clFinish(queue);  // OpenCL work is complete before GL uses the textures again

    // What a hand-over costs: acquire + release of both textures, waited for.
    constexpr int rounds = 100;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < rounds; ++i) {
        clEnqueueAcquireGLObjects(queue, 2, objects, 0, nullptr, nullptr);
        clEnqueueReleaseGLObjects(queue, 2, objects, 0, nullptr, nullptr);
        clFinish(queue);
    }
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
    std::printf("acquire + release of 2 textures: %.1f us per round (%d rounds)\n",
                static_cast<double>(us.count()) / rounds, rounds);

    // ---- 3. GL sees the kernel's result ----
    const auto dst_pixels = read_back(fbo, dst_tex);
    int bad = 0;
    for (size_t i = 0; i < dst_pixels.size(); i += 4) {
        const float g = 1.0f - (0.25f * src_pixels[i] + 0.5f * src_pixels[i + 1] + 0.25f * src_pixels[i + 2]) / 255.0f;
        const int want_g = static_cast<int>(g * 255.0f + 0.5f);
        for (int c = 0; c < 3; ++c) bad += std::abs(dst_pixels[i + c] - want_g) > 1;
        bad += dst_pixels[i + 3] != 255;
    }
    std::printf("%dx%d RGBA8: GL -> OpenCL -> GL, %s\n", W, H, bad ? "MISMATCH" : "every pixel as expected");

    clReleaseMemObject(src);
    clReleaseMemObject(dst);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    glDeleteTextures(1, &src_tex);
    glDeleteTextures(1, &dst_tex);
    glDeleteFramebuffers(1, &fbo);
    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(dpy, ctx);
    eglTerminate(dpy);
    return bad ? 1 : 0;
}
