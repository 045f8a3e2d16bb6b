// The bad-input catalogue (issue #16, item 5): one row per distinct bad call
// the layer answers itself.  Each row is the call, the spec's error and a
// substring of the ONE log line the layer must write for it (CLDMABUF_LOG at
// its default, error).  The rows ARE the catalogue: docs/reliability.md's
// table is checked against them (the last test case), so neither can drift;
// CLDMABUF_CATALOGUE_PRINT=1 prints the table's rows from these.
//
// Runs in e2e-sim-catalogue (the virtual Gen9's dma-bufs, CLDMABUF_LOG=error);
// the hidden tag keeps it out of the lanes that silence the log.
#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <drm.h>
#include <drm_fourcc.h>
#include <i915_drm.h>

#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#include <CL/cl_gl.h>
#include <CL/cl_egl.h>

#include "CL/cl_ext_cldmabuf.h"
#include "captured_log.hpp"
#include "cl_fixture.hpp"
#include "test_dmabufs.hpp"

using namespace e2e;
using cldmabuf::test::captured_log;

namespace {

const cl_mem_properties DMABUF = CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR;
cl_mem_properties P(int fd) { return static_cast<cl_mem_properties>(fd); }
const cl_image_format kRgba8{CL_RGBA, CL_UNSIGNED_INT8};

// What a row may use; everything it makes is released after the row.
struct Lab {
    ClEnv &env;
    ClEnv &other;  // a second context (objects of other contexts)
    std::vector<Dmabuf> bufs;
    std::vector<cl_mem> mems;
    std::vector<int> fds;

