// cl_intel_va_api_media_sharing through the layer (docs/va-api.md), end to
// end: the real ICD loader, the layer, libva and the virtual VA driver
// (tests/va/vva_driver.cpp) whose surfaces are real dma-bufs (the virtual
// Gen9's GEM objects on the host, dma-heap/udmabuf in the VM).  The calls
// and their order are FFmpeg's (libavutil/hwcontext_opencl.c): pairing,
// a context with the VA display, one image per plane, acquire, kernels,
// release.
#include <catch2/catch_test_macros.hpp>

#include <dlfcn.h>
#include <CL/cl_va_api_media_sharing_intel.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../e2e/cl_fixture.hpp"
#include "../e2e/layer_probe.hpp"
#include "va_display.hpp"
#include "vva_control.h"

using namespace e2e;
using vatest::Display;
using vatest::Planes;
using vatest::Surface;

namespace {

struct VaFns {
    clGetDeviceIDsFromVA_APIMediaAdapterINTEL_fn devices = nullptr;
    clCreateFromVA_APIMediaSurfaceINTEL_fn create = nullptr;
    clEnqueueAcquireVA_APIMediaSurfacesINTEL_fn acquire = nullptr;
    clEnqueueReleaseVA_APIMediaSurfacesINTEL_fn release = nullptr;
};

VaFns va_fns(cl_platform_id platform) {
    VaFns f;
    f.devices = reinterpret_cast<clGetDeviceIDsFromVA_APIMediaAdapterINTEL_fn>(
        clGetExtensionFunctionAddressForPlatform(platform, "clGetDeviceIDsFromVA_APIMediaAdapterINTEL"));
    f.create = reinterpret_cast<clCreateFromVA_APIMediaSurfaceINTEL_fn>(
        clGetExtensionFunctionAddressForPlatform(platform, "clCreateFromVA_APIMediaSurfaceINTEL"));
    f.acquire = reinterpret_cast<clEnqueueAcquireVA_APIMediaSurfacesINTEL_fn>(
        clGetExtensionFunctionAddressForPlatform(platform, "clEnqueueAcquireVA_APIMediaSurfacesINTEL"));
    f.release = reinterpret_cast<clEnqueueReleaseVA_APIMediaSurfacesINTEL_fn>(
        clGetExtensionFunctionAddressForPlatform(platform, "clEnqueueReleaseVA_APIMediaSurfacesINTEL"));
    REQUIRE(f.devices);
    REQUIRE(f.create);
    REQUIRE(f.acquire);
    REQUIRE(f.release);
    return f;
}

template <typename Fn>
Fn vva(const char *name) {
    auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
    REQUIRE(fn);  // the virtual driver is loaded (libva opens drivers RTLD_GLOBAL)
    return fn;
}

// Where the run names the virtual driver (tests/va/meson.build sets
// VVA_REQUIRED=1) a missing display is a failure, elsewhere a skip that says why.
#define REQUIRE_DISPLAY(d) \
    do { \
        if (!(d).dpy && std::getenv("VVA_REQUIRED")) FAIL("no VA display: " << (d).problem); \
        if (!(d).dpy) SKIP("no VA display: " << (d).problem); \
    } while (0)

// A context on the test device, shared with `dpy` the way FFmpeg makes it.
struct VaContext {
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    VaContext(const ClEnv &env, VADisplay dpy, cl_bool user_sync = CL_FALSE) {
        const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(env.platform),
                                               CL_CONTEXT_VA_API_DISPLAY_INTEL, reinterpret_cast<cl_context_properties>(dpy),
                                               CL_CONTEXT_INTEROP_USER_SYNC, user_sync, 0};
        cl_int err = CL_SUCCESS;
        context = clCreateContext(props, 1, &env.device, nullptr, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        queue = clCreateCommandQueueWithProperties(context, env.device, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
    }
    ~VaContext() {
        if (queue) clReleaseCommandQueue(queue);
        if (context) clReleaseContext(context);
    }
};

const char *kernels = R"CLC(
kernel void plane_to_buf(read_only image2d_t img, global ushort *out, int w, int ch, float scale) {
    int x = get_global_id(0), y = get_global_id(1);
    float4 p = read_imagef(img, (int2)(x, y));
    int i = (y * w + x) * ch;
    out[i] = (ushort)rint(p.x * scale);
    if (ch == 2) out[i + 1] = (ushort)rint(p.y * scale);
}
kernel void buf_to_plane(write_only image2d_t img, global const ushort *in, int w, int ch, float scale) {
    int x = get_global_id(0), y = get_global_id(1);
    int i = (y * w + x) * ch;
    write_imagef(img, (int2)(x, y), (float4)(in[i] / scale, ch == 2 ? in[i + 1] / scale : 0.0f, 0.0f, 1.0f));
}
)CLC";

cl_kernel build(const ClEnv &env, cl_context context, const char *name) {
    cl_int err = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(context, 1, &kernels, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(clBuildProgram(program, 1, &env.device, "", nullptr, nullptr) == CL_SUCCESS);
    cl_kernel k = clCreateKernel(program, name, &err);
    clReleaseProgram(program);
    REQUIRE(err == CL_SUCCESS);
    return k;
}

// Runs plane_to_buf (write=false) or buf_to_plane over one plane image.
void run_plane(const ClEnv &env, const VaContext &ctx, cl_mem image, std::vector<uint16_t> *samples, unsigned w,
               unsigned h, int channels, bool p010, bool write) {
    cl_int err = CL_SUCCESS;
    const size_t bytes = samples->size() * sizeof(uint16_t);
    cl_mem buf = clCreateBuffer(ctx.context, CL_MEM_READ_WRITE | (write ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                                write ? samples->data() : nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_kernel k = build(env, ctx.context, write ? "buf_to_plane" : "plane_to_buf");
    const int wi = static_cast<int>(w);
    const float scale = p010 ? 65535.0f : 255.0f;
    REQUIRE(clSetKernelArg(k, 0, sizeof image, &image) == CL_SUCCESS);
    REQUIRE(clSetKernelArg(k, 1, sizeof buf, &buf) == CL_SUCCESS);
    REQUIRE(clSetKernelArg(k, 2, sizeof wi, &wi) == CL_SUCCESS);
    REQUIRE(clSetKernelArg(k, 3, sizeof channels, &channels) == CL_SUCCESS);
    REQUIRE(clSetKernelArg(k, 4, sizeof scale, &scale) == CL_SUCCESS);
    const size_t global[2] = {w, h};
    REQUIRE(clEnqueueNDRangeKernel(ctx.queue, k, 2, nullptr, global, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
    if (!write)
        REQUIRE(clEnqueueReadBuffer(ctx.queue, buf, CL_TRUE, 0, bytes, samples->data(), 0, nullptr, nullptr) ==
                CL_SUCCESS);
    REQUIRE(clFinish(ctx.queue) == CL_SUCCESS);
    clReleaseKernel(k);
    clReleaseMemObject(buf);
}

size_t mismatches(const std::vector<uint16_t> &a, const std::vector<uint16_t> &b) {
    if (a.size() != b.size()) return a.size() + b.size();
    size_t bad = 0;
    for (size_t i = 0; i < a.size(); ++i) bad += a[i] != b[i];
    return bad;
}

bool format_supported(cl_context context, cl_mem_flags flags, const cl_image_format &f) {
    cl_uint n = 0;
    if (clGetSupportedImageFormats(context, flags, CL_MEM_OBJECT_IMAGE2D, 0, nullptr, &n) != CL_SUCCESS) return false;
    std::vector<cl_image_format> list(n);
    if (n && clGetSupportedImageFormats(context, flags, CL_MEM_OBJECT_IMAGE2D, n, list.data(), nullptr) != CL_SUCCESS)
        return false;
    for (const auto &g : list)
        if (g.image_channel_order == f.image_channel_order && g.image_channel_data_type == f.image_channel_data_type)
            return true;
    return false;
}

bool has_word(const std::string &list, const char *word) {
    for (const std::string &w : split_words(list))
        if (w == word) return true;
    return false;
}

// One surface format through the whole FFmpeg-style round: the CPU writes
// the surface, kernels read both planes byte-exact, kernels write both
// planes of a second surface, the CPU reads them back byte-exact.
void plane_round_trip(uint32_t fourcc, unsigned w, unsigned h) {
    Display d;
    REQUIRE_DISPLAY(d);
    ClEnv env;
    if (!device_has_images(env)) SKIP("the device has no image support");
    VaFns va = va_fns(env.platform);
    const bool p010 = fourcc == VA_FOURCC_P010;
    // The ICD's first compile maps files of its own for good (rusticl's Mesa
    // shader cache): done before the counts, so only the import's are compared.
    clReleaseKernel(build(env, env.context, "plane_to_buf"));
    const int fds_before = settled_fds();
    const int maps_before = settled_mappings();
    {
        VaContext ctx(env, d.dpy);
        Surface src(d.dpy, fourcc, w, h), dst(d.dpy, fourcc, w, h);
        REQUIRE(src.id != VA_INVALID_SURFACE);
        REQUIRE(dst.id != VA_INVALID_SURFACE);
        const Planes want = vatest::pattern(fourcc, w, h, 1), written = vatest::pattern(fourcc, w, h, 2);
        REQUIRE(vatest::write_planes(src, want) == VA_STATUS_SUCCESS);

        cl_int err = CL_SUCCESS;
        // A plane whose format the device lacks (PoCL 3.1 has no CL_RG) is
        // refused with CL_IMAGE_FORMAT_NOT_SUPPORTED, nothing kept; the
        // other plane is still checked.
        cl_mem in[2] = {}, out[2] = {};
        bool shared[2] = {false, false};
        for (cl_uint p = 0; p < 2; ++p) {
            const cl_image_format f = {cl_channel_order(p ? CL_RG : CL_R),
                                       cl_channel_type(p010 ? CL_UNORM_INT16 : CL_UNORM_INT8)};
            shared[p] = format_supported(ctx.context, CL_MEM_READ_ONLY, f) &&
                        format_supported(ctx.context, CL_MEM_WRITE_ONLY, f);
            in[p] = va.create(ctx.context, CL_MEM_READ_ONLY, &src.id, p, &err);
            if (!shared[p]) {
                WARN("plane " << p << ": the device has no " << (p ? "CL_RG" : "CL_R") << " image format");
                CHECK(in[p] == nullptr);
                CHECK(err == CL_IMAGE_FORMAT_NOT_SUPPORTED);
                continue;
            }
            REQUIRE(err == CL_SUCCESS);
            out[p] = va.create(ctx.context, CL_MEM_WRITE_ONLY, &dst.id, p, &err);
            REQUIRE(err == CL_SUCCESS);
        }
        if (!shared[0] && !shared[1]) SKIP("the device has neither plane's format");
        // What FFmpeg and NEO agree on: R / RG, 8 or 16 bit, chroma at half size.
        for (cl_uint p = 0; p < 2; ++p) {
            if (!shared[p]) continue;
            cl_image_format f{};
            REQUIRE(clGetImageInfo(in[p], CL_IMAGE_FORMAT, sizeof f, &f, nullptr) == CL_SUCCESS);
            CHECK(f.image_channel_order == (p ? CL_RG : CL_R));
            CHECK(f.image_channel_data_type == (p010 ? CL_UNORM_INT16 : CL_UNORM_INT8));
            size_t iw = 0, ih = 0;
            REQUIRE(clGetImageInfo(in[p], CL_IMAGE_WIDTH, sizeof iw, &iw, nullptr) == CL_SUCCESS);
            REQUIRE(clGetImageInfo(in[p], CL_IMAGE_HEIGHT, sizeof ih, &ih, nullptr) == CL_SUCCESS);
            CHECK(iw == (p ? (w + 1) / 2 : w));
            CHECK(ih == (p ? (h + 1) / 2 : h));
            cl_uint plane = 99;
            REQUIRE(clGetImageInfo(in[p], CL_IMAGE_VA_API_PLANE_INTEL, sizeof plane, &plane, nullptr) == CL_SUCCESS);
            CHECK(plane == p);
            VASurfaceID *sid = nullptr;
            REQUIRE(clGetMemObjectInfo(in[p], CL_MEM_VA_API_MEDIA_SURFACE_INTEL, sizeof sid, &sid, nullptr) ==
                    CL_SUCCESS);
            REQUIRE(sid);
            CHECK(*sid == src.id);
            size_t prop_bytes = 1;
            REQUIRE(clGetMemObjectInfo(in[p], CL_MEM_PROPERTIES, 0, nullptr, &prop_bytes) == CL_SUCCESS);
            CHECK(prop_bytes == 0);
        }
        std::vector<cl_mem> ins, outs;
        for (cl_uint p = 0; p < 2; ++p)
            if (shared[p]) {
                ins.push_back(in[p]);
                outs.push_back(out[p]);
            }
        const cl_uint n = static_cast<cl_uint>(ins.size());

        auto *syncs = vva<unsigned (*)()>("vva_sync_count");
        const unsigned syncs_before = syncs();
        cl_event ev = nullptr;
        REQUIRE(va.acquire(ctx.queue, n, ins.data(), 0, nullptr, &ev) == CL_SUCCESS);
        cl_command_type type = 0;
        REQUIRE(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr) == CL_SUCCESS);
        CHECK(type == CL_COMMAND_ACQUIRE_VA_API_MEDIA_SURFACES_INTEL);
        clReleaseEvent(ev);
        CHECK(syncs() == syncs_before + 1);  // one vaSyncSurface for the surface, not one per plane
        REQUIRE(va.acquire(ctx.queue, n, outs.data(), 0, nullptr, nullptr) == CL_SUCCESS);

        Planes got = want, to_write = written;
        if (shared[0]) run_plane(env, ctx, in[0], &got.y, w, h, 1, p010, false);
        if (shared[1]) run_plane(env, ctx, in[1], &got.uv, (w + 1) / 2, (h + 1) / 2, 2, p010, false);
        if (shared[0]) run_plane(env, ctx, out[0], &to_write.y, w, h, 1, p010, true);
        if (shared[1]) run_plane(env, ctx, out[1], &to_write.uv, (w + 1) / 2, (h + 1) / 2, 2, p010, true);
        CHECK(mismatches(got.y, want.y) == 0);
        CHECK(mismatches(got.uv, want.uv) == 0);

        REQUIRE(va.release(ctx.queue, n, ins.data(), 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(va.release(ctx.queue, n, outs.data(), 0, nullptr, &ev) == CL_SUCCESS);
        REQUIRE(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr) == CL_SUCCESS);
        CHECK(type == CL_COMMAND_RELEASE_VA_API_MEDIA_SURFACES_INTEL);
        REQUIRE(clWaitForEvents(1, &ev) == CL_SUCCESS);
        clReleaseEvent(ev);
        REQUIRE(clFinish(ctx.queue) == CL_SUCCESS);

        Planes back;
        REQUIRE(vatest::read_planes(dst, &back) == VA_STATUS_SUCCESS);
        const Planes blank = vatest::pattern(fourcc, w, h, 0);  // sizes only
        if (shared[0]) CHECK(mismatches(back.y, written.y) == 0);
        if (shared[1]) CHECK(mismatches(back.uv, written.uv) == 0);
        // A plane nobody wrote stays as the driver made it (black).
        if (!shared[1]) CHECK(std::count(back.uv.begin(), back.uv.end(), 0) == std::ptrdiff_t(blank.uv.size()));
        // The source surface is untouched by its read-only import.
        REQUIRE(vatest::read_planes(src, &back) == VA_STATUS_SUCCESS);
        CHECK(mismatches(back.y, want.y) == 0);
        CHECK(mismatches(back.uv, want.uv) == 0);
        for (cl_mem m : ins) clReleaseMemObject(m);
        for (cl_mem m : outs) clReleaseMemObject(m);
    }
    CHECK(settled_mappings() == maps_before);
    CHECK(open_fds_toward(fds_before) == fds_before);
}

}  // namespace

TEST_CASE("va: the extension is listed and its entry points resolve", "[va]") {
    ClEnv env;
    CHECK(has_word(platform_string(env.platform, CL_PLATFORM_EXTENSIONS), "cl_intel_va_api_media_sharing"));
    CHECK(has_word(device_string(env.device, CL_DEVICE_EXTENSIONS), "cl_intel_va_api_media_sharing"));
    size_t bytes = 0;
    REQUIRE(clGetPlatformInfo(env.platform, CL_PLATFORM_EXTENSIONS_WITH_VERSION, 0, nullptr, &bytes) == CL_SUCCESS);
    std::vector<cl_name_version> list(bytes / sizeof(cl_name_version));
    REQUIRE(clGetPlatformInfo(env.platform, CL_PLATFORM_EXTENSIONS_WITH_VERSION, bytes, list.data(), nullptr) ==
            CL_SUCCESS);
    int found = 0;
    for (const auto &e : list) found += !std::strcmp(e.name, "cl_intel_va_api_media_sharing");
    CHECK(found == 1);
    va_fns(env.platform);
}

TEST_CASE("va: the display pairs with the CPU device; every misuse of the pairing call is refused", "[va]") {
    Display d;
    REQUIRE_DISPLAY(d);
    ClEnv env;
    VaFns va = va_fns(env.platform);
    const int fds_before = settled_fds();
    for (cl_uint set : {CL_PREFERRED_DEVICES_FOR_VA_API_INTEL, CL_ALL_DEVICES_FOR_VA_API_INTEL}) {
        cl_uint n = 0;
        REQUIRE(va.devices(env.platform, CL_VA_API_DISPLAY_INTEL, d.dpy, set, 0, nullptr, &n) == CL_SUCCESS);
        REQUIRE(n >= 1);
        std::vector<cl_device_id> devs(n);
        REQUIRE(va.devices(env.platform, CL_VA_API_DISPLAY_INTEL, d.dpy, set, n, devs.data(), nullptr) == CL_SUCCESS);
        cl_device_type type = 0;
        REQUIRE(clGetDeviceInfo(devs[0], CL_DEVICE_TYPE, sizeof type, &type, nullptr) == CL_SUCCESS);
        CHECK((type & CL_DEVICE_TYPE_CPU) != 0);  // PoCL, llvmpipe: the same host pages
    }
    cl_uint n = 0;
    cl_device_id dev = nullptr;
    CHECK(va.devices(nullptr, CL_VA_API_DISPLAY_INTEL, d.dpy, CL_PREFERRED_DEVICES_FOR_VA_API_INTEL, 0, nullptr, &n) ==
          CL_INVALID_PLATFORM);
    CHECK(va.devices(env.platform, 0x4242, d.dpy, CL_PREFERRED_DEVICES_FOR_VA_API_INTEL, 0, nullptr, &n) ==
          CL_INVALID_VALUE);
    CHECK(va.devices(env.platform, CL_VA_API_DISPLAY_INTEL, d.dpy, 0x4242, 0, nullptr, &n) == CL_INVALID_VALUE);
    CHECK(va.devices(env.platform, CL_VA_API_DISPLAY_INTEL, d.dpy, CL_PREFERRED_DEVICES_FOR_VA_API_INTEL, 0, &dev,
                     nullptr) == CL_INVALID_VALUE);
    CHECK(va.devices(env.platform, CL_VA_API_DISPLAY_INTEL, d.dpy, CL_PREFERRED_DEVICES_FOR_VA_API_INTEL, 0, nullptr,
                     nullptr) == CL_INVALID_VALUE);
    CHECK(va.devices(env.platform, CL_VA_API_DISPLAY_INTEL, nullptr, CL_PREFERRED_DEVICES_FOR_VA_API_INTEL, 0, nullptr,
                     &n) == CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL);
    // A driver that cannot export surfaces cannot share them.
    vva<void (*)(unsigned, int)>("vva_fail_next_exports")(1, VA_STATUS_ERROR_UNSUPPORTED_MEMORY_TYPE);
    CHECK(va.devices(env.platform, CL_VA_API_DISPLAY_INTEL, d.dpy, CL_PREFERRED_DEVICES_FOR_VA_API_INTEL, 0, nullptr,
                     &n) == CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL);
    CHECK(open_fds_toward(fds_before) == fds_before);  // the probe surface's export is closed
}

TEST_CASE("va: a context with the VA display answers the application's properties; a bad display is refused",
          "[va]") {
    Display d;
    REQUIRE_DISPLAY(d);
    ClEnv env;
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(env.platform),
                                           CL_CONTEXT_VA_API_DISPLAY_INTEL, reinterpret_cast<cl_context_properties>(d.dpy),
                                           CL_CONTEXT_INTEROP_USER_SYNC, CL_FALSE, 0};
    cl_int err = CL_SUCCESS;
    cl_context c = clCreateContext(props, 1, &env.device, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    size_t bytes = 0;
    REQUIRE(clGetContextInfo(c, CL_CONTEXT_PROPERTIES, 0, nullptr, &bytes) == CL_SUCCESS);
    REQUIRE(bytes == sizeof props);
    std::vector<cl_context_properties> got(bytes / sizeof(cl_context_properties));
    REQUIRE(clGetContextInfo(c, CL_CONTEXT_PROPERTIES, bytes, got.data(), nullptr) == CL_SUCCESS);
    CHECK(std::memcmp(got.data(), props, bytes) == 0);
    clReleaseContext(c);
    c = clCreateContextFromType(props, CL_DEVICE_TYPE_ALL, nullptr, nullptr, &err);
    CHECK(err == CL_SUCCESS);
    if (c) clReleaseContext(c);

    int not_a_display = 0;
    const cl_context_properties bad[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(env.platform),
                                         CL_CONTEXT_VA_API_DISPLAY_INTEL,
                                         reinterpret_cast<cl_context_properties>(&not_a_display), 0};
    CHECK(clCreateContext(bad, 1, &env.device, nullptr, nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL);
    const cl_context_properties null_display[] = {CL_CONTEXT_VA_API_DISPLAY_INTEL, 0, 0};
    CHECK(clCreateContextFromType(null_display, CL_DEVICE_TYPE_ALL, nullptr, nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL);
}

TEST_CASE("va: NV12 planes read and written by kernels byte-exact", "[va][kernel]") {
    SECTION("256x128") { plane_round_trip(VA_FOURCC_NV12, 256, 128); }
    SECTION("odd size 250x131 (padded pitch, odd chroma)") { plane_round_trip(VA_FOURCC_NV12, 250, 131); }
}

TEST_CASE("va: P010 planes read and written by kernels byte-exact", "[va][kernel]") {
    plane_round_trip(VA_FOURCC_P010, 192, 96);
}

TEST_CASE("va: every misuse of create, acquire and release gets the extension's error; nothing leaks", "[va]") {
    Display d;
    REQUIRE_DISPLAY(d);
    ClEnv env;
    if (!device_has_images(env)) SKIP("the device has no image support");
    VaFns va = va_fns(env.platform);
    const int fds_before = settled_fds();
    const int maps_before = settled_mappings();
    auto *live = vva<unsigned (*)()>("vva_live_objects");
    const unsigned live_before = live();
    {
        VaContext ctx(env, d.dpy);
        Surface s(d.dpy, VA_FOURCC_NV12, 64, 32);
        REQUIRE(s.id != VA_INVALID_SURFACE);
        cl_int err = CL_SUCCESS;

        // create
        CHECK(va.create(nullptr, CL_MEM_READ_WRITE, &s.id, 0, &err) == nullptr);
        CHECK(err == CL_INVALID_CONTEXT);
        CHECK(va.create(env.context /* no VA display */, CL_MEM_READ_WRITE, &s.id, 0, &err) == nullptr);
        CHECK(err == CL_INVALID_CONTEXT);
        CHECK(va.create(ctx.context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, &s.id, 0, &err) == nullptr);
        CHECK(err == CL_INVALID_VALUE);
        CHECK(va.create(ctx.context, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, &s.id, 0, &err) == nullptr);
        CHECK(err == CL_INVALID_VALUE);
        CHECK(va.create(ctx.context, CL_MEM_READ_WRITE, nullptr, 0, &err) == nullptr);
        CHECK(err == CL_INVALID_VA_API_MEDIA_SURFACE_INTEL);
        VASurfaceID bogus = s.id + 1000;
        CHECK(va.create(ctx.context, CL_MEM_READ_WRITE, &bogus, 0, &err) == nullptr);
        CHECK(err == CL_INVALID_VA_API_MEDIA_SURFACE_INTEL);
        CHECK(va.create(ctx.context, CL_MEM_READ_WRITE, &s.id, 2, &err) == nullptr);
        CHECK(err == CL_INVALID_VALUE);
        vva<void (*)(unsigned, int)>("vva_fail_next_exports")(1, VA_STATUS_ERROR_ALLOCATION_FAILED);
        CHECK(va.create(ctx.context, CL_MEM_READ_WRITE, &s.id, 0, &err) == nullptr);
        CHECK(err == CL_INVALID_VA_API_MEDIA_SURFACE_INTEL);

        cl_mem y = va.create(ctx.context, CL_MEM_READ_WRITE, &s.id, 0, &err);
        REQUIRE(err == CL_SUCCESS);

        // acquire / release
        CHECK(va.acquire(nullptr, 1, &y, 0, nullptr, nullptr) == CL_INVALID_COMMAND_QUEUE);
        CHECK(va.acquire(ctx.queue, 1, nullptr, 0, nullptr, nullptr) == CL_INVALID_VALUE);
        CHECK(va.acquire(ctx.queue, 0, &y, 0, nullptr, nullptr) == CL_INVALID_VALUE);
        CHECK(va.acquire(ctx.queue, 1, &y, 1, nullptr, nullptr) == CL_INVALID_EVENT_WAIT_LIST);
        CHECK(va.release(ctx.queue, 1, &y, 0, nullptr, nullptr) == CL_VA_API_MEDIA_SURFACE_NOT_ACQUIRED_INTEL);
        cl_mem plain = clCreateBuffer(ctx.context, CL_MEM_READ_WRITE, 64, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        CHECK(va.acquire(ctx.queue, 1, &plain, 0, nullptr, nullptr) == CL_INVALID_MEM_OBJECT);
        CHECK(va.acquire(env.queue /* no VA display */, 1, &y, 0, nullptr, nullptr) == CL_INVALID_CONTEXT);
        // A failed vaSyncSurface fails the acquire and leaves the object unacquired.
        vva<void (*)(unsigned, int)>("vva_fail_next_syncs")(1, VA_STATUS_ERROR_DECODING_ERROR);
        CHECK(va.acquire(ctx.queue, 1, &y, 0, nullptr, nullptr) == CL_INVALID_VA_API_MEDIA_SURFACE_INTEL);
        CHECK(va.release(ctx.queue, 1, &y, 0, nullptr, nullptr) == CL_VA_API_MEDIA_SURFACE_NOT_ACQUIRED_INTEL);
        // A surface still busy past the bound: CL_OUT_OF_RESOURCES, unacquired too.
        vva<void (*)(unsigned, int)>("vva_fail_next_syncs")(1, VA_STATUS_ERROR_TIMEDOUT);
        CHECK(va.acquire(ctx.queue, 1, &y, 0, nullptr, nullptr) == CL_OUT_OF_RESOURCES);
        REQUIRE(va.acquire(ctx.queue, 1, &y, 0, nullptr, nullptr) == CL_SUCCESS);
        CHECK(va.acquire(ctx.queue, 1, &y, 0, nullptr, nullptr) == CL_VA_API_MEDIA_SURFACE_ALREADY_ACQUIRED_INTEL);
        const cl_mem twice[] = {y, y};
        CHECK(va.release(ctx.queue, 2, twice, 0, nullptr, nullptr) == CL_SUCCESS);  // listed twice: one object
        CHECK(va.release(ctx.queue, 1, &y, 0, nullptr, nullptr) == CL_VA_API_MEDIA_SURFACE_NOT_ACQUIRED_INTEL);
        // Nothing to hand over: a marker, and its event.
        cl_event ev = nullptr;
        CHECK(va.acquire(ctx.queue, 0, nullptr, 0, nullptr, &ev) == CL_SUCCESS);
        if (ev) {
            CHECK(clWaitForEvents(1, &ev) == CL_SUCCESS);
            clReleaseEvent(ev);
        }
        REQUIRE(clFinish(ctx.queue) == CL_SUCCESS);
        // The queries of another object are the ICD's (not ours to answer).
        VASurfaceID *sid = nullptr;
        CHECK(clGetMemObjectInfo(plain, CL_MEM_VA_API_MEDIA_SURFACE_INTEL, sizeof sid, &sid, nullptr) != CL_SUCCESS);
        clReleaseMemObject(plain);
        clReleaseMemObject(y);
    }
    CHECK(live() == live_before);
    CHECK(settled_mappings() == maps_before);
    CHECK(open_fds_toward(fds_before) == fds_before);
}

TEST_CASE("va: CL_CONTEXT_INTEROP_USER_SYNC = CL_TRUE leaves vaSyncSurface to the application", "[va]") {
    Display d;
    REQUIRE_DISPLAY(d);
    ClEnv env;
    if (!device_has_images(env)) SKIP("the device has no image support");
    VaFns va = va_fns(env.platform);
    VaContext ctx(env, d.dpy, CL_TRUE);
    Surface s(d.dpy, VA_FOURCC_NV12, 64, 32);
    cl_int err = CL_SUCCESS;
    cl_mem y = va.create(ctx.context, CL_MEM_READ_ONLY, &s.id, 0, &err);
    REQUIRE(err == CL_SUCCESS);
    auto *syncs = vva<unsigned (*)()>("vva_sync_count");
    const unsigned before = syncs();
    REQUIRE(va.acquire(ctx.queue, 1, &y, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(va.release(ctx.queue, 1, &y, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(ctx.queue) == CL_SUCCESS);
    CHECK(syncs() == before);
    clReleaseMemObject(y);
}

TEST_CASE("va: 20 map/unmap rounds of an NV12 surface leave no fd, mapping or driver object behind", "[va]") {
    Display d;
    REQUIRE_DISPLAY(d);
    ClEnv env;
    if (!device_has_images(env)) SKIP("the device has no image support");
    VaFns va = va_fns(env.platform);
    auto *live = vva<unsigned (*)()>("vva_live_objects");
    VaContext ctx(env, d.dpy);
    Surface s(d.dpy, VA_FOURCC_NV12, 320, 240);
    REQUIRE(s.id != VA_INVALID_SURFACE);
    const int fds_before = settled_fds();
    const int maps_before = settled_mappings();
    const unsigned live_before = live();
    for (int round = 0; round < 20; ++round) {
        cl_int err = CL_SUCCESS;
        std::vector<cl_mem> planes;
        for (cl_uint p = 0; p < 2; ++p) {
            cl_mem m = va.create(ctx.context, CL_MEM_READ_WRITE, &s.id, p, &err);
            if (!m) {
                CHECK(err == CL_IMAGE_FORMAT_NOT_SUPPORTED);  // PoCL 3.1's missing CL_RG: nothing kept either
                continue;
            }
            planes.push_back(m);
        }
        REQUIRE(!planes.empty());
        const cl_uint n = static_cast<cl_uint>(planes.size());
        REQUIRE(va.acquire(ctx.queue, n, planes.data(), 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(va.release(ctx.queue, n, planes.data(), 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(clFinish(ctx.queue) == CL_SUCCESS);
        for (cl_mem m : planes) clReleaseMemObject(m);
    }
    CHECK(live() == live_before);
    CHECK(settled_mappings() == maps_before);
    CHECK(open_fds_toward(fds_before) == fds_before);
}

// The layer keeps what an import of a surface's dma-buf built (the mapping,
// layer/dmabuf/mapping_cache.hpp) for the next import of the same memory.
// A surface destroyed after a few frames, and new surfaces that may take its
// id (the virtual driver hands ids out again) and its memory's place, of
// another size and of the same size with other content: each maps its own
// pixels, never what was kept of the old one.  (Whether the kernel gives the
// old buffer's inode number to a new one is its choice; the unit test
// "mapping cache: a freed buffer's inode number ..." forces it.)
TEST_CASE("va: a destroyed surface's id, taken by new surfaces of another size or content, maps their own pixels",
          "[va][kernel]") {
    Display d;
    REQUIRE_DISPLAY(d);
    ClEnv env;
    if (!device_has_images(env)) SKIP("the device has no image support");
    VaFns va = va_fns(env.platform);
    VaContext ctx(env, d.dpy);
    // One FFmpeg map round of the luma plane, read by a kernel.
    auto luma_of = [&](const Surface &s) {
        cl_int err = CL_INVALID_VALUE;
        cl_mem m = va.create(ctx.context, CL_MEM_READ_ONLY, const_cast<VASurfaceID *>(&s.id), 0, &err);
        REQUIRE(err == CL_SUCCESS);
        REQUIRE(va.acquire(ctx.queue, 1, &m, 0, nullptr, nullptr) == CL_SUCCESS);
        std::vector<uint16_t> got(size_t{s.width} * s.height);
        run_plane(env, ctx, m, &got, s.width, s.height, 1, false, false);
        REQUIRE(va.release(ctx.queue, 1, &m, 0, nullptr, nullptr) == CL_SUCCESS);
        REQUIRE(clFinish(ctx.queue) == CL_SUCCESS);
        clReleaseMemObject(m);
        return got;
    };
    VASurfaceID old_id = VA_INVALID_SURFACE;
    {
        Surface a(d.dpy, VA_FOURCC_NV12, 320, 240);
        REQUIRE(a.id != VA_INVALID_SURFACE);
        const Planes pa = vatest::pattern(VA_FOURCC_NV12, 320, 240, 3);
        REQUIRE(vatest::write_planes(a, pa) == VA_STATUS_SUCCESS);
        for (int frame = 0; frame < 3; ++frame) CHECK(mismatches(luma_of(a), pa.y) == 0);  // re-imports
        old_id = a.id;
    }  // destroyed right after its last frame: what the layer kept of it is still there
    struct Next {
        unsigned w, h, seed;
    };
    for (const Next &n : {Next{256, 192, 4}, Next{320, 240, 5}, Next{320, 240, 6}}) {
        Surface b(d.dpy, VA_FOURCC_NV12, n.w, n.h);
        REQUIRE(b.id != VA_INVALID_SURFACE);
        INFO("new surface " << b.id << " (" << n.w << "x" << n.h << ", pattern " << n.seed
                            << "); the destroyed one was " << old_id);
        const Planes pb = vatest::pattern(VA_FOURCC_NV12, n.w, n.h, n.seed);
        REQUIRE(vatest::write_planes(b, pb) == VA_STATUS_SUCCESS);
        CHECK(mismatches(luma_of(b), pb.y) == 0);
        CHECK(mismatches(luma_of(b), pb.y) == 0);  // and its own re-import
    }
}

// cl_intel_sharing_format_query's VA-API function: what it lists for a plane
// is exactly what clCreateFromVA_APIMediaSurfaceINTEL then takes on this ICD.
TEST_CASE("va: clGetSupportedVA_APIMediaSurfaceFormatsINTEL lists what the context shares; every misuse is refused",
          "[va][formats]") {
    Display d;
    REQUIRE_DISPLAY(d);
    ClEnv env;
    CHECK(has_word(platform_string(env.platform, CL_PLATFORM_EXTENSIONS), "cl_intel_sharing_format_query"));
    auto query = reinterpret_cast<clGetSupportedVA_APIMediaSurfaceFormatsINTEL_fn>(
        clGetExtensionFunctionAddressForPlatform(env.platform, "clGetSupportedVA_APIMediaSurfaceFormatsINTEL"));
    REQUIRE(query);
    VaFns va = va_fns(env.platform);
    const int fds_before = settled_fds();
    VaContext ctx(env, d.dpy);
    auto listed = [&](cl_mem_flags flags, cl_uint plane) {
        cl_uint n = 99;
        REQUIRE(query(ctx.context, flags, CL_MEM_OBJECT_IMAGE2D, plane, 0, nullptr, &n) == CL_SUCCESS);
        std::vector<VAImageFormat> list(n + 1);
        cl_uint again = 0;
        if (n) REQUIRE(query(ctx.context, flags, CL_MEM_OBJECT_IMAGE2D, plane, n, list.data(), &again) == CL_SUCCESS);
        CHECK(again == n);
        list.resize(n);
        return list;
    };
    auto find = [](const std::vector<VAImageFormat> &list, uint32_t fourcc) -> const VAImageFormat * {
        for (const auto &f : list)
            if (f.fourcc == fourcc) return &f;
        return nullptr;
    };

    for (cl_mem_flags flags : {cl_mem_flags(CL_MEM_READ_ONLY), cl_mem_flags(CL_MEM_WRITE_ONLY),
                               cl_mem_flags(CL_MEM_READ_WRITE)}) {
        // Plane 0: NV12 (CL_R 8-bit) and P010 (CL_R 16-bit), which every image device has.
        const auto plane0 = listed(flags, 0);
        const VAImageFormat *nv12 = find(plane0, VA_FOURCC_NV12), *p010 = find(plane0, VA_FOURCC_P010);
        REQUIRE(nv12);
        REQUIRE(p010);
        CHECK(nv12->bits_per_pixel == 12);
        CHECK(p010->bits_per_pixel == 24);
        CHECK(nv12->byte_order == VA_LSB_FIRST);
        // Plane 1 of NV12 / P010: listed exactly when the ICD has CL_RG (PoCL 3.1 has none).
        const auto plane1 = listed(flags, 1);
        for (bool ten_bit : {false, true}) {
            const uint32_t fourcc = ten_bit ? VA_FOURCC_P010 : VA_FOURCC_NV12;
            const cl_image_format rg = {CL_RG, cl_channel_type(ten_bit ? CL_UNORM_INT16 : CL_UNORM_INT8)};
            CHECK((find(plane1, fourcc) != nullptr) == format_supported(ctx.context, flags, rg));
            // ... and the import agrees with the list, surface by surface.
            Surface s(d.dpy, fourcc, 64, 32);
            REQUIRE(s.id != VA_INVALID_SURFACE);
            for (cl_uint plane : {0u, 1u}) {
                const bool in_list = find(plane ? plane1 : plane0, fourcc) != nullptr;
                cl_int err = CL_SUCCESS;
                cl_mem m = va.create(ctx.context, flags, &s.id, plane, &err);
                CHECK((m != nullptr) == in_list);
                CHECK(err == (in_list ? CL_SUCCESS : CL_IMAGE_FORMAT_NOT_SUPPORTED));
                if (m) clReleaseMemObject(m);
            }
        }
        // Packed RGB has one plane, the 3-plane 4:2:0 ones three: plane 2 lists
        // only those, plane 3 nothing.
        for (const auto &f : plane1) CHECK(f.fourcc != VA_FOURCC_ARGB);
        for (const auto &f : listed(flags, 2)) CHECK((f.fourcc == VA_FOURCC_YV12 || f.fourcc == VA_FOURCC_I420));
        CHECK(listed(flags, 3).empty());
    }

    // Fewer entries than formats: the first ones, and the whole count.
    cl_uint total = 0;
    REQUIRE(query(ctx.context, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0, 0, nullptr, &total) == CL_SUCCESS);
    REQUIRE(total >= 2);
    std::vector<VAImageFormat> all(total), one(2);
    std::memset(one.data(), 0xab, sizeof(VAImageFormat) * 2);
    REQUIRE(query(ctx.context, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0, total, all.data(), nullptr) == CL_SUCCESS);
    cl_uint n = 0;
    REQUIRE(query(ctx.context, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0, 1, one.data(), &n) == CL_SUCCESS);
    CHECK(n == total);
    CHECK(one[0].fourcc == all[0].fourcc);
    CHECK(one[1].fourcc == 0xababababu);  // past num_entries: untouched
    // Other image types are valid but no surface makes them.
    CHECK(query(ctx.context, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE3D, 0, 0, nullptr, &n) == CL_SUCCESS);
    CHECK(n == 0);

    // The query's errors.
    VAImageFormat f{};
    n = 99;
    CHECK(query(nullptr, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0, 1, &f, &n) == CL_INVALID_CONTEXT);
    CHECK(query(env.context, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0, 1, &f, &n) == CL_INVALID_CONTEXT);  // no VA display
    CHECK(query(ctx.context, 0, CL_MEM_OBJECT_IMAGE2D, 0, 1, &f, &n) == CL_INVALID_VALUE);
    CHECK(query(ctx.context, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, CL_MEM_OBJECT_IMAGE2D, 0, 1, &f, &n) ==
          CL_INVALID_VALUE);
    CHECK(query(ctx.context, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, CL_MEM_OBJECT_IMAGE2D, 0, 1, &f, &n) ==
          CL_INVALID_VALUE);
    CHECK(query(ctx.context, CL_MEM_READ_ONLY, CL_MEM_OBJECT_BUFFER, 0, 1, &f, &n) == CL_INVALID_VALUE);
    CHECK(query(ctx.context, CL_MEM_READ_ONLY, 0, 0, 1, &f, &n) == CL_INVALID_VALUE);
    CHECK(query(ctx.context, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0, 0, &f, &n) == CL_INVALID_VALUE);
    CHECK(query(ctx.context, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE2D, 0, 1, nullptr, nullptr) == CL_INVALID_VALUE);
    CHECK(n == 99);  // nothing written on a refusal
    CHECK(open_fds_toward(fds_before) == fds_before);
}

// "Linear; tiled only through the existing consent rules" (issue #30): a
// tiled plane needs the blitter's de-tiled copy, which the image import makes
// only with CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF = CL_TRUE (docs/images.md).
// clCreateFromVA_APIMediaSurfaceINTEL has no property list, so the consent is
// a property of the VA context; without it a tiled surface (iHD's default) is
// refused, and a compressed one always is.
namespace {
cl_context va_context_with(const ClEnv &env, VADisplay dpy, cl_context_properties consent, cl_int *err) {
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(env.platform),
                                           CL_CONTEXT_VA_API_DISPLAY_INTEL, reinterpret_cast<cl_context_properties>(dpy),
                                           CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF, consent, 0};
    return clCreateContext(props, 1, &env.device, nullptr, nullptr, err);
}
}  // namespace

TEST_CASE("va: a tiled surface needs the context's consent, a compressed one is refused; nothing leaks",
          "[va][tiled]") {
    Display d;
    REQUIRE_DISPLAY(d);
    ClEnv env;
    if (!device_has_images(env)) SKIP("the device has no image support");
    VaFns va = va_fns(env.platform);
    auto *set_modifier = vva<void (*)(uint64_t)>("vva_export_modifier");
    struct Linear {  // the driver exports linear again, whatever happens below
        void (*set)(uint64_t);
        ~Linear() { set(0); }
    } restore{set_modifier};
    auto *live = vva<unsigned (*)()>("vva_live_objects");
    // The virtual Gen9's own GEM objects (the host) have a blitter to de-tile
    // them; the VM's heap dma-bufs have none: a consented import is then
    // CL_INVALID_OPERATION (docs/images.md).
    const bool blitter = std::string(vva<const char *(*)()>("vva_memory_backend")()) == "gem";
    constexpr uint64_t intel = uint64_t{0x01} << 56;  // DRM_FORMAT_MOD_VENDOR_INTEL
    constexpr uint64_t x_tiled = intel | 1, y_tiled = intel | 2, y_tiled_ccs = intel | 4;
    // The first consented tiled import opens what the blitter keeps for the
    // process (the Gen9 node, its batch pool), or probes the node once where
    // none serves: one before the counts (as tests/e2e/test_tiled_images.cpp).
    {
        cl_int err = CL_SUCCESS;
        cl_context warm = va_context_with(env, d.dpy, CL_TRUE, &err);
        REQUIRE(err == CL_SUCCESS);
        Surface s(d.dpy, VA_FOURCC_NV12, 512, 64);
        REQUIRE(s.id != VA_INVALID_SURFACE);
        set_modifier(y_tiled);
        if (cl_mem m = va.create(warm, CL_MEM_READ_ONLY, &s.id, 0, &err)) clReleaseMemObject(m);
        set_modifier(0);
        clReleaseContext(warm);
    }
    const int fds_before = settled_fds();
    const int maps_before = settled_mappings();
    {
        cl_int err = CL_SUCCESS;
        cl_context plain = va_context_with(env, d.dpy, CL_FALSE, &err);
        REQUIRE(err == CL_SUCCESS);
        cl_context consented = va_context_with(env, d.dpy, CL_TRUE, &err);
        REQUIRE(err == CL_SUCCESS);
        Surface s(d.dpy, VA_FOURCC_NV12, 512, 64);  // X tiles are 512 bytes wide, Y tiles 32 rows high
        REQUIRE(s.id != VA_INVALID_SURFACE);
        const unsigned live_before = live();
        for (uint64_t modifier : {x_tiled, y_tiled, y_tiled_ccs}) {
            INFO("modifier 0x" << std::hex << modifier);
            set_modifier(modifier);
            for (cl_mem_flags flags : {cl_mem_flags(CL_MEM_READ_ONLY), cl_mem_flags(CL_MEM_READ_WRITE)}) {
                // No consent (CL_FALSE, as when the property is absent): refused.
                CHECK(va.create(plain, flags, &s.id, 0, &err) == nullptr);
                CHECK(err == CL_INVALID_VA_API_MEDIA_SURFACE_INTEL);
                // Consent: X/Y through the blitter; compression never.
                cl_mem m = va.create(consented, flags, &s.id, 0, &err);
                if (modifier == y_tiled_ccs) {
                    CHECK(m == nullptr);
                    CHECK(err == CL_INVALID_VA_API_MEDIA_SURFACE_INTEL);
                } else {
                    CHECK(err == (blitter ? CL_SUCCESS : CL_INVALID_OPERATION));
                    CHECK((m != nullptr) == blitter);
                }
                if (m) clReleaseMemObject(m);
            }
        }
        // The same surface, linear again, imports in either context.
        set_modifier(0);
        for (cl_context c : {plain, consented}) {
            cl_mem m = va.create(c, CL_MEM_READ_ONLY, &s.id, 0, &err);
            CHECK(err == CL_SUCCESS);
            if (m) clReleaseMemObject(m);
        }
        CHECK(live() == live_before);
        clReleaseContext(consented);
        clReleaseContext(plain);
    }
    // The consent's own errors: a value other than CL_TRUE/CL_FALSE, and no VA display.
    cl_int err = CL_SUCCESS;
    CHECK(va_context_with(env, d.dpy, 2, &err) == nullptr);
    CHECK(err == CL_INVALID_PROPERTY);
    const cl_context_properties alone[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(env.platform),
                                           CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF, CL_TRUE, 0};
    CHECK(clCreateContext(alone, 1, &env.device, nullptr, nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_PROPERTY);
    CHECK(clCreateContextFromType(alone, CL_DEVICE_TYPE_ALL, nullptr, nullptr, &err) == nullptr);
    CHECK(err == CL_INVALID_PROPERTY);
    CHECK(settled_mappings() == maps_before);
    CHECK(open_fds_toward(fds_before) == fds_before);
}
