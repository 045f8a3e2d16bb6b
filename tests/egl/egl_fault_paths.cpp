#include "egl_fault_paths.hpp"

#include "step_result.hpp"

namespace egltest {
namespace {

using cldmabuf::test::step_result;

const Format &rgba8() { return formats[2]; }

// The spec's errors (OpenCL 3.0 API, cl_khr_gl_sharing, cl_khr_egl_image) of
// each entry point the paths call.  An enqueued step's failure may also show
// as its event's status or clFinish's.
const std::set<cl_int> kGlCreateErrors = {CL_INVALID_CONTEXT,     CL_INVALID_VALUE,
                                          CL_INVALID_MIP_LEVEL,   CL_INVALID_GL_OBJECT,
                                          CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, CL_INVALID_OPERATION,
                                          CL_OUT_OF_RESOURCES,    CL_OUT_OF_HOST_MEMORY};
const std::set<cl_int> kEglCreateErrors = {CL_INVALID_CONTEXT,  CL_INVALID_VALUE,   CL_INVALID_EGL_OBJECT_KHR,
                                           CL_IMAGE_FORMAT_NOT_SUPPORTED, CL_INVALID_OPERATION,
                                           CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY};
const std::set<cl_int> kStepErrors = {CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY,
                                      CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST};

std::set<cl_int> both(const std::set<cl_int> &a, const std::set<cl_int> &b) {
    std::set<cl_int> u = a;
    u.insert(b.begin(), b.end());
    return u;
}

// OpenCL's view of the whole image against the texture's pattern.
cl_int read_check(SweepEnv &e, cl_mem m) {
    std::vector<uint8_t> seen(e.pixels.size());
    const size_t origin[3] = {0, 0, 0}, region[3] = {W, H, 1};
    const cl_int err = clEnqueueReadImage(e.shared->queue, m, CL_TRUE, origin, region, 0, 0, seen.data(), 0,
                                          nullptr, nullptr);
    if (err != CL_SUCCESS) return err;
    return seen == e.pixels ? CL_SUCCESS : kWrongData;
}

cl_int import_gl(SweepEnv &e, SweepRun &r) {
    cl_int err = CL_SUCCESS;
    r.mem = clCreateFromGLTexture(e.shared->context, CL_MEM_READ_WRITE, GL_TEXTURE_2D, 0, e.tex, &err);
    return r.mem ? CL_SUCCESS : (err == CL_SUCCESS ? kWrongData : err);
}
cl_int import_egl(SweepEnv &e, SweepRun &r) {
    cl_int err = CL_SUCCESS;
    r.mem = e.create_from_egl(e.shared->context, e.gl.dpy, e.image, CL_MEM_READ_WRITE, nullptr, &err);
    return r.mem ? CL_SUCCESS : (err == CL_SUCCESS ? kWrongData : err);
}

cl_int acquire_gl(SweepEnv &e, SweepRun &r) {
    cl_event ev = nullptr;
    const cl_int err = step_result(e.shared->queue, clEnqueueAcquireGLObjects(e.shared->queue, 1, &r.mem, 0, nullptr, &ev), ev);
    r.acquired = err == CL_SUCCESS;
    return err;
}
cl_int release_gl(SweepEnv &e, SweepRun &r) {
    cl_event ev = nullptr;
    r.acquired = false;
    return step_result(e.shared->queue, clEnqueueReleaseGLObjects(e.shared->queue, 1, &r.mem, 0, nullptr, &ev), ev);
}
cl_int acquire_egl(SweepEnv &e, SweepRun &r) {
    cl_event ev = nullptr;
    const cl_int err = step_result(e.shared->queue, e.acquire_egl(e.shared->queue, 1, &r.mem, 0, nullptr, &ev), ev);
    r.acquired = err == CL_SUCCESS;
    return err;
}
cl_int release_egl(SweepEnv &e, SweepRun &r) {
    cl_event ev = nullptr;
    r.acquired = false;
    return step_result(e.shared->queue, e.release_egl(e.shared->queue, 1, &r.mem, 0, nullptr, &ev), ev);
}

void destroy(SweepEnv &e, SweepRun &r) {
    if (r.acquired) release_gl(e, r);  // refused when it is an EGLImage import: released below then
    if (r.mem) clReleaseMemObject(r.mem);
    r.mem = nullptr;
    clFinish(e.shared->queue);
}
void destroy_egl(SweepEnv &e, SweepRun &r) {
    if (r.acquired) release_egl(e, r);
    destroy(e, r);
}

// Import, read, destroy: the creation under faults (the read and the destroy
// are counted too: a fault there must not hide).
cl_int op_import_read(SweepEnv &e, SweepRun &r, cl_int (*import)(SweepEnv &, SweepRun &)) {
    if (cl_int err = import(e, r); err != CL_SUCCESS) return err;
    const cl_int read = read_check(e, r.mem);
    clReleaseMemObject(r.mem);
    r.mem = nullptr;
    clFinish(e.shared->queue);
    return read;
}

// Import, acquire (the GPU copy into the linear buffer), read, release (the
// copy back), destroy: the whole linear-copy path under faults.
cl_int op_copy_path(SweepEnv &e, SweepRun &r) {
    if (cl_int err = import_gl(e, r); err != CL_SUCCESS) return err;
    cl_int err = acquire_gl(e, r);
    if (err == CL_SUCCESS) err = read_check(e, r.mem);
    if (r.acquired) {
        const cl_int rel = release_gl(e, r);
        if (err == CL_SUCCESS) err = rel;
    }
    clReleaseMemObject(r.mem);
    r.mem = nullptr;
    clFinish(e.shared->queue);
    return err;
}

void setup_gl(SweepEnv &e, SweepRun &r) { REQUIRE(import_gl(e, r) == CL_SUCCESS); }
void setup_gl_acquired(SweepEnv &e, SweepRun &r) {
    setup_gl(e, r);
    REQUIRE(acquire_gl(e, r) == CL_SUCCESS);
}
void setup_egl(SweepEnv &e, SweepRun &r) { REQUIRE(import_egl(e, r) == CL_SUCCESS); }

}  // namespace

SweepEnv::SweepEnv() = default;

void SweepEnv::make() {
    shared = std::make_unique<Shared>(gl, /*allow_tiled=*/true);
    pixels = make_pixels(rgba8(), 7);
    tex = make_texture(rgba8(), &pixels);
    glFinish();
    const cl_platform_id p = shared->cl.platform;
    create_from_egl = reinterpret_cast<clCreateFromEGLImageKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(p, "clCreateFromEGLImageKHR"));
    acquire_egl = reinterpret_cast<clEnqueueAcquireEGLObjectsKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(p, "clEnqueueAcquireEGLObjectsKHR"));
    release_egl = reinterpret_cast<clEnqueueReleaseEGLObjectsKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(p, "clEnqueueReleaseEGLObjectsKHR"));
    REQUIRE(create_from_egl);
    REQUIRE(acquire_egl);
    REQUIRE(release_egl);
    auto create_image = reinterpret_cast<PFNEGLCREATEIMAGEKHRPROC>(eglGetProcAddress("eglCreateImageKHR"));
    REQUIRE(create_image);
    const EGLint attribs[] = {EGL_GL_TEXTURE_LEVEL_KHR, 0, EGL_IMAGE_PRESERVED_KHR, EGL_TRUE, EGL_NONE};
    image = create_image(gl.dpy, gl.ctx, EGL_GL_TEXTURE_2D_KHR,
                         reinterpret_cast<EGLClientBuffer>(static_cast<uintptr_t>(tex)), attribs);
    REQUIRE(image != EGL_NO_IMAGE_KHR);
}