    Lab(ClEnv &e, ClEnv &o) : env(e), other(o) {}
    ~Lab() {
        for (cl_mem m : mems) clReleaseMemObject(m);
        clFinish(env.queue);
        for (int fd : fds) close(fd);
    }
    // A dma-buf whose fd stays the Lab's unless an import takes it (taken()).
    int dmabuf(size_t size = 16384) {
        bufs.push_back(make_dmabuf(size));
        return bufs.back().fd;
    }
    void taken() { bufs.back().release_fd(); }
    int keep(int fd) {
        fds.push_back(fd);
        return fd;
    }
    cl_mem keep(cl_mem m) {
        REQUIRE(m);
        mems.push_back(m);
        return m;
    }
    cl_mem import(size_t size = 16384, cl_mem_flags flags = CL_MEM_READ_WRITE, ClEnv *in = nullptr) {
        const int fd = dmabuf(size);
        const cl_mem_properties props[] = {DMABUF, P(fd), 0};
        cl_int err = CL_SUCCESS;
        cl_mem m = clCreateBufferWithProperties((in ? *in : env).context, props, flags, size, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        taken();
        return keep(m);
    }
    cl_mem image(size_t w = 64, size_t h = 16, cl_image_format f = kRgba8) {
        const int fd = dmabuf(16384);
        const cl_mem_properties props[] = {DMABUF, P(fd), 0};
        cl_image_desc d{};
        d.image_type = CL_MEM_OBJECT_IMAGE2D;
        d.image_width = w;
        d.image_height = h;
        cl_int err = CL_SUCCESS;
        cl_mem m = clCreateImageWithProperties(env.context, props, CL_MEM_READ_WRITE, &f, &d, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        taken();
        return keep(m);
    }
    cl_mem plain(size_t size = 4096) {
        cl_int err = CL_SUCCESS;
        return keep(clCreateBuffer(env.context, CL_MEM_READ_WRITE, size, nullptr, &err));
    }
};

cl_int buffer_import(Lab &l, std::vector<cl_mem_properties> props, cl_mem_flags flags = CL_MEM_READ_WRITE,
                     size_t size = 4096, void *host = nullptr) {
    props.push_back(0);
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBufferWithProperties(l.env.context, props.data(), flags, size, host, &err);
    if (m) {
        l.keep(m);
        return 1;  // never expected: the row fails
    }
    return err;
}

cl_image_desc desc2d(size_t w, size_t h, size_t pitch = 0) {
    cl_image_desc d{};
    d.image_type = CL_MEM_OBJECT_IMAGE2D;
    d.image_width = w;
    d.image_height = h;
    d.image_row_pitch = pitch;
    return d;
}

cl_int image_import(Lab &l, std::vector<cl_mem_properties> props, const cl_image_desc *desc,
                    const cl_image_format *format = &kRgba8, cl_mem_flags flags = CL_MEM_READ_WRITE,
                    void *host = nullptr) {
    props.push_back(0);
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateImageWithProperties(l.env.context, props.data(), flags, format, desc, host, &err);
    if (m) {
        l.keep(m);
        return 1;
    }
    return err;
}

cl_int image_of(Lab &l, std::vector<cl_mem_properties> extra, cl_image_desc d, size_t bytes = 16384) {
    std::vector<cl_mem_properties> props{DMABUF, P(l.dmabuf(bytes))};
    props.insert(props.end(), extra.begin(), extra.end());
    return image_import(l, props, &d);
}

using ArmImportFn = cl_mem(CL_API_CALL *)(cl_context, cl_mem_flags, const cl_import_properties_arm *, void *, size_t,
                                          cl_int *);
cl_int arm_import(Lab &l, std::vector<cl_import_properties_arm> props, void *memory, size_t size = 4096) {
    auto fn = reinterpret_cast<ArmImportFn>(clGetExtensionFunctionAddressForPlatform(l.env.platform,
                                                                                      "clImportMemoryARM"));
    REQUIRE(fn);
    props.push_back(0);
    cl_int err = CL_SUCCESS;
    cl_mem m = fn(l.env.context, CL_MEM_READ_WRITE, props.data(), memory, size, &err);
    if (m) {
        l.keep(m);
        return 1;
    }
    return err;
}

cl_int acquire(Lab &l, cl_command_queue q, cl_uint n, const cl_mem *mems, cl_uint ne = 0,
               const cl_event *waits = nullptr) {
    return l.env.acquire(q, n, mems, ne, waits, nullptr);
}
cl_int release(Lab &l, cl_command_queue q, cl_uint n, const cl_mem *mems) {
    return l.env.release(q, n, mems, 0, nullptr, nullptr);
}

template <typename F>
F ext(Lab &l, const char *name) {
    auto f = reinterpret_cast<F>(clGetExtensionFunctionAddressForPlatform(l.env.platform, name));
    REQUIRE(f);
    return f;
}

struct Row {
    const char *id;
    const char *call;
    cl_int error;
    const char *log;
    std::function<cl_int(Lab &)> run;
};

// The catalogue.  Ids are stable: B buffer import, I image import, A ARM
// import, Q acquire/release, H host access and maps, C copies, G GL/EGL.
const std::vector<Row> &rows() {
    static const std::vector<Row> all = {
        // ---- fds -------------------------------------------------------------
        {"B01", "clCreateBufferWithProperties, DMA_BUF fd -1", CL_INVALID_PROPERTY, "is not a valid fd",
         [](Lab &l) { return buffer_import(l, {DMABUF, static_cast<cl_mem_properties>(-1)}); }},
        {"B02", "clCreateBufferWithProperties, a closed fd", CL_INVALID_PROPERTY, "is not open",
         [](Lab &l) {
             const int fd = open("/dev/null", O_RDONLY);
             close(fd);
             return buffer_import(l, {DMABUF, P(fd)});
         }},
        {"B03", "clCreateBufferWithProperties, a regular file", CL_INVALID_PROPERTY, "is not a dma-buf",
         [](Lab &l) {
             char path[] = "/tmp/cldmabuf-catalogue-XXXXXX";
             const int fd = l.keep(mkstemp(path));
             unlink(path);
             REQUIRE(ftruncate(fd, 8192) == 0);
             return buffer_import(l, {DMABUF, P(fd)});
         }},
        {"B04", "clCreateBufferWithProperties, a memfd", CL_INVALID_PROPERTY, "is not a dma-buf",
         [](Lab &l) {
             const int fd = l.keep(memfd_create("not-a-dmabuf", MFD_CLOEXEC));
             REQUIRE(ftruncate(fd, 8192) == 0);
             return buffer_import(l, {DMABUF, P(fd)});
         }},
        {"B05", "clCreateBufferWithProperties, a pipe", CL_INVALID_PROPERTY, "is not a dma-buf",
         [](Lab &l) {
             int p[2];
             REQUIRE(pipe(p) == 0);
             l.keep(p[0]);
             l.keep(p[1]);
             return buffer_import(l, {DMABUF, P(p[0])});
         }},
        {"B06", "clCreateBufferWithProperties, a socket", CL_INVALID_PROPERTY, "is not a dma-buf",
         [](Lab &l) { return buffer_import(l, {DMABUF, P(l.keep(socket(AF_UNIX, SOCK_STREAM, 0)))}); }},
        {"B07", "clCreateBufferWithProperties, /dev/null", CL_INVALID_PROPERTY, "is not a dma-buf",
         [](Lab &l) { return buffer_import(l, {DMABUF, P(l.keep(open("/dev/null", O_RDWR)))}); }},
        {"B08", "clCreateBufferWithProperties, fd 2^31 (out of int range)", CL_INVALID_PROPERTY, "is not a valid fd",
         [](Lab &l) { return buffer_import(l, {DMABUF, static_cast<cl_mem_properties>(1ull << 31)}); }},
        // ---- properties --------------------------------------------------------
        {"B09", "clCreateBufferWithProperties, two DMA_BUF handles", CL_INVALID_PROPERTY, "is given twice",
         [](Lab &l) {
             const int fd = l.dmabuf();
             return buffer_import(l, {DMABUF, P(fd), DMABUF, P(fd)});
         }},
        {"B10", "clCreateBufferWithProperties, DMA_BUF and OPAQUE_FD handles", CL_INVALID_PROPERTY,
         "more than one external memory handle",
         [](Lab &l) {
             const int fd = l.dmabuf();
             return buffer_import(l, {DMABUF, P(fd), CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, P(fd)});
         }},
        {"B11", "clCreateBufferWithProperties, a device list without a handle", CL_INVALID_PROPERTY,
         "without an external memory handle",
         [](Lab &l) {
             return buffer_import(l, {CL_MEM_DEVICE_HANDLE_LIST_KHR, reinterpret_cast<cl_mem_properties>(l.env.device),
                                      CL_MEM_DEVICE_HANDLE_LIST_END_KHR});
         }},
        {"B12", "clCreateBufferWithProperties, an empty device list", CL_INVALID_PROPERTY, "lists no device",
         [](Lab &l) {
             return buffer_import(l, {DMABUF, P(l.dmabuf()), CL_MEM_DEVICE_HANDLE_LIST_KHR,
                                      CL_MEM_DEVICE_HANDLE_LIST_END_KHR});
         }},
        {"B13", "clCreateBufferWithProperties, a listed device of another platform's context", CL_INVALID_DEVICE,
         "not a device of the context",
         [](Lab &l) {
             return buffer_import(l, {DMABUF, P(l.dmabuf()), CL_MEM_DEVICE_HANDLE_LIST_KHR, 0x1000,
                                      CL_MEM_DEVICE_HANDLE_LIST_END_KHR});
         }},
        {"B14", "clCreateBufferWithProperties, the device list given twice", CL_INVALID_PROPERTY, "is given twice",
         [](Lab &l) {
             const auto dev = reinterpret_cast<cl_mem_properties>(l.env.device);
             return buffer_import(l, {DMABUF, P(l.dmabuf()), CL_MEM_DEVICE_HANDLE_LIST_KHR, dev,
                                      CL_MEM_DEVICE_HANDLE_LIST_END_KHR, CL_MEM_DEVICE_HANDLE_LIST_KHR, dev,
                                      CL_MEM_DEVICE_HANDLE_LIST_END_KHR});
         }},
        {"B15", "clCreateBufferWithProperties, a directory fd", CL_INVALID_PROPERTY, "is not a dma-buf",
         [](Lab &l) { return buffer_import(l, {DMABUF, P(l.keep(open("/tmp", O_RDONLY | O_DIRECTORY)))}); }},
        // ---- flags, host_ptr, sizes --------------------------------------------
        {"B16", "clCreateBufferWithProperties, CL_MEM_USE_HOST_PTR", CL_INVALID_VALUE, "refused",
         [](Lab &l) {
             static char host[4096];
             return buffer_import(l, {DMABUF, P(l.dmabuf())}, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, 4096, host);
         }},
        {"B17", "clCreateBufferWithProperties, CL_MEM_ALLOC_HOST_PTR", CL_INVALID_VALUE, "refused",
         [](Lab &l) { return buffer_import(l, {DMABUF, P(l.dmabuf())}, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR); }},
        {"B18", "clCreateBufferWithProperties, CL_MEM_COPY_HOST_PTR", CL_INVALID_VALUE, "refused",
         [](Lab &l) {
             static char host[4096];
             return buffer_import(l, {DMABUF, P(l.dmabuf())}, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4096, host);
         }},
        {"B19", "clCreateBufferWithProperties, a host_ptr", CL_INVALID_HOST_PTR, "refused",
         [](Lab &l) {
             static char host[4096];
             return buffer_import(l, {DMABUF, P(l.dmabuf())}, CL_MEM_READ_WRITE, 4096, host);
         }},
        {"B20", "clCreateBufferWithProperties, size 0", CL_INVALID_BUFFER_SIZE, "refused",
         [](Lab &l) { return buffer_import(l, {DMABUF, P(l.dmabuf())}, CL_MEM_READ_WRITE, 0); }},
        {"B21", "clCreateBufferWithProperties, size one byte past the dma-buf", CL_INVALID_BUFFER_SIZE, "refused",
         [](Lab &l) { return buffer_import(l, {DMABUF, P(l.dmabuf(16384))}, CL_MEM_READ_WRITE, 16385); }},
        {"B22", "clCreateBufferWithProperties, a handle type no device lists", CL_INVALID_PROPERTY,
         "no device of the context lists it",
         [](Lab &l) { return buffer_import(l, {unlisted_handle_type(l.env.device), P(l.dmabuf())}); }},
        // ---- images --------------------------------------------------------------
        {"I01", "clCreateImageWithProperties, a memfd", CL_INVALID_PROPERTY, "is not a dma-buf",
         [](Lab &l) {
             const int fd = l.keep(memfd_create("not-a-dmabuf", MFD_CLOEXEC));
             REQUIRE(ftruncate(fd, 16384) == 0);
             const cl_image_desc d = desc2d(64, 16);
             return image_import(l, {DMABUF, P(fd)}, &d);
         }},
        {"I02", "clCreateImageWithProperties, a host_ptr", CL_INVALID_HOST_PTR, "host_ptr must be NULL",
         [](Lab &l) {
             static char host[16384];
             const cl_image_desc d = desc2d(64, 16);
             return image_import(l, {DMABUF, P(l.dmabuf())}, &d, &kRgba8, CL_MEM_READ_WRITE, host);
         }},
        {"I03", "clCreateImageWithProperties, CL_MEM_USE_HOST_PTR", CL_INVALID_VALUE, "refused",
         [](Lab &l) {
             const cl_image_desc d = desc2d(64, 16);
             return image_import(l, {DMABUF, P(l.dmabuf())}, &d, &kRgba8, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR);
         }},
        {"I04", "clCreateImageWithProperties, image_format NULL", CL_INVALID_IMAGE_FORMAT_DESCRIPTOR,
         "image_format is NULL",
         [](Lab &l) {
             const cl_image_desc d = desc2d(64, 16);
             return image_import(l, {DMABUF, P(l.dmabuf())}, &d, nullptr);
         }},
        {"I05", "clCreateImageWithProperties, image_desc NULL", CL_INVALID_IMAGE_DESCRIPTOR, "image_desc is NULL",
         [](Lab &l) { return image_import(l, {DMABUF, P(l.dmabuf())}, nullptr); }},
        {"I06", "clCreateImageWithProperties, a buffer in the descriptor", CL_INVALID_IMAGE_DESCRIPTOR, "refused",
         [](Lab &l) {
             cl_image_desc d = desc2d(64, 16);
             d.buffer = l.plain(16384);
             return image_import(l, {DMABUF, P(l.dmabuf())}, &d);
         }},
        {"I07", "clCreateImageWithProperties, num_mip_levels 2", CL_INVALID_IMAGE_DESCRIPTOR,
         "num_mip_levels and num_samples must be 0",
         [](Lab &l) {
             cl_image_desc d = desc2d(64, 16);
             d.num_mip_levels = 2;
             return image_import(l, {DMABUF, P(l.dmabuf())}, &d);
         }},
        {"I08", "clCreateImageWithProperties, num_samples 4", CL_INVALID_IMAGE_DESCRIPTOR,
         "num_mip_levels and num_samples must be 0",
         [](Lab &l) {
             cl_image_desc d = desc2d(64, 16);
             d.num_samples = 4;
             return image_import(l, {DMABUF, P(l.dmabuf())}, &d);
         }},
        {"I09", "clCreateImageWithProperties, image_width 0", CL_INVALID_IMAGE_DESCRIPTOR, "image_width is 0",
         [](Lab &l) { return image_of(l, {}, desc2d(0, 16)); }},
        {"I10", "clCreateImageWithProperties, image_height 0", CL_INVALID_IMAGE_DESCRIPTOR,
         "image_height, image_depth or image_array_size is 0", [](Lab &l) { return image_of(l, {}, desc2d(64, 0)); }},
        {"I11", "clCreateImageWithProperties, image_type a buffer type", CL_INVALID_IMAGE_DESCRIPTOR,
         "image_type is not an image type",
         [](Lab &l) {
             cl_image_desc d = desc2d(64, 16);
             d.image_type = CL_MEM_OBJECT_BUFFER;
             return image_of(l, {}, d);
         }},
        {"I12", "clCreateImageWithProperties, row pitch smaller than a row", CL_INVALID_IMAGE_DESCRIPTOR,
         "is smaller than a row", [](Lab &l) { return image_of(l, {}, desc2d(64, 16, 128)); }},
        {"I13", "clCreateImageWithProperties, row pitch not a multiple of the element", CL_INVALID_IMAGE_DESCRIPTOR,
         "is not a multiple of the element size", [](Lab &l) { return image_of(l, {}, desc2d(64, 16, 258)); }},
        {"I14", "clCreateImageWithProperties, a slice pitch on a 2D image", CL_INVALID_IMAGE_DESCRIPTOR,
         "image_slice_pitch must be 0",
         [](Lab &l) {
             cl_image_desc d = desc2d(64, 16);
             d.image_slice_pitch = 4096;
             return image_of(l, {}, d);
         }},
        {"I15", "clCreateImageWithProperties, channel type 0x1234", CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, "refused",
         [](Lab &l) {
             const cl_image_format f{CL_RGBA, 0x1234};
             const cl_image_desc d = desc2d(64, 16);
             return image_import(l, {DMABUF, P(l.dmabuf())}, &d, &f);
         }},
        {"I16", "clCreateImageWithProperties, the image larger than the dma-buf", CL_INVALID_IMAGE_SIZE, "refused",
         [](Lab &l) { return image_of(l, {}, desc2d(64, 128), 16384); }},
        {"I17", "clCreateImageWithProperties, a plane offset past the dma-buf", CL_INVALID_IMAGE_SIZE, "plane offset",
         [](Lab &l) { return image_of(l, {CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF, 16384}, desc2d(64, 16), 16384); }},
        {"I18", "clCreateImageWithProperties, DRM_FORMAT_MOD_INVALID", CL_INVALID_PROPERTY,
         "DRM_FORMAT_MOD_INVALID means the layout is unknown",
         [](Lab &l) { return image_of(l, {CL_MEM_DMA_BUF_MODIFIER_CLDMABUF, DRM_FORMAT_MOD_INVALID}, desc2d(64, 16)); }},
        {"I19", "clCreateImageWithProperties, Y-tiled without consent", CL_INVALID_PROPERTY, "is tiled",
         [](Lab &l) { return image_of(l, {CL_MEM_DMA_BUF_MODIFIER_CLDMABUF, I915_FORMAT_MOD_Y_TILED}, desc2d(64, 32)); }},
        {"I20", "clCreateImageWithProperties, X-tiled without consent", CL_INVALID_PROPERTY, "is tiled",
         [](Lab &l) { return image_of(l, {CL_MEM_DMA_BUF_MODIFIER_CLDMABUF, I915_FORMAT_MOD_X_TILED}, desc2d(128, 8)); }},
        {"I21", "clCreateImageWithProperties, a compressed (Y_TILED_CCS) modifier with consent", CL_INVALID_PROPERTY,
         "modifier",
         [](Lab &l) {
             return image_of(l, {CL_MEM_DMA_BUF_MODIFIER_CLDMABUF, I915_FORMAT_MOD_Y_TILED_CCS,
                                 CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF, CL_TRUE}, desc2d(64, 32));
         }},
        {"I22", "clCreateImageWithProperties, another vendor's modifier", CL_INVALID_PROPERTY, "modifier",
         [](Lab &l) {
             return image_of(l, {CL_MEM_DMA_BUF_MODIFIER_CLDMABUF, fourcc_mod_code(AMD, 1)}, desc2d(64, 16));
         }},
        {"I23", "clCreateImageWithProperties, ASSUME_LINEAR = 2", CL_INVALID_PROPERTY, "must be CL_TRUE or CL_FALSE",
         [](Lab &l) { return image_of(l, {CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF, 2}, desc2d(64, 16)); }},
        {"I24", "clCreateImageWithProperties, the modifier given twice", CL_INVALID_PROPERTY, "is given twice",
         [](Lab &l) {
             return image_of(l, {CL_MEM_DMA_BUF_MODIFIER_CLDMABUF, DRM_FORMAT_MOD_LINEAR,
                                 CL_MEM_DMA_BUF_MODIFIER_CLDMABUF, DRM_FORMAT_MOD_LINEAR}, desc2d(64, 16));
         }},
        {"I25", "clCreateImageWithProperties, X-tiled consented, pitch 640 (not whole tiles)",
         CL_INVALID_IMAGE_DESCRIPTOR, "refused",
         [](Lab &l) {
             return image_of(l, {CL_MEM_DMA_BUF_MODIFIER_CLDMABUF, I915_FORMAT_MOD_X_TILED,
                                 CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF, CL_TRUE}, desc2d(128, 8, 640), 65536);
         }},
        // ---- cl_arm_import_memory --------------------------------------------------
        {"A01", "clImportMemoryARM, memory NULL", CL_INVALID_VALUE, "memory is NULL",
         [](Lab &l) { return arm_import(l, {CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM}, nullptr); }},
        {"A02", "clImportMemoryARM, size 0", CL_INVALID_BUFFER_SIZE, "size is 0",
         [](Lab &l) {
             static int fd;
             fd = l.dmabuf();
             return arm_import(l, {CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM}, &fd, 0);
         }},
        {"A03", "clImportMemoryARM, memory points to a memfd", CL_INVALID_VALUE, "memory does not point to a dma-buf",
         [](Lab &l) {
             static int fd;
             fd = l.keep(memfd_create("not-a-dmabuf", MFD_CLOEXEC));
             REQUIRE(ftruncate(fd, 8192) == 0);
             return arm_import(l, {CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM}, &fd);
         }},
        {"A04", "clImportMemoryARM, memory points to fd -1", CL_INVALID_VALUE, "memory does not point to a dma-buf",
         [](Lab &l) {
             static int fd = -1;
             return arm_import(l, {CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM}, &fd);
         }},
        {"A05", "clImportMemoryARM, import type 0x1234", CL_INVALID_PROPERTY, "refused",
         [](Lab &l) {
             static int fd;
             fd = l.dmabuf();
             return arm_import(l, {CL_IMPORT_TYPE_ARM, 0x1234}, &fd);
         }},
        {"A06", "clImportMemoryARM, the import type twice", CL_INVALID_PROPERTY, "refused",
         [](Lab &l) {
             static int fd;
             fd = l.dmabuf();
             return arm_import(l, {CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM, CL_IMPORT_TYPE_ARM,
                                   CL_IMPORT_TYPE_DMA_BUF_ARM}, &fd);
         }},
        {"A07", "clImportMemoryARM, protected memory", CL_INVALID_PROPERTY, "protected memory",
         [](Lab &l) {
             static int fd;
             fd = l.dmabuf();
             return arm_import(l, {CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM, CL_IMPORT_TYPE_PROTECTED_ARM,
                                   CL_TRUE}, &fd);
         }},
        {"A08", "clImportMemoryARM, the whole allocation of a memfd", CL_INVALID_VALUE,
         "memory does not point to a dma-buf",
         [](Lab &l) {
             static int fd;
             fd = l.keep(memfd_create("not-a-dmabuf", MFD_CLOEXEC));
             return arm_import(l, {CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM}, &fd,
                               CL_IMPORT_MEMORY_WHOLE_ALLOCATION_ARM);
         }},
        // ---- acquire / release: queues, objects, wait lists ----------------------------
        {"Q01", "clEnqueueAcquireExternalMemObjectsKHR, a buffer that is not an import", CL_INVALID_MEM_OBJECT,
         "is not an imported external memory object",
         [](Lab &l) {
             cl_mem m = l.plain();
             return acquire(l, l.env.queue, 1, &m);
         }},
        {"Q02", "clEnqueueReleaseExternalMemObjectsKHR, a buffer that is not an import", CL_INVALID_MEM_OBJECT,
         "is not an imported external memory object",
         [](Lab &l) {
             cl_mem m = l.plain();
             return release(l, l.env.queue, 1, &m);
         }},
        {"Q03", "clEnqueueAcquireExternalMemObjectsKHR, num_mem_objects 1, mem_objects NULL", CL_INVALID_VALUE,
         "disagree", [](Lab &l) { return acquire(l, l.env.queue, 1, nullptr); }},
        {"Q04", "clEnqueueAcquireExternalMemObjectsKHR, num_mem_objects 0, mem_objects set", CL_INVALID_VALUE,
         "disagree",
         [](Lab &l) {
             cl_mem m = l.import();
             return acquire(l, l.env.queue, 0, &m);
         }},
        {"Q05", "clEnqueueAcquireExternalMemObjectsKHR, queue NULL", CL_INVALID_COMMAND_QUEUE,
         "invalid command queue",
         [](Lab &l) {
             cl_mem m = l.import();
             return acquire(l, nullptr, 1, &m);
         }},
        {"Q06", "clEnqueueAcquireExternalMemObjectsKHR, an import of another context", CL_INVALID_CONTEXT,
         "belongs to another context",
         [](Lab &l) {
             cl_mem m = l.import(16384, CL_MEM_READ_WRITE, &l.other);
             return acquire(l, l.env.queue, 1, &m);
         }},
        {"Q07", "clEnqueueAcquireExternalMemObjectsKHR, a NULL object in mem_objects", CL_INVALID_MEM_OBJECT,
         "is not an imported external memory object",
         [](Lab &l) {
             cl_mem m[2] = {l.import(), nullptr};
             return acquire(l, l.env.queue, 2, m);
         }},
        {"Q08", "clEnqueueAcquireExternalMemObjectsKHR, 1 event and a NULL wait list", CL_INVALID_EVENT_WAIT_LIST,
         "num_events_in_wait_list (1) and event_wait_list",
         [](Lab &l) {
             cl_mem m = l.import();
             return acquire(l, l.env.queue, 1, &m, 1, nullptr);
         }},
        {"Q09", "clEnqueueReleaseExternalMemObjectsKHR, queue NULL", CL_INVALID_COMMAND_QUEUE,
         "invalid command queue",
         [](Lab &l) {
             cl_mem m = l.import();
             return release(l, nullptr, 1, &m);
         }},
        {"Q10", "clEnqueueReleaseExternalMemObjectsKHR, an import of another context", CL_INVALID_CONTEXT,
         "belongs to another context",
         [](Lab &l) {
             cl_mem m = l.import(16384, CL_MEM_READ_WRITE, &l.other);
             return release(l, l.env.queue, 1, &m);
         }},
        {"Q11", "clEnqueueReleaseExternalMemObjectsKHR, 1 event and a NULL wait list", CL_INVALID_EVENT_WAIT_LIST,
         "num_events_in_wait_list (1) and event_wait_list",
         [](Lab &l) {
             cl_mem m = l.import();
             return l.env.release(l.env.queue, 1, &m, 1, nullptr, nullptr);
         }},
        {"Q12", "clEnqueueAcquireExternalMemObjectsKHR, 0 events and a wait list", CL_INVALID_EVENT_WAIT_LIST,
         "num_events_in_wait_list (0) and event_wait_list",
         [](Lab &l) {
             cl_mem m = l.import();
             cl_event e = clCreateUserEvent(l.env.context, nullptr);
             const cl_int err = acquire(l, l.env.queue, 1, &m, 0, &e);
             clSetUserEventStatus(e, CL_COMPLETE);
             clReleaseEvent(e);
             return err;
         }},
        // ---- host access, maps ------------------------------------------------------------
        {"H01", "clEnqueueWriteBuffer into a CL_MEM_READ_ONLY import", CL_INVALID_OPERATION, "CL_MEM_READ_ONLY",
         [](Lab &l) {
             cl_mem m = l.import(16384, CL_MEM_READ_ONLY);
             char b[16] = {};
             return clEnqueueWriteBuffer(l.env.queue, m, CL_TRUE, 0, sizeof b, b, 0, nullptr, nullptr);
         }},
        {"H02", "clEnqueueMapBuffer with CL_MAP_WRITE of a CL_MEM_READ_ONLY import", CL_INVALID_OPERATION,
         "with CL_MAP_WRITE",
         [](Lab &l) {
             cl_mem m = l.import(16384, CL_MEM_READ_ONLY);
             cl_int err = CL_SUCCESS;
             void *p = clEnqueueMapBuffer(l.env.queue, m, CL_TRUE, CL_MAP_WRITE, 0, 64, 0, nullptr, nullptr, &err);
             if (p) clEnqueueUnmapMemObject(l.env.queue, m, p, 0, nullptr, nullptr);
             return p ? 1 : err;
         }},
        {"H03", "clEnqueueFillBuffer into a CL_MEM_READ_ONLY import", CL_INVALID_OPERATION, "CL_MEM_READ_ONLY",
         [](Lab &l) {
             cl_mem m = l.import(16384, CL_MEM_READ_ONLY);
             const int pattern = 0;
             return clEnqueueFillBuffer(l.env.queue, m, &pattern, sizeof pattern, 0, 64, 0, nullptr, nullptr);
         }},
        // ---- copies between imports (the blitter's checks) -----------------------------------
        {"C01", "clEnqueueCopyBuffer between imports, past the end", CL_INVALID_VALUE, "run past a buffer",
         [](Lab &l) {
             cl_mem a = l.import(), b = l.import();
             return clEnqueueCopyBuffer(l.env.queue, a, b, 0, 8192, 16384, 0, nullptr, nullptr);
         }},
        {"C02", "clEnqueueCopyBuffer inside one import, overlapping", CL_MEM_COPY_OVERLAP, "overlap",
         [](Lab &l) {
             cl_mem a = l.import();
             return clEnqueueCopyBuffer(l.env.queue, a, a, 0, 64, 4096, 0, nullptr, nullptr);
         }},
        {"C03", "clEnqueueCopyBuffer between imports, 1 event and a NULL wait list", CL_INVALID_EVENT_WAIT_LIST,
         "disagree",
         [](Lab &l) {
             cl_mem a = l.import(), b = l.import();
             return clEnqueueCopyBuffer(l.env.queue, a, b, 0, 0, 4096, 1, nullptr, nullptr);
         }},
        {"C04", "clEnqueueCopyBufferRect between imports, a region past the buffer", CL_INVALID_VALUE,
         "clEnqueueCopyBufferRect",
         [](Lab &l) {
             cl_mem a = l.import(), b = l.import();
             const size_t o[3] = {0, 0, 0}, r[3] = {256, 128, 1};
             return clEnqueueCopyBufferRect(l.env.queue, a, b, o, o, r, 256, 0, 256, 0, 0, nullptr, nullptr);
         }},
        {"C05", "clEnqueueCopyBufferRect inside one import, different pitches", CL_INVALID_VALUE,
         "different row and slice pitches",
         [](Lab &l) {
             cl_mem a = l.import();
             const size_t so[3] = {0, 0, 0}, dst[3] = {0, 32, 0}, r[3] = {64, 8, 1};
             return clEnqueueCopyBufferRect(l.env.queue, a, a, so, dst, r, 64, 0, 128, 0, 0, nullptr, nullptr);
         }},
        {"C06", "clEnqueueCopyBufferRect inside one import, overlapping", CL_MEM_COPY_OVERLAP, "overlap",
         [](Lab &l) {
             cl_mem a = l.import();
             const size_t so[3] = {0, 0, 0}, dst[3] = {0, 1, 0}, r[3] = {64, 8, 1};
             return clEnqueueCopyBufferRect(l.env.queue, a, a, so, dst, r, 64, 0, 64, 0, 0, nullptr, nullptr);
         }},
        {"C07", "clEnqueueCopyImage between image imports, formats differ", CL_IMAGE_FORMAT_MISMATCH,
         "formats differ",
         [](Lab &l) {
             cl_mem a = l.image(), b = l.image(64, 16, cl_image_format{CL_RGBA, CL_UNORM_INT8});
             const size_t o[3] = {0, 0, 0}, r[3] = {4, 4, 1};
             return clEnqueueCopyImage(l.env.queue, a, b, o, o, r, 0, nullptr, nullptr);
         }},
        {"C08", "clEnqueueCopyImage between image imports, a zero region", CL_INVALID_VALUE, "zero extent",
         [](Lab &l) {
             cl_mem a = l.image(), b = l.image();
             const size_t o[3] = {0, 0, 0}, r[3] = {0, 4, 1};
             return clEnqueueCopyImage(l.env.queue, a, b, o, o, r, 0, nullptr, nullptr);
         }},
        {"C09", "clEnqueueCopyImage between image imports, origin NULL", CL_INVALID_VALUE, "origin or region is NULL",
         [](Lab &l) {
             cl_mem a = l.image(), b = l.image();
             const size_t o[3] = {0, 0, 0}, r[3] = {4, 4, 1};
             return clEnqueueCopyImage(l.env.queue, a, b, nullptr, o, r, 0, nullptr, nullptr);
         }},
        {"C10", "clEnqueueCopyImage between image imports, outside the image", CL_INVALID_VALUE,
         "is outside the image",
         [](Lab &l) {
             cl_mem a = l.image(), b = l.image();
             const size_t o[3] = {60, 0, 0}, z[3] = {0, 0, 0}, r[3] = {8, 4, 1};
             return clEnqueueCopyImage(l.env.queue, a, b, o, z, r, 0, nullptr, nullptr);
         }},
        {"C11", "clEnqueueCopyImage inside one image import, overlapping", CL_MEM_COPY_OVERLAP, "overlap",
         [](Lab &l) {
             cl_mem a = l.image();
             const size_t o[3] = {0, 0, 0}, d[3] = {2, 0, 0}, r[3] = {8, 4, 1};
             return clEnqueueCopyImage(l.env.queue, a, a, o, d, r, 0, nullptr, nullptr);
         }},
        {"C12", "clEnqueueCopyImageToBuffer between imports, past the buffer", CL_INVALID_VALUE,
         "is past the buffer",
         [](Lab &l) {
             cl_mem a = l.image(), b = l.import(4096);
             const size_t o[3] = {0, 0, 0}, r[3] = {64, 16, 1};
             return clEnqueueCopyImageToBuffer(l.env.queue, a, b, o, r, 64, 0, nullptr, nullptr);
         }},
        {"C13", "clEnqueueCopyBufferToImage between imports, past the buffer", CL_INVALID_VALUE,
         "is past the buffer",
         [](Lab &l) {
             cl_mem a = l.import(4096), b = l.image();
             const size_t o[3] = {0, 0, 0}, r[3] = {64, 16, 1};
             return clEnqueueCopyBufferToImage(l.env.queue, a, b, 64, o, r, 0, nullptr, nullptr);
         }},
        // ---- GL / EGL objects on a context the layer did not make for GL ---------------------------
        {"G01", "clCreateFromGLTexture on a context without CL_GL_CONTEXT_KHR", CL_INVALID_CONTEXT,
         "was not created with CL_GL_CONTEXT_KHR",
         [](Lab &l) {
             cl_int err = CL_SUCCESS;
             cl_mem m = clCreateFromGLTexture(l.env.context, CL_MEM_READ_WRITE, 0x0DE1, 0, 1, &err);
             return m ? (l.keep(m), 1) : err;
         }},
        {"G02", "clCreateFromGLBuffer on a context without CL_GL_CONTEXT_KHR", CL_INVALID_CONTEXT,
         "was not created with CL_GL_CONTEXT_KHR",
         [](Lab &l) {
             cl_int err = CL_SUCCESS;
             cl_mem m = clCreateFromGLBuffer(l.env.context, CL_MEM_READ_WRITE, 1, &err);
             return m ? (l.keep(m), 1) : err;
         }},
        {"G03", "clCreateFromGLRenderbuffer on a context without CL_GL_CONTEXT_KHR", CL_INVALID_CONTEXT,
         "was not created with CL_GL_CONTEXT_KHR",
         [](Lab &l) {
             cl_int err = CL_SUCCESS;
             cl_mem m = clCreateFromGLRenderbuffer(l.env.context, CL_MEM_READ_WRITE, 1, &err);
             return m ? (l.keep(m), 1) : err;
         }},
        {"G04", "clEnqueueAcquireGLObjects of a dma-buf import", CL_INVALID_GL_OBJECT, "was not created from",
         [](Lab &l) {
             cl_mem m = l.import();
             return clEnqueueAcquireGLObjects(l.env.queue, 1, &m, 0, nullptr, nullptr);
         }},
        {"G05", "clCreateFromEGLImageKHR, display and image NULL", CL_INVALID_EGL_OBJECT_KHR,
         "display is not an initialised EGLDisplay",
         [](Lab &l) {
             using Fn = cl_mem(CL_API_CALL *)(cl_context, CLeglDisplayKHR, CLeglImageKHR, cl_mem_flags,
                                               const cl_egl_image_properties_khr *, cl_int *);
             cl_int err = CL_SUCCESS;
             cl_mem m = ext<Fn>(l, "clCreateFromEGLImageKHR")(l.env.context, nullptr, nullptr, CL_MEM_READ_WRITE,
                                                               nullptr, &err);
             return m ? (l.keep(m), 1) : err;
         }},
        {"G06", "clCreateContext with CL_GL_CONTEXT_KHR and no CL_EGL_DISPLAY_KHR", CL_INVALID_OPERATION,
         "CL_GL_CONTEXT_KHR needs CL_EGL_DISPLAY_KHR",
         [](Lab &l) {
             const cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                                    reinterpret_cast<cl_context_properties>(l.env.platform),
                                                    CL_GL_CONTEXT_KHR, 1, 0};
             cl_int err = CL_SUCCESS;
             cl_context c = clCreateContext(props, 1, &l.env.device, nullptr, nullptr, &err);
             if (c) clReleaseContext(c);
             return c ? 1 : err;
         }},
        {"G07", "clGetGLContextInfoKHR without CL_GL_CONTEXT_KHR", CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR,
         "properties name no GL context",
         [](Lab &l) {
             using Fn = cl_int(CL_API_CALL *)(const cl_context_properties *, cl_gl_context_info, size_t, void *,
                                               size_t *);
             const cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                                    reinterpret_cast<cl_context_properties>(l.env.platform), 0};
             cl_device_id d = nullptr;
             return ext<Fn>(l, "clGetGLContextInfoKHR")(props, CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR, sizeof d, &d,
                                                        nullptr);
         }},
        {"G08", "clCreateEventFromGLsyncKHR on a context without CL_GL_CONTEXT_KHR", CL_INVALID_CONTEXT,
         "was not created with CL_GL_CONTEXT_KHR",
         [](Lab &l) {
             using Fn = cl_event(CL_API_CALL *)(cl_context, cl_GLsync, cl_int *);
             cl_int err = CL_SUCCESS;
             cl_event e = ext<Fn>(l, "clCreateEventFromGLsyncKHR")(l.env.context, nullptr, &err);
             if (e) clReleaseEvent(e);
             return e ? 1 : err;
         }},
    };
    return all;
}

std::string error_name(cl_int e) {
    static const std::map<cl_int, const char *> names = {
        {CL_INVALID_VALUE, "CL_INVALID_VALUE"},
        {CL_INVALID_PROPERTY, "CL_INVALID_PROPERTY"},
        {CL_INVALID_DEVICE, "CL_INVALID_DEVICE"},
        {CL_INVALID_CONTEXT, "CL_INVALID_CONTEXT"},
        {CL_INVALID_HOST_PTR, "CL_INVALID_HOST_PTR"},
        {CL_INVALID_BUFFER_SIZE, "CL_INVALID_BUFFER_SIZE"},
        {CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR"},
        {CL_INVALID_IMAGE_DESCRIPTOR, "CL_INVALID_IMAGE_DESCRIPTOR"},
        {CL_INVALID_IMAGE_SIZE, "CL_INVALID_IMAGE_SIZE"},
        {CL_IMAGE_FORMAT_MISMATCH, "CL_IMAGE_FORMAT_MISMATCH"},
        {CL_INVALID_OPERATION, "CL_INVALID_OPERATION"},
        {CL_INVALID_MEM_OBJECT, "CL_INVALID_MEM_OBJECT"},
        {CL_INVALID_COMMAND_QUEUE, "CL_INVALID_COMMAND_QUEUE"},
        {CL_INVALID_EVENT_WAIT_LIST, "CL_INVALID_EVENT_WAIT_LIST"},
        {CL_MEM_COPY_OVERLAP, "CL_MEM_COPY_OVERLAP"},
        {CL_INVALID_GL_OBJECT, "CL_INVALID_GL_OBJECT"},
        {CL_INVALID_EGL_OBJECT_KHR, "CL_INVALID_EGL_OBJECT_KHR"},
        {CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR, "CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR"},
    };
    const auto it = names.find(e);
    return it != names.end() ? it->second : std::to_string(e);
}

std::string table_row(const Row &r) {
    return std::string("| ") + r.id + " | " + r.call + " | " + error_name(r.error) + " | `" + r.log + "` |";
}

}  // namespace

TEST_CASE("bad-input catalogue: each bad call gets the spec's error and one log line", "[.catalogue]") {
    REQUIRE_DMABUF();
    ClEnv env, other;
    if (!device_has_images(env)) SKIP("the device has no image support");
    std::set<std::string> ids;
    const bool print = std::getenv("CLDMABUF_CATALOGUE_PRINT") != nullptr;
    for (const Row &r : rows()) {
        INFO(r.id << ": " << r.call);
        CHECK(ids.insert(r.id).second);  // ids are unique
        cl_int got = 1;
        const std::vector<std::string> lines = captured_log([&] {
            Lab lab(env, other);
            got = r.run(lab);
        });
        for (const std::string &line : lines) INFO("log: " << line);
        if (print) std::printf("%s  -> %s, %zu line(s): %s\n", table_row(r).c_str(), error_name(got).c_str(),
                               lines.size(), lines.empty() ? "" : lines[0].c_str());
        CHECK(got == r.error);
        REQUIRE(lines.size() == 1);
        CHECK(lines[0].find(r.log) != std::string::npos);
    }
    CHECK(rows().size() >= 60);
}

TEST_CASE("bad-input catalogue: docs/reliability.md lists exactly the test's rows", "[.catalogue]") {
    const char *doc = std::getenv("CLDMABUF_RELIABILITY_DOC");
    if (!doc) SKIP("CLDMABUF_RELIABILITY_DOC is not set (meson sets it)");
    std::ifstream in(doc);
    REQUIRE(in.good());
    std::vector<std::string> table;
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
        if (line.find("<!-- catalogue:begin -->") != std::string::npos) inside = true;
        else if (line.find("<!-- catalogue:end -->") != std::string::npos) inside = false;
        else if (inside && line.rfind("| ", 0) == 0 && line.rfind("| id ", 0) != 0 && line.rfind("|---", 0) != 0)
            table.push_back(line);
    }
    std::vector<std::string> expected;
    for (const Row &r : rows()) expected.push_back(table_row(r));
    if (std::getenv("CLDMABUF_CATALOGUE_PRINT"))
        for (const std::string &row : expected) std::printf("%s\n", row.c_str());
    CHECK(table == expected);
}
