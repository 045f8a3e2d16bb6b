// bench-va-map: what FFmpeg pays per frame to map a VA surface into OpenCL
// through the layer (issue #30, docs/va-api.md): clCreateFromVA_APIMediaSurfaceINTEL
// per plane + acquire + release + clFinish + clReleaseMemObject, against the
// ICD's own images over host memory of the same planes (clCreateImage with
// CL_MEM_USE_HOST_PTR + two markers + clFinish + release).  The two
// alternate round by round in one process, so a ratio never mixes two load
// situations.  Also the round as a share of a 60 fps frame period (target
// <= 1 % at 4K).
//
// Run with the layer (OPENCL_LAYERS), the virtual VA driver (LIBVA_DRIVER_NAME=vva,
// LIBVA_DRIVERS_PATH=<build>/tests/va) and, on the host, LD_PRELOAD=libvgen9.so.
//
//   bench-va-map [--rounds N] [--only layer|floor]
//
// --only runs one side alone (for callgrind, perf stat, strace -c: what one
// round of that side costs); its ratio line is then meaningless.
#include <CL/cl_va_api_media_sharing_intel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "cl_fixture.hpp"
#include "../tests/va/va_display.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void check(cl_int err, const char *what) {
    if (err != CL_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(err));
}

bool supported(cl_context ctx, const cl_image_format &f) {
    cl_uint n = 0;
    clGetSupportedImageFormats(ctx, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 0, nullptr, &n);
    std::vector<cl_image_format> list(n);
    if (n) clGetSupportedImageFormats(ctx, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, n, list.data(), nullptr);
    for (const auto &g : list)
        if (g.image_channel_order == f.image_channel_order && g.image_channel_data_type == f.image_channel_data_type)
            return true;
    return false;
}

struct Size {
    const char *name;
    unsigned w, h;
};

}  // namespace

