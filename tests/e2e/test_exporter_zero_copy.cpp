// The exporter gate of the blitter and the zero-copy check
// (layer/dmabuf/exporter.hpp, layer/import/zero_copy_check.hpp), on the virtual
// Gen9: its dma-bufs report exp_name "i915" in /proc/self/fdinfo, and
// vgen9_set_export_name() makes the next imports see another exporter.
// Tagged [exporter] and [zcc]; meson runs [zcc] alone too (the check then
// runs on the test's own buffer) and with CLDMABUF_DEBUG=zero-copy-fail.
#include <catch2/catch_test_macros.hpp>

#include <linux/ioctl.h>  // _IOWR behind the DMA_BUF_IOCTL_* numbers (issue #29)
#include <linux/dma-buf.h>

#include <cstdint>
#include <cstring>

#include <drm_fourcc.h>

#include "CL/cl_ext_cldmabuf.h"
#include "cl_fixture.hpp"
#include "dmabuf_view.hpp"
#include "image_desc.hpp"
#include "layer_probe.hpp"
#include "test_dmabufs.hpp"
#include "test_env.hpp"
#include "vgen9_control.hpp"
#include "layer_probe.hpp"

using namespace e2e;
using cldmabuf::test::debug_word_on;
using cldmabuf::test::env_is;
using cldmabuf::test::Vgen9Control;
using cldmabuf::test::vgen9;