SweepEnv::~SweepEnv() {
    if (image != EGL_NO_IMAGE_KHR) {
        auto destroy_image = reinterpret_cast<PFNEGLDESTROYIMAGEKHRPROC>(eglGetProcAddress("eglDestroyImageKHR"));
        if (destroy_image) destroy_image(gl.dpy, image);
    }
    shared.reset();
    if (tex) glDeleteTextures(1, &tex);
}

const std::vector<SweepPath> &sweep_paths() {
    static const std::vector<SweepPath> all = {
        {"gl-texture import", false, kGlCreateErrors, [](SweepEnv &, SweepRun &) {},
         [](SweepEnv &e, SweepRun &r) { return op_import_read(e, r, import_gl); }, destroy},
        {"gl acquire", false, kStepErrors, setup_gl,
         [](SweepEnv &e, SweepRun &r) {
             cl_int err = acquire_gl(e, r);
             return err == CL_SUCCESS ? read_check(e, r.mem) : err;
         },
         destroy},
        {"gl release", false, kStepErrors, setup_gl_acquired, release_gl, destroy},
        {"egl-image import", false, kEglCreateErrors, [](SweepEnv &, SweepRun &) {},
         [](SweepEnv &e, SweepRun &r) { return op_import_read(e, r, import_egl); }, destroy_egl},
        {"egl acquire+release", false, kStepErrors, setup_egl,
         [](SweepEnv &e, SweepRun &r) {
             cl_int err = acquire_egl(e, r);
             if (err == CL_SUCCESS) err = read_check(e, r.mem);
             if (r.acquired) {
                 const cl_int rel = release_egl(e, r);
                 if (err == CL_SUCCESS) err = rel;
             }
             return err;
         },
         destroy_egl},
        {"gl linear copy", true, both(kGlCreateErrors, kStepErrors), [](SweepEnv &, SweepRun &) {}, op_copy_path,
         destroy},
    };
    return all;
}

}  // namespace egltest