int main(int argc, char **argv) {
    int rounds = 100;
    bool run_layer = true, run_floor = true;
    for (int i = 1; i + 1 < argc; ++i) {
        if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
        if (!std::strcmp(argv[i], "--only")) {
            run_layer = !std::strcmp(argv[i + 1], "layer");
            run_floor = !std::strcmp(argv[i + 1], "floor");
        }
    }
    try {
        vatest::Display d;
        if (!d.dpy) throw std::runtime_error("no VA display: " + d.problem);
        e2e::ClEnv env;
        auto create = reinterpret_cast<clCreateFromVA_APIMediaSurfaceINTEL_fn>(
            clGetExtensionFunctionAddressForPlatform(env.platform, "clCreateFromVA_APIMediaSurfaceINTEL"));
        auto acquire = reinterpret_cast<clEnqueueAcquireVA_APIMediaSurfacesINTEL_fn>(
            clGetExtensionFunctionAddressForPlatform(env.platform, "clEnqueueAcquireVA_APIMediaSurfacesINTEL"));
        auto release = reinterpret_cast<clEnqueueReleaseVA_APIMediaSurfacesINTEL_fn>(
            clGetExtensionFunctionAddressForPlatform(env.platform, "clEnqueueReleaseVA_APIMediaSurfacesINTEL"));
        if (!create || !acquire || !release) throw std::runtime_error("cl_intel_va_api_media_sharing missing");
        const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(env.platform),
                                               CL_CONTEXT_VA_API_DISPLAY_INTEL, reinterpret_cast<cl_context_properties>(d.dpy),
                                               0};
        cl_int err = CL_SUCCESS;
        cl_context ctx = clCreateContext(props, 1, &env.device, nullptr, nullptr, &err);
        check(err, "clCreateContext");
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, env.device, nullptr, &err);
        check(err, "clCreateCommandQueueWithProperties");
        // FFmpeg maps both planes; an ICD without CL_RG (PoCL 3.1) gets the luma plane only.
        const bool chroma = supported(ctx, {CL_RG, CL_UNORM_INT8});
        std::printf("planes per frame: %s\n", chroma ? "2 (Y R8, UV RG8)" : "1 (Y R8; the ICD has no CL_RG)");
        for (const Size &s : {Size{"1080p", 1920, 1080}, Size{"4K", 3840, 2160}}) {
            vatest::Surface surface(d.dpy, VA_FOURCC_NV12, s.w, s.h);
            if (surface.id == VA_INVALID_SURFACE) throw std::runtime_error("vaCreateSurfaces failed");
            const cl_uint planes = chroma ? 2 : 1;
            // The floor: the ICD's own images over host memory of the same planes.
            const size_t pitch = (s.w + 63) & ~size_t{63};
            std::vector<unsigned char> host(pitch * s.h * 2 + 4096);
            unsigned char *base = reinterpret_cast<unsigned char *>((uintptr_t(host.data()) + 4095) & ~uintptr_t{4095});
            std::vector<double> layer_us, floor_us;
            for (int r = 0; r < rounds + 5; ++r) {
                // The layer: FFmpeg's opencl_map_from_vaapi + unmap.
                auto t0 = Clock::now();
                cl_mem m[2] = {};
                for (cl_uint p = 0; run_layer && p < planes; ++p) {
                    m[p] = create(ctx, CL_MEM_READ_WRITE, &surface.id, p, &err);
                    check(err, "clCreateFromVA_APIMediaSurfaceINTEL");
                }
                if (run_layer) {
                    check(acquire(q, planes, m, 0, nullptr, nullptr), "acquire");
                    check(release(q, planes, m, 0, nullptr, nullptr), "release");
                    check(clFinish(q), "clFinish");
                    for (cl_uint p = 0; p < planes; ++p) clReleaseMemObject(m[p]);
                }
                const double layer = us_since(t0);
                // The floor.
                t0 = Clock::now();
                cl_mem f[2] = {};
                for (cl_uint p = 0; run_floor && p < planes; ++p) {
                    const cl_image_format fmt = {cl_channel_order(p ? CL_RG : CL_R), CL_UNORM_INT8};
                    cl_image_desc desc{};
                    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
                    desc.image_width = p ? s.w / 2 : s.w;
                    desc.image_height = p ? s.h / 2 : s.h;
                    desc.image_row_pitch = pitch;
                    f[p] = clCreateImage(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, &fmt, &desc,
                                         base + (p ? pitch * s.h : 0), &err);
                    check(err, "clCreateImage");
                }
                if (run_floor) {
                    check(clEnqueueMarkerWithWaitList(q, 0, nullptr, nullptr), "marker");
                    check(clEnqueueMarkerWithWaitList(q, 0, nullptr, nullptr), "marker");
                    check(clFinish(q), "clFinish");
                    for (cl_uint p = 0; p < planes; ++p) clReleaseMemObject(f[p]);
                }
                const double floor = us_since(t0);
                if (r >= 5) {  // warm-up rounds left out
                    layer_us.push_back(layer);
                    floor_us.push_back(floor);
                }
            }
            const double lm = median(layer_us), fm = median(floor_us), ratio = fm > 0 ? lm / fm : 0;
            const double share = lm / (1e6 / 60.0) * 100.0;
            std::printf("%s NV12 (%d rounds): map+acquire+release+unmap %.1f us, ICD's own image %.1f us\n", s.name,
                        rounds, lm, fm);
            std::printf("RATIO va-map/%s = %.2f (vs the ICD's own image over host memory)\n", s.name, ratio);
            std::printf("RATIO va-map-frame-share/%s = %.3f %% of a 60 fps frame (target <= 1 %%) %s\n", s.name, share,
                        share <= 1.0 ? "met" : "MISS");
        }
        clReleaseCommandQueue(q);
        clReleaseContext(ctx);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench-va-map: %s\n", e.what());
        return 1;
    }
    return 0;
}