namespace {

cl_mem import(const ClEnv &env, Dmabuf &buf, cl_mem_flags flags = CL_MEM_READ_WRITE) {
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(buf.fd),
                                       0};
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBufferWithProperties(env.context, props, flags, buf.size, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    REQUIRE(mem);
    buf.release_fd();
    return mem;
}

// The copy route: forced, or a device without host-unified memory (NVIDIA's discrete GPU).
bool copies_expected() {
    return env_is("CLDMABUF_IMPORT", "copy") || debug_word_on("zero-copy-fail") || !layer_imports_in_place();
}

// Copies one import into another exported as `exporter`; returns how many
// blitter batches the copy submitted (the bytes are checked either way).
uint64_t copy_between_imports(const ClEnv &env, const Vgen9Control &sim, const char *exporter) {
    const size_t size = 64 * 1024;
    sim.set_export_name(exporter);  // fdinfo is read at import
    Dmabuf a = make_dmabuf(size), b = make_dmabuf(size);
    DmabufView wa(a.dup_fd(), size), wb(b.dup_fd(), size);
    wa.fill_words(0x1000);
    wb.fill_words(0);
    cl_mem ma = import(env, a), mb = import(env, b);
    sim.set_export_name(nullptr);
    // Still imported as the ICD's route allows: only the blitter refuses.
    const cl_uint want = copies_expected() ? CL_DMA_BUF_ROUTE_COPY_CLDMABUF : CL_DMA_BUF_ROUTE_HOST_PTR_CLDMABUF;
    CHECK(route_of(ma) == want);
    CHECK(route_of(mb) == want);
    const uint64_t before = sim.submitted();
    cl_mem both[] = {ma, mb};
    REQUIRE(env.acquire(env.queue, 2, both, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clEnqueueCopyBuffer(env.queue, ma, mb, 0, 0, size, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(env.release(env.queue, 2, both, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    const uint64_t batches = sim.submitted() - before;
    CHECK(wb.has_words(0x1000));
    clReleaseMemObject(ma);
    clReleaseMemObject(mb);
    return batches;
}

}  // namespace

TEST_CASE("exporter: the blitter takes the virtual Gen9's own exports and no other exporter's", "[kernel][exporter]") {
    REQUIRE_DMABUF();
    const Vgen9Control &sim = vgen9();
    if (!sim.loaded) SKIP("needs the virtual Gen9 (exporter and blitter)");
    if (copies_expected() || env_is("CLDMABUF_BLT", "off")) SKIP("the blitter only copies between zero-copy imports");
    if (!layer_takes_blitter()) SKIP("the layer does not take the blitter here (see [probe])");
    ClEnv env;
    CHECK(copy_between_imports(env, sim, "i915") >= 1);
    if (env_is("CLDMABUF_BLT_EXPORTERS", "any")) {
        // The opt-in: the blitter takes whatever its node can import.
        CHECK(copy_between_imports(env, sim, "system") >= 1);
        CHECK(copy_between_imports(env, sim, "udmabuf") >= 1);
        return;
    }
    // A system-heap or udmabuf dma-buf is not the blitter's GPU's memory: the
    // ICD copies it, with the same bytes.
    CHECK(copy_between_imports(env, sim, "system") == 0);
    CHECK(copy_between_imports(env, sim, "udmabuf") == 0);
    CHECK(copy_between_imports(env, sim, "drm") == 0);
    // And i915 again: the gate is per import, not a sticky fallback.
    CHECK(copy_between_imports(env, sim, "i915") >= 1);

    // A tiled image needs the blitter: another exporter's is refused, and
    // the fd stays the application's.
    if (!device_has_images(env)) return;
    const size_t w = 128, h = 8, pitch = 512;  // one row of X tiles (512 B x 8 rows)
    for (const char *exporter : {"system", "i915"}) {
        sim.set_export_name(exporter);
        Dmabuf buf = make_dmabuf(pitch * h);
        const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                           static_cast<cl_mem_properties>(buf.fd),
                                           CL_MEM_DMA_BUF_MODIFIER_CLDMABUF,
                                           I915_FORMAT_MOD_X_TILED,
                                           CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF,
                                           CL_TRUE,
                                           0};
        const cl_image_format format{CL_RGBA, CL_UNSIGNED_INT8};
        const cl_image_desc desc = cldmabuf::test::image2d_desc(w, h);
        cl_int err = CL_SUCCESS;
        cl_mem image =
            clCreateImageWithProperties(env.context, props, CL_MEM_READ_WRITE, &format, &desc, nullptr, &err);
        sim.set_export_name(nullptr);
        if (!std::strcmp(exporter, "system")) {
            CHECK(image == nullptr);
            CHECK(err == CL_INVALID_OPERATION);
            CHECK(fd_is_open(buf.fd));
        } else {
            CHECK(err == CL_SUCCESS);
            REQUIRE(image);
            buf.release_fd();
            clReleaseMemObject(image);
        }
    }
}

TEST_CASE("zero-copy check: the ICD's use of the mapping is checked, the bytes are left as they were", "[kernel][zcc]") {
    REQUIRE_DMABUF();
    ClEnv env;
    const size_t size = 16 * 1024;
    Dmabuf buf = make_dmabuf(size);
    DmabufView words(buf.dup_fd(), size);
    words.fill_words(0xabc00000);
    cl_mem mem = import(env, buf);
    // The check writes the first bytes through the ICD and restores them.
    CHECK(words.has_words(0xabc00000));
    if (copies_expected()) {
        // CLDMABUF_DEBUG=zero-copy-fail plays an ICD that copies: never
        // reported as zero-copy, a device copy synced on acquire/release.
        CHECK(route_of(mem) == CL_DMA_BUF_ROUTE_COPY_CLDMABUF);
    } else {
        // PoCL uses CL_MEM_USE_HOST_PTR memory in place: the check passes.
        CHECK(route_of(mem) == CL_DMA_BUF_ROUTE_HOST_PTR_CLDMABUF);
    }
    // Either way the data flows: written after the import, incremented by a
    // kernel, seen by the CPU after release.
    words.fill_words(500);
    cl_kernel k = env.build_kernel("kernel void inc(global uint *b) { size_t i = get_global_id(0); b[i] += 1; }",
                                   "inc");
    const size_t n = size / 4;
    REQUIRE(env.acquire(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clSetKernelArg(k, 0, sizeof mem, &mem) == CL_SUCCESS);
    REQUIRE(clEnqueueNDRangeKernel(env.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(env.release(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clFinish(env.queue) == CL_SUCCESS);
    CHECK(words.has_words(501));
    clReleaseKernel(k);
    clReleaseMemObject(mem);

    if (debug_word_on("zero-copy-fail")) {
        // An image over such a dma-buf is a device copy too, whatever its
        // own route probe (which runs on ordinary memory) says.
        if (device_has_images(env)) {
            Dmabuf pixels = make_dmabuf(64 * 16 * 4);
            const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                               static_cast<cl_mem_properties>(pixels.fd), 0};
            const cl_image_format format{CL_RGBA, CL_UNSIGNED_INT8};
            const cl_image_desc desc = cldmabuf::test::image2d_desc(64, 16);
            cl_int err = CL_SUCCESS;
            cl_mem image =
                clCreateImageWithProperties(env.context, props, CL_MEM_READ_ONLY, &format, &desc, nullptr, &err);
            REQUIRE(err == CL_SUCCESS);
            pixels.release_fd();
            CHECK(route_of(image) == CL_DMA_BUF_ROUTE_COPY_CLDMABUF);
            clReleaseMemObject(image);
        }
        // cl_arm_import_memory never copies: refused.
        using ImportFn = cl_mem(CL_API_CALL *)(cl_context, cl_mem_flags, const cl_import_properties_arm *, void *,
                                               size_t, cl_int *);
        auto arm = reinterpret_cast<ImportFn>(
            clGetExtensionFunctionAddressForPlatform(env.platform, "clImportMemoryARM"));
        REQUIRE(arm);
        const cl_import_properties_arm props[] = {CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM, 0};
        Dmabuf other = make_dmabuf(4096);
        int fd = other.fd;
        cl_int err = CL_SUCCESS;
        CHECK(arm(env.context, CL_MEM_READ_WRITE, props, &fd, 4096, &err) == nullptr);
        CHECK(err == CL_INVALID_OPERATION);
        CHECK(fd_is_open(other.fd));
    }
}
