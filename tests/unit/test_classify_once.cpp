// clCreateBufferWithProperties / clCreateImageWithProperties and
// clImportMemoryARM through the layer's dispatch table over a fake ICD: every
// call walks its property list once (layer/import/request.hpp counts the
// walks), whichever part of the layer serves it; the requests the layer
// builds for its own imports (clImportMemoryARM, egl, va) are the values the
// walk would make, built with no walk; and what the ICD imports itself
// (CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR) is asked once per
// device, however many imports follow (layer/icd/profile.hpp).
#include <catch2/catch_test_macros.hpp>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "layer/core/context_devices.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/dmabuf/primitives.hpp"
#include "layer/entry/dispatch_table.hpp"
#include "layer/icd/profile.hpp"
#include "layer/import/request.hpp"
#include "fake_kernel.hpp"

using namespace cldmabuf;

namespace {

template <typename T>
T *fake(uintptr_t v) {
    return reinterpret_cast<T *>(v);
}

const auto fake_platform = reinterpret_cast<cl_platform_id>(uintptr_t{0xC1A5'0000});
const cl_device_id fake_devices[] = {fake<_cl_device_id>(0xC1A5'0010), fake<_cl_device_id>(0xC1A5'0020)};
const auto fake_context = fake<_cl_context>(0xC1A5'0100);

// What the fake ICD was asked.
struct Asked {
    std::map<cl_device_id, int> handle_type_calls;    // any call for the handle types
    std::map<cl_device_id, int> handle_type_answers;  // those that read the list
    int creates = 0;
    const cl_mem_properties *last_props = nullptr;
    std::vector<cl_mem_properties> last_list;
    int arm_imports = 0;  // the ICD's own clImportMemoryARM
} asked;

// How the fake ICD behaves beyond the defaults.
struct Behaviour {
    cl_int create_error = CL_SUCCESS;  // what its creations answer
    bool arm_dmabuf = false;           // cl_arm_import_memory_dma_buf, with its clImportMemoryARM
} icd;

cl_int answer(const void *src, size_t bytes, size_t size, void *value, size_t *size_ret) {
    if (value) {
        if (size < bytes) return CL_INVALID_VALUE;
        std::memcpy(value, src, bytes);
    }
    if (size_ret) *size_ret = bytes;
    return CL_SUCCESS;
}

cl_int CL_API_CALL fake_platform_info(cl_platform_id, cl_platform_info name, size_t size, void *value,
                                      size_t *size_ret) {
    const char *text = name == CL_PLATFORM_VERSION ? "OpenCL 3.0 fake" : name == CL_PLATFORM_NAME ? "fake" : nullptr;
    if (!text) return CL_INVALID_VALUE;
    return answer(text, std::strlen(text) + 1, size, value, size_ret);
}

// The ICD imports opaque fds and dma-bufs itself.
cl_int CL_API_CALL fake_device_info(cl_device_id device, cl_device_info name, size_t size, void *value,
                                    size_t *size_ret) {
    switch (name) {
    case CL_DEVICE_PLATFORM: return answer(&fake_platform, sizeof fake_platform, size, value, size_ret);
    case CL_DEVICE_PARENT_DEVICE: {
        const cl_device_id none = nullptr;
        return answer(&none, sizeof none, size, value, size_ret);
    }
    case CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR: {
        ++asked.handle_type_calls[device];
        if (value) ++asked.handle_type_answers[device];
        const cl_external_memory_handle_type_khr types[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR,
                                                            CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR};
        return answer(types, sizeof types, size, value, size_ret);
    }
    case CL_DEVICE_EXTENSIONS: {
        const char *text = icd.arm_dmabuf ? "cl_arm_import_memory cl_arm_import_memory_dma_buf" : "";
        return answer(text, std::strlen(text) + 1, size, value, size_ret);
    }
    default: return CL_INVALID_VALUE;
    }
}

cl_mem created(const cl_mem_properties *props, cl_int *errcode_ret) {
    ++asked.creates;
    asked.last_props = props;
    asked.last_list.clear();
    for (const cl_mem_properties *p = props; p && *p; ++p) asked.last_list.push_back(*p);
    if (errcode_ret) *errcode_ret = icd.create_error;
    if (icd.create_error != CL_SUCCESS) return nullptr;
    return fake<_cl_mem>(0xC1A5'1000 + 16 * asked.creates);
}

cl_mem CL_API_CALL fake_import_memory_arm(cl_context, cl_mem_flags, const cl_import_properties_arm *, void *, size_t,
                                          cl_int *errcode_ret) {
    ++asked.arm_imports;
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return fake<_cl_mem>(0xC1A5'2000);
}

void *CL_API_CALL fake_extension_function(cl_platform_id, const char *name) {
    if (icd.arm_dmabuf && !std::strcmp(name, "clImportMemoryARM")) return reinterpret_cast<void *>(fake_import_memory_arm);
    return nullptr;
}

cl_mem CL_API_CALL fake_create_buffer(cl_context, const cl_mem_properties *props, cl_mem_flags, size_t, void *,
                                      cl_int *errcode_ret) {
    return created(props, errcode_ret);
}

cl_mem CL_API_CALL fake_create_image(cl_context, const cl_mem_properties *props, cl_mem_flags, const cl_image_format *,
                                     const cl_image_desc *, void *, cl_int *errcode_ret) {
    return created(props, errcode_ret);
}

cl_int CL_API_CALL fake_destructor_callback(cl_mem, void(CL_CALLBACK *)(cl_mem, void *), void *) {
    return CL_SUCCESS;
}

const cl_icd_dispatch &layer_over_fake_icd() {
    static cl_icd_dispatch target = [] {
        cl_icd_dispatch t{};
        t.clGetPlatformInfo = fake_platform_info;
        t.clGetDeviceInfo = fake_device_info;
        t.clCreateBufferWithProperties = fake_create_buffer;
        t.clCreateImageWithProperties = fake_create_image;
        t.clSetMemObjectDestructorCallback = fake_destructor_callback;
        t.clGetExtensionFunctionAddressForPlatform = fake_extension_function;
        return t;
    }();
    const cl_icd_dispatch &layer = *init_dispatch(&target, sizeof(cl_icd_dispatch) / sizeof(void *));
    profile_reset_for_tests();
    remember_context_devices(fake_context, fake_devices, 2);
    asked = {};
    icd = {};
    return layer;
}

// Property walks one call makes.
template <typename Call>
uint64_t walks_of(Call &&call) {
    const uint64_t before = property_walks().load();
    call();
    return property_walks().load() - before;
}

}  // namespace

TEST_CASE("clCreate*WithProperties: one property walk per call, whoever serves it", "[classify]") {
    const cl_icd_dispatch &layer = layer_over_fake_icd();
    const cl_image_format format{CL_RGBA, CL_UNORM_INT8};
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = desc.image_height = 4;
    cl_int err = CL_SUCCESS;
    auto buffer = [&](const cl_mem_properties *props) {
        return layer.clCreateBufferWithProperties(fake_context, props, CL_MEM_READ_WRITE, 64, nullptr, &err);
    };
    auto image = [&](const cl_mem_properties *props) {
        return layer.clCreateImageWithProperties(fake_context, props, CL_MEM_READ_WRITE, &format, &desc, nullptr,
                                                 &err);
    };

    SECTION("not ours: the ICD gets the application's list") {
        const cl_mem_properties props[] = {0x4216 /* CL_MEM_CHANNEL_INTEL */, 1, 0};
        CHECK(walks_of([&] { CHECK(buffer(props) != nullptr); }) == 1);
        CHECK(walks_of([&] { CHECK(image(props) != nullptr); }) == 1);
        CHECK(walks_of([&] { CHECK(buffer(nullptr) != nullptr); }) == 1);
        CHECK(asked.creates == 3);
        CHECK(asked.last_props == nullptr);
    }
    SECTION("another handle type: the ICD's, with the list untouched") {
        const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, 5, 0};
        CHECK(walks_of([&] { CHECK(buffer(props) != nullptr); }) == 1);
        CHECK(asked.last_props == props);
        CHECK(walks_of([&] { CHECK(image(props) != nullptr); }) == 1);
        CHECK(asked.last_props == props);
        CHECK(asked.creates == 2);
    }
    SECTION("a handle type no device lists: CL_INVALID_PROPERTY, the ICD not called") {
        const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_WIN32_KHR, 5, 0};
        CHECK(walks_of([&] { CHECK(buffer(props) == nullptr); }) == 1);
        CHECK(err == CL_INVALID_PROPERTY);
        CHECK(asked.creates == 0);
    }
    SECTION("a dma-buf the ICD imports itself: the application's list, one walk") {
        const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, 5, 0x4216, 1, 0};
        CHECK(walks_of([&] { CHECK(buffer(props) != nullptr); }) == 1);
        CHECK(walks_of([&] { CHECK(image(props) != nullptr); }) == 1);
        CHECK(asked.last_list == std::vector<cl_mem_properties>{CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, 5, 0x4216, 1});
        CHECK(asked.creates == 2);
    }
    SECTION("a refused list: one walk, the ICD not called") {
        const cl_mem_properties twice[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, 5,
                                           CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, 5, 0};
        CHECK(walks_of([&] { CHECK(buffer(twice) == nullptr); }) == 1);
        CHECK(err == CL_INVALID_PROPERTY);
        const cl_mem_properties alloc_with_handle[] = {CL_MEM_DMA_BUF_ALLOCATE_CLDMABUF, 1,
                                                       CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, 5, 0};
        CHECK(walks_of([&] { CHECK(image(alloc_with_handle) == nullptr); }) == 1);
        CHECK(err == CL_INVALID_PROPERTY);
        CHECK(asked.creates == 0);
    }
}

TEST_CASE("the ICD's import handle types: asked once per device across many imports", "[classify]") {
    const cl_icd_dispatch &layer = layer_over_fake_icd();
    const cl_mem_properties opaque[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, 5, 0};
    const cl_mem_properties dmabuf[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, 5, 0};
    const cl_mem_properties unlisted[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_WIN32_KHR, 5, 0};
    cl_int err = CL_SUCCESS;
    constexpr int kImports = 8;
    for (int i = 0; i < kImports; ++i) {
        for (const cl_mem_properties *props : {opaque, dmabuf, unlisted})
            layer.clCreateBufferWithProperties(fake_context, props, CL_MEM_READ_WRITE, 64, nullptr, &err);
    }
    CHECK(asked.creates == 2 * kImports);
    for (cl_device_id d : fake_devices) {
        INFO("device " << static_cast<const void *>(d));
        CHECK(asked.handle_type_answers[d] == 1);
        CHECK(asked.handle_type_calls[d] <= 2);  // its size, then its list
    }
}

namespace {

void check_same(const DmabufRequest &built, const DmabufRequest &walked) {
    CHECK(built.fd == walked.fd);
    CHECK(built.has_device_list == walked.has_device_list);
    CHECK(built.devices == walked.devices);
    CHECK(built.layer.plane_offset == walked.layer.plane_offset);
    CHECK(built.layer.has_modifier == walked.layer.has_modifier);
    CHECK(built.layer.modifier == walked.layer.modifier);
    CHECK(built.layer.allow_tiled == walked.layer.allow_tiled);
    CHECK(built.layer.assume_linear == walked.layer.assume_linear);
    CHECK(built.names_layer_properties == walked.names_layer_properties);
    CHECK(built.passthrough == walked.passthrough);
    CHECK(built.original == walked.original);
}

DmabufRequest walked(const cl_mem_properties *props, RequestKind kind) {
    MemRequest request = classify_mem_request(props, kind);
    REQUIRE(std::holds_alternative<DmabufRequest>(request));
    return std::get<DmabufRequest>(std::move(request));
}

}  // namespace

TEST_CASE("the layer's own import requests: what the walk makes of the same list, with no walk", "[classify]") {
    SECTION("a buffer (clImportMemoryARM, clCreateFromGLBuffer): the handle alone") {
        DmabufRequest built;
        CHECK(walks_of([&] { built = dmabuf_buffer_request(7); }) == 0);
        const cl_mem_properties list[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, 7, 0};
        check_same(built, walked(list, RequestKind::buffer));
        CHECK_FALSE(built.names_layer_properties);  // an ICD that imports dma-bufs may take it
    }
    SECTION("an EGLImage's plane: offset and modifier") {
        ImageLayerProperties plane;
        plane.plane_offset = 4096;
        plane.has_modifier = true;
        plane.modifier = 0;  // DRM_FORMAT_MOD_LINEAR
        DmabufRequest built;
        CHECK(walks_of([&] { built = dmabuf_image_request(9, plane); }) == 0);
        const cl_mem_properties list[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, 9, CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF,
                                          4096, CL_MEM_DMA_BUF_MODIFIER_CLDMABUF, 0, 0};
        check_same(built, walked(list, RequestKind::image));
        CHECK(built.names_layer_properties);  // the layer's import, whatever the ICD imports
    }
    SECTION("a VA surface's plane with the context's consent to a tiled layout") {
        ImageLayerProperties plane;
        plane.plane_offset = 0;
        plane.has_modifier = true;
        plane.modifier = 0x0100000000000002ull;  // I915_FORMAT_MOD_Y_TILED
        plane.allow_tiled = true;
        DmabufRequest built;
        CHECK(walks_of([&] { built = dmabuf_image_request(11, plane); }) == 0);
        const cl_mem_properties list[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                          11,
                                          CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF,
                                          0,
                                          CL_MEM_DMA_BUF_MODIFIER_CLDMABUF,
                                          0x0100000000000002ull,
                                          CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF,
                                          CL_TRUE,
                                          0};
        check_same(built, walked(list, RequestKind::image));
    }
}

TEST_CASE("clImportMemoryARM: one walk of its list per call, the spec's errors in the spec's order", "[classify]") {
    const cl_icd_dispatch &layer = layer_over_fake_icd();
    unit::FakeKernel kernel;
    unit::ScopedKernel scope(&kernel);
    constexpr int kDmabuf = 5, kNotDmabuf = 6;
    kernel.fs_magic[kDmabuf] = DMA_BUF_FS_MAGIC;
    kernel.sizes[kDmabuf] = 4096;
    kernel.fs_magic[kNotDmabuf] = 0x01021994;  // tmpfs (memfd)
    using ImportFn = cl_mem(CL_API_CALL *)(cl_context, cl_mem_flags, const cl_import_properties_arm *, void *, size_t,
                                           cl_int *);
    auto import = reinterpret_cast<ImportFn>(
        layer.clGetExtensionFunctionAddressForPlatform(fake_platform, "clImportMemoryARM"));
    REQUIRE(import != nullptr);
    const cl_import_properties_arm dmabuf[] = {CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM, 0};
    int fd = kDmabuf;
    cl_int err = CL_SUCCESS;

    SECTION("a dma-buf: one walk, the KHR import given the layer's duplicate, no list parsed again") {
        cl_mem mem = nullptr;
        CHECK(walks_of([&] { mem = import(fake_context, CL_MEM_READ_WRITE, dmabuf, &fd, 4096, &err); }) == 1);
        CHECK(mem != nullptr);
        CHECK(err == CL_SUCCESS);
        // The fake ICD imports dma-bufs itself: it was given the handle alone, on the dup (fd + 100).
        CHECK(asked.creates == 1);
        CHECK(asked.last_list == std::vector<cl_mem_properties>{CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, kDmabuf + 100});
    }
    SECTION("CL_IMPORT_MEMORY_WHOLE_ALLOCATION_ARM: the dma-buf's size, one walk") {
        CHECK(walks_of([&] {
                  CHECK(import(fake_context, CL_MEM_READ_WRITE, dmabuf, &fd, CL_IMPORT_MEMORY_WHOLE_ALLOCATION_ARM,
                               &err) != nullptr);
              }) == 1);
        CHECK(err == CL_SUCCESS);
    }
    SECTION("a refused list: CL_INVALID_PROPERTY, before memory or size are looked at, one walk") {
        const cl_import_properties_arm unknown[] = {0x40B6, 1, CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM, 0};
        const cl_import_properties_arm twice[] = {CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM, CL_IMPORT_TYPE_ARM,
                                                  CL_IMPORT_TYPE_DMA_BUF_ARM, 0};
        const cl_import_properties_arm not_boolean[] = {CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM,
                                                        CL_IMPORT_TYPE_PROTECTED_ARM, 2, 0};
        for (const cl_import_properties_arm *list : {unknown, twice, not_boolean}) {
            err = CL_SUCCESS;
            CHECK(walks_of([&] { CHECK(import(fake_context, CL_MEM_READ_WRITE, list, nullptr, 0, &err) == nullptr); }) ==
                  1);
            CHECK(err == CL_INVALID_PROPERTY);
        }
        CHECK(asked.creates == 0);
    }
    SECTION("host memory (the default type) without the ICD's own import: CL_INVALID_PROPERTY") {
        const cl_import_properties_arm host[] = {CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_HOST_ARM, 0};
        CHECK(walks_of([&] { CHECK(import(fake_context, CL_MEM_READ_WRITE, host, &fd, 64, &err) == nullptr); }) == 1);
        CHECK(err == CL_INVALID_PROPERTY);
        CHECK(walks_of([&] { CHECK(import(fake_context, CL_MEM_READ_WRITE, nullptr, &fd, 64, &err) == nullptr); }) ==
              0);
        CHECK(err == CL_INVALID_PROPERTY);
    }
    SECTION("memory, then size, then the fd: CL_INVALID_VALUE, CL_INVALID_BUFFER_SIZE, CL_INVALID_VALUE") {
        CHECK(walks_of([&] { CHECK(import(fake_context, CL_MEM_READ_WRITE, dmabuf, nullptr, 0, &err) == nullptr); }) ==
              1);
        CHECK(err == CL_INVALID_VALUE);
        CHECK(walks_of([&] { CHECK(import(fake_context, CL_MEM_READ_WRITE, dmabuf, &fd, 0, &err) == nullptr); }) == 1);
        CHECK(err == CL_INVALID_BUFFER_SIZE);
        int memfd = kNotDmabuf;
        CHECK(walks_of([&] { CHECK(import(fake_context, CL_MEM_READ_WRITE, dmabuf, &memfd, 64, &err) == nullptr); }) ==
              1);
        CHECK(err == CL_INVALID_VALUE);
        CHECK(asked.creates == 0);
    }
    SECTION("an import refused for its handle: CL_INVALID_VALUE (it is about memory), one walk") {
        icd.create_error = CL_INVALID_PROPERTY;
        CHECK(walks_of([&] { CHECK(import(fake_context, CL_MEM_READ_WRITE, dmabuf, &fd, 4096, &err) == nullptr); }) ==
              1);
        CHECK(err == CL_INVALID_VALUE);
        CHECK(asked.creates == 1);
    }
    SECTION("an ICD with cl_arm_import_memory_dma_buf: its own import, given the list the layer would refuse") {
        icd.arm_dmabuf = true;
        const cl_import_properties_arm vendor[] = {0x40B6, 1, CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM, 0};
        CHECK(walks_of([&] { CHECK(import(fake_context, CL_MEM_READ_WRITE, vendor, &fd, 4096, &err) != nullptr); }) ==
              1);
        CHECK(err == CL_SUCCESS);
        CHECK(asked.arm_imports == 1);
        CHECK(asked.creates == 0);
    }
}
