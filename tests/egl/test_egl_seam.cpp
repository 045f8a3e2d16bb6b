// layer/egl's kernel calls and refusals, without EGL or OpenCL: every fd egl
// closes goes through the kernel seam (so fakes and the virtual Gen9 see it),
// and a refused creation is counted with the other refused imports.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "layer/core/dispatch.hpp"
#include "layer/entry/dispatch_table.hpp"
#include "layer/egl/egl_api.hpp"
#include "layer/egl/dmabuf_export.hpp"
#include "layer/egl/object_records.hpp"
#include "layer/egl/egl_image_import.hpp"
#include "layer/base/stats.hpp"
#include "../unit/fake_kernel.hpp"

using namespace cldmabuf;

namespace {

struct ClosingKernel : unit::FakeKernel {
    std::vector<int> closed;
    int close(int fd) override {
        closed.push_back(fd);
        return 0;
    }
};

// fd numbers no process has open: were a close to bypass the seam, it would
// fail with EBADF instead of closing a test's fd.
constexpr int kPlane0 = 1000001, kPlane1 = 1000002;
bool export_succeeds = false;

EGLBoolean query(EGLDisplay, EGLImageKHR, int *fourcc, int *planes, EGLuint64KHR *modifiers) {
    *fourcc = 0x34325241;  // AR24
    *planes = 1;
    if (modifiers) modifiers[0] = 0;
    return EGL_TRUE;
}

// A driver that hands out two fds (one per plane it thinks it has).
EGLBoolean export_two(EGLDisplay, EGLImageKHR, int *fds, EGLint *strides, EGLint *offsets) {
    fds[0] = kPlane0;
    fds[1] = kPlane1;
    strides[0] = 256;
    offsets[0] = 0;
    return export_succeeds ? EGL_TRUE : EGL_FALSE;
}

EglApi fake_egl() {
    EglApi egl;
    egl.QueryString = [](EGLDisplay, EGLint) -> const char * { return "EGL_MESA_image_dma_buf_export"; };
    egl.GetError = []() -> EGLint { return EGL_BAD_ACCESS; };
    egl.ExportDMABUFImageQueryMESA = query;
    egl.ExportDMABUFImageMESA = export_two;
    return egl;
}

}  // namespace

TEST_CASE("a failed EGLImage export closes its fds through the kernel seam", "[egl-seam]") {
    ClosingKernel k;
    unit::ScopedKernel scope(&k);
    const EglApi egl = fake_egl();
    export_succeeds = false;
    ExportedImage ex;
    std::string why;
    CHECK_FALSE(export_dmabuf(egl, reinterpret_cast<EGLDisplay>(1), reinterpret_cast<EGLImageKHR>(1), &ex, &why));
    std::sort(k.closed.begin(), k.closed.end());
    CHECK(k.closed == std::vector<int>{kPlane0, kPlane1});
}

TEST_CASE("an EGLImage export keeps plane 0 and closes the rest through the kernel seam", "[egl-seam]") {
    ClosingKernel k;
    unit::ScopedKernel scope(&k);
    const EglApi egl = fake_egl();
    export_succeeds = true;
    ExportedImage ex;
    std::string why;
    REQUIRE(export_dmabuf(egl, reinterpret_cast<EGLDisplay>(1), reinterpret_cast<EGLImageKHR>(1), &ex, &why));
    CHECK(ex.fd.get() == kPlane0);
    CHECK(k.closed == std::vector<int>{kPlane1});
}

TEST_CASE("egl's refusals are counted once, like every refused import", "[egl-seam]") {
    const uint64_t before = stats().import_errors.load();
    cl_int err = CL_SUCCESS;
    CHECK(egl::refuse(&err, CL_INVALID_GL_OBJECT, "clCreateFromGLTexture", "test refusal") == nullptr);
    CHECK(err == CL_INVALID_GL_OBJECT);
    CHECK(stats().import_errors.load() == before + 1);
    // The layer's own import already counted its refusal: egl only names its call.
    CHECK(egl::import_failed(&err, CL_INVALID_IMAGE_SIZE, "clCreateFromEGLImageKHR", "test import failure") ==
          nullptr);
    CHECK(err == CL_INVALID_IMAGE_SIZE);
    CHECK(stats().import_errors.load() == before + 1);
}

// ---- late destructor callbacks (issue #28) ------------------------------------------------

namespace {

using MemCallback = void(CL_CALLBACK *)(cl_mem, void *);
std::vector<std::pair<MemCallback, void *>> held_callbacks;

cl_int CL_API_CALL hold_callback(cl_mem, MemCallback fn, void *data) {
    held_callbacks.emplace_back(fn, data);
    return CL_SUCCESS;
}

}  // namespace

// NVIDIA calls a cl_mem's destructor callbacks late, after it may have given
// the handle to a new object: the late callback of the first egl object must
// leave the record of the second, which now has the handle, alone.
TEST_CASE("a late destructor callback drops only its own egl object's record", "[egl-seam]") {
    static cl_icd_dispatch target{};
    target.clSetMemObjectDestructorCallback = hold_callback;
    init_dispatch(&target, sizeof target / sizeof(void *));
    held_callbacks.clear();
    const auto mem = reinterpret_cast<cl_mem>(uintptr_t{0x7e57});
    egl::EglObject first, second;
    first.name = 1;
    second.name = 2;
    IcdMem held(mem);  // nothing releases it: the target has no clReleaseMemObject
    REQUIRE(egl::track_object(held, first));
    REQUIRE(egl::track_object(held, second));  // the ICD gave the handle back before the first callback
    (void)held.hand_off();
    REQUIRE(held_callbacks.size() == 2);
    held_callbacks[0].first(mem, held_callbacks[0].second);  // the first object's, late
    egl::EglObject seen;
    REQUIRE(egl::find_object(mem, &seen));
    CHECK(seen.name == 2);
    held_callbacks[1].first(mem, held_callbacks[1].second);
    CHECK_FALSE(egl::find_object(mem, nullptr));
}
