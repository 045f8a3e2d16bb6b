// The layer in a process where EGL cannot be loaded (run with
// CLDMABUF_EGL_LIB=/nonexistent/libEGL.so.1): no EGL/GL extension is
// advertised and every interop call fails cleanly.
#include <catch2/catch_test_macros.hpp>

#include <cstdlib>

#include "egl_fixture.hpp"

using namespace egltest;

TEST_CASE("without EGL the interop calls fail cleanly", "[noegl]") {
    const char *lib = std::getenv("CLDMABUF_EGL_LIB");
    if (!lib || std::string(lib).find("nonexistent") == std::string::npos) SKIP("run with CLDMABUF_EGL_LIB=/nonexistent/...");
    ClPick cl;
    REQUIRE(cl.platform);
    const std::string exts = platform_string(cl.platform, CL_PLATFORM_EXTENSIONS);
    CHECK(has_word(exts, "cl_khr_external_memory_dma_buf"));  // the layer is there...
    CHECK_FALSE(has_word(exts, "cl_khr_egl_image"));           // ...but offers no EGL interop
    CHECK_FALSE(has_word(exts, "cl_khr_gl_sharing"));

    auto create_from_egl = reinterpret_cast<clCreateFromEGLImageKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(cl.platform, "clCreateFromEGLImageKHR"));
    auto acquire_egl = reinterpret_cast<clEnqueueAcquireEGLObjectsKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(cl.platform, "clEnqueueAcquireEGLObjectsKHR"));
    auto gl_context_info = reinterpret_cast<clGetGLContextInfoKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(cl.platform, "clGetGLContextInfoKHR"));
    REQUIRE(create_from_egl);
    REQUIRE(acquire_egl);
    REQUIRE(gl_context_info);

    cl_int err = CL_SUCCESS;
    cl_context context = clCreateContext(nullptr, 1, &cl.device, nullptr, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, cl.device, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);

    // A display handle that cannot be valid: there is no EGL in this process.
    int fake = 0;
    cl_mem mem = create_from_egl(context, &fake, &fake, CL_MEM_READ_ONLY, nullptr, &err);
    CHECK(mem == nullptr);
    CHECK(err == CL_INVALID_EGL_OBJECT_KHR);
    // Still validated before EGL is needed.
    const cl_egl_image_properties_khr bad_props[] = {0x4242, 1, 0};
    mem = create_from_egl(context, &fake, &fake, CL_MEM_READ_ONLY, bad_props, &err);
    CHECK(err == CL_INVALID_PROPERTY);
    mem = create_from_egl(context, &fake, &fake, CL_MEM_USE_HOST_PTR, nullptr, &err);
    CHECK(err == CL_INVALID_VALUE);

    // A plain buffer is no EGL object.
    cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    CHECK(acquire_egl(queue, 1, &buffer, 0, nullptr, nullptr) == CL_INVALID_EGL_OBJECT_KHR);
    CHECK(clEnqueueAcquireGLObjects(queue, 1, &buffer, 0, nullptr, nullptr) == CL_INVALID_GL_OBJECT);
    cl_gl_object_type type = 0;
    CHECK(clGetGLObjectInfo(buffer, &type, nullptr) == CL_INVALID_GL_OBJECT);

    // GL objects need a GL-sharing context, which needs EGL.
    mem = clCreateFromGLTexture(context, CL_MEM_READ_ONLY, 0x0DE1 /* GL_TEXTURE_2D */, 0, 1, &err);
    CHECK(mem == nullptr);
    CHECK(err == CL_INVALID_CONTEXT);
    const cl_context_properties gl_props[] = {
        CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(cl.platform),
        CL_GL_CONTEXT_KHR,   reinterpret_cast<cl_context_properties>(&fake),
        CL_EGL_DISPLAY_KHR,  reinterpret_cast<cl_context_properties>(&fake),
        0};
    cl_context gl_context = clCreateContext(gl_props, 1, &cl.device, nullptr, nullptr, &err);
    CHECK(gl_context == nullptr);
    CHECK(err == CL_INVALID_OPERATION);
    gl_context = clCreateContextFromType(gl_props, CL_DEVICE_TYPE_ALL, nullptr, nullptr, &err);
    CHECK(gl_context == nullptr);
    CHECK(err == CL_INVALID_OPERATION);
    cl_device_id dev = nullptr;
    CHECK(gl_context_info(gl_props, CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR, sizeof dev, &dev, nullptr) ==
          CL_INVALID_OPERATION);

    // Contexts without GL properties are untouched.
    const cl_context_properties plain[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(cl.platform),
                                           0};
    cl_context other = clCreateContext(plain, 1, &cl.device, nullptr, nullptr, &err);
    CHECK(err == CL_SUCCESS);
    if (other) clReleaseContext(other);

    clReleaseMemObject(buffer);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
}
