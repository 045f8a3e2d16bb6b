// VA-API surfaces in OpenCL on any ICD (docs/va-api.md): the calls FFmpeg's
// hwcontext_opencl makes, written out.  A VA display on a render node, the
// devices that pair with it, a context sharing it, an NV12 surface filled
// through vaDeriveImage, its luma plane as a CL image, acquire, a kernel that
// inverts the luma in place, release, and the CPU reading the result back.
//
//   OPENCL_LAYERS=/path/libcldmabuf.so ./va-to-cl [/dev/dri/renderD128]
// with a VA driver that exports DRM PRIME 2 surfaces (iHD, radeonsi, or the
// test suite's virtual one: LIBVA_DRIVER_NAME=vva LIBVA_DRIVERS_PATH=build/tests/va).
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_va_api_media_sharing_intel.h>
#include <fcntl.h>
#include <unistd.h>
#include <va/va.h>
#include <va/va_drm.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

int fail(const char *what, long code) {
    std::fprintf(stderr, "va-to-cl: %s failed (%ld)\n", what, code);
    return 1;
}

template <typename Fn>
Fn lookup(cl_platform_id platform, const char *name) {
    return reinterpret_cast<Fn>(clGetExtensionFunctionAddressForPlatform(platform, name));
}

const char *kernel_src =
    "kernel void invert(read_only image2d_t in, write_only image2d_t out) {\n"
    "  int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
    "  float v = read_imagef(in, p).x;\n"
    "  write_imagef(out, p, (float4)(1.0f - v, 0.0f, 0.0f, 1.0f));\n"
    "}\n";

}  // namespace

int main(int argc, char **argv) {
    const char *node = argc > 1 ? argv[1] : "/dev/dri/renderD128";
    const unsigned w = 320, h = 240;

    // 1. The VA display and one NV12 surface, filled by the CPU (a decoder's job).
    const int fd = open(node, O_RDWR | O_CLOEXEC);
    if (fd < 0) return fail(node, errno);
    VADisplay dpy = vaGetDisplayDRM(fd);
    int major = 0, minor = 0;
    if (VAStatus st = vaInitialize(dpy, &major, &minor); st != VA_STATUS_SUCCESS) return fail("vaInitialize", st);
    VASurfaceID surface = VA_INVALID_SURFACE;
    if (VAStatus st = vaCreateSurfaces(dpy, VA_RT_FORMAT_YUV420, w, h, &surface, 1, nullptr, 0); st)
        return fail("vaCreateSurfaces", st);
    VAImage image{};
    void *pixels = nullptr;
    if (vaDeriveImage(dpy, surface, &image) || vaMapBuffer(dpy, image.buf, &pixels)) return fail("vaDeriveImage", 0);
    for (unsigned y = 0; y < h; ++y)
        for (unsigned x = 0; x < w; ++x)
            static_cast<unsigned char *>(pixels)[image.offsets[0] + y * image.pitches[0] + x] = (x + y) & 0xff;
    vaUnmapBuffer(dpy, image.buf);

    // 2. A platform with the extension and a device that pairs with the display.
    cl_uint np = 0;
    clGetPlatformIDs(0, nullptr, &np);
    std::vector<cl_platform_id> platforms(np);
    clGetPlatformIDs(np, platforms.data(), nullptr);
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    for (cl_platform_id p : platforms) {
        auto devices_for = lookup<clGetDeviceIDsFromVA_APIMediaAdapterINTEL_fn>(p, "clGetDeviceIDsFromVA_APIMediaAdapterINTEL");
        if (devices_for && devices_for(p, CL_VA_API_DISPLAY_INTEL, dpy, CL_PREFERRED_DEVICES_FOR_VA_API_INTEL, 1,
                                       &device, nullptr) == CL_SUCCESS) {
            platform = p;
            break;
        }
    }
    if (!platform) return fail("no platform pairs with the VA display (is OPENCL_LAYERS set?)", 0);
    auto create = lookup<clCreateFromVA_APIMediaSurfaceINTEL_fn>(platform, "clCreateFromVA_APIMediaSurfaceINTEL");
    auto acquire = lookup<clEnqueueAcquireVA_APIMediaSurfacesINTEL_fn>(platform, "clEnqueueAcquireVA_APIMediaSurfacesINTEL");
    auto release = lookup<clEnqueueReleaseVA_APIMediaSurfacesINTEL_fn>(platform, "clEnqueueReleaseVA_APIMediaSurfacesINTEL");

    // 3. A context sharing the display (the layer takes the property off before the ICD sees it).
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform),
                                           CL_CONTEXT_VA_API_DISPLAY_INTEL, reinterpret_cast<cl_context_properties>(dpy),
                                           CL_CONTEXT_INTEROP_USER_SYNC, CL_FALSE, 0};
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(props, 1, &device, nullptr, nullptr, &err);
    if (err) return fail("clCreateContext", err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, nullptr, &err);
    if (err) return fail("clCreateCommandQueueWithProperties", err);

    // 4. Plane 0 (luma) twice: read and written by one kernel, in place.
    cl_mem luma_in = create(ctx, CL_MEM_READ_ONLY, &surface, 0, &err);
    if (err) return fail("clCreateFromVA_APIMediaSurfaceINTEL", err);
    cl_mem luma_out = create(ctx, CL_MEM_WRITE_ONLY, &surface, 0, &err);
    if (err) return fail("clCreateFromVA_APIMediaSurfaceINTEL", err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &kernel_src, nullptr, &err);
    if (err || clBuildProgram(prog, 1, &device, "", nullptr, nullptr)) return fail("clBuildProgram", err);
    cl_kernel k = clCreateKernel(prog, "invert", &err);
    clSetKernelArg(k, 0, sizeof luma_in, &luma_in);
    clSetKernelArg(k, 1, sizeof luma_out, &luma_out);
    const cl_mem both[] = {luma_in, luma_out};
    const size_t global[2] = {w, h};
    if ((err = acquire(q, 2, both, 0, nullptr, nullptr))) return fail("acquire", err);  // vaSyncSurface + handoff
    if ((err = clEnqueueNDRangeKernel(q, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr)))
        return fail("clEnqueueNDRangeKernel", err);
    if ((err = release(q, 2, both, 0, nullptr, nullptr))) return fail("release", err);
    clFinish(q);

    // 5. The CPU sees the kernel's result in the surface.
    size_t bad = 0;
    if (vaMapBuffer(dpy, image.buf, &pixels)) return fail("vaMapBuffer", 0);
    for (unsigned y = 0; y < h; ++y)
        for (unsigned x = 0; x < w; ++x)
            bad += static_cast<unsigned char *>(pixels)[image.offsets[0] + y * image.pitches[0] + x] !=
                   static_cast<unsigned char>(255 - ((x + y) & 0xff));
    vaUnmapBuffer(dpy, image.buf);
    std::printf("va-to-cl: %ux%u NV12 luma inverted by OpenCL in the VA surface: %zu wrong bytes\n", w, h, bad);

    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseMemObject(luma_in);
    clReleaseMemObject(luma_out);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    vaDestroyImage(dpy, image.image_id);
    vaDestroySurfaces(dpy, &surface, 1);
    vaTerminate(dpy);
    close(fd);
    return bad ? 1 : 0;
}
