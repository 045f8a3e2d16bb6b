// cl_khr_egl_image and cl_khr_gl_sharing (EGL only) for any ICD.
//
//   clCreateFromGLTexture(ctx, tex) ─► eglCreateImageKHR(EGL_GL_TEXTURE_2D_KHR)
//   clCreateFromEGLImageKHR(image) ─┬─► eglExportDMABUFImageMESA: fd, stride, offset, fourcc, modifier
//                                    └─► the layer's clCreateImageWithProperties(DMA_BUF_KHR fd, plane offset,
//                                        modifier) ─► an import like any other (layer/ext/image_import.cpp)
//   clEnqueueAcquire{GL,EGL}Objects ─► the import's acquire (bounded implicit-fence wait, SYNC START)
//   clEnqueueRelease{GL,EGL}Objects ─► the import's release (SYNC END)
//
// Where the ICD has the extension itself the calls go to it unchanged
// (CLDMABUF_EGL=force takes them over anyway).  See docs/egl.md.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <drm_fourcc.h>

#include "CL/cl_ext_cldmabuf.h"
#include "layer/param_answer.hpp"
#include "layer/dispatch.hpp"
#include "layer/egl/device_match.hpp"
#include "layer/egl/egl.hpp"
#include "layer/egl/egl_api.hpp"
#include "layer/egl/egl_export.hpp"
#include "layer/egl/gl_buffer.hpp"
#include "layer/egl/gl_event.hpp"
#include "layer/egl/linear_copy.hpp"
#include "layer/ext/acquire_release.hpp"
#include "layer/log.hpp"
#include "layer/registry.hpp"

#include <CL/cl_egl.h>
#include <CL/cl_gl.h>

#ifndef CL_DEVICE_PCI_BUS_INFO_KHR
#define CL_DEVICE_PCI_BUS_INFO_KHR 0x410F
typedef struct _cl_device_pci_bus_info_khr {
    cl_uint pci_domain, pci_bus, pci_device, pci_function;
} cl_device_pci_bus_info_khr;
#endif
#ifndef CL_COMMAND_ACQUIRE_GL_OBJECTS
#define CL_COMMAND_ACQUIRE_GL_OBJECTS 0x11FF
#define CL_COMMAND_RELEASE_GL_OBJECTS 0x1200
#endif

namespace cldmabuf {

EglMode egl_mode() {
    static const EglMode mode = [] {
        const char *v = std::getenv("CLDMABUF_EGL");
        if (!v || !*v || !std::strcmp(v, "auto")) return EglMode::automatic;
        if (!std::strcmp(v, "force")) return EglMode::force;
        if (!std::strcmp(v, "off")) return EglMode::off;
        LOG_WARN("CLDMABUF_EGL=%s is not auto, force or off; using auto", v);
        return EglMode::automatic;
    }();
    return mode;
}

void egl_added_extensions(std::vector<std::pair<const char *, cl_version>> *out) {
    if (egl_mode() == EglMode::off || !egl_api()) return;
    // cl_khr_egl_image 1.0.0, cl_khr_gl_sharing 1.0.0 (OpenCL-Docs xml/cl.xml).
    out->emplace_back("cl_khr_egl_image", CL_MAKE_VERSION(1, 0, 0));
    out->emplace_back("cl_khr_gl_sharing", CL_MAKE_VERSION(1, 0, 0));
    out->emplace_back("cl_khr_gl_event", CL_MAKE_VERSION(1, 0, 0));
}

namespace {

decltype(cl_icd_dispatch::clCreateImageWithProperties) layer_create_image = nullptr;  // the layer's own (image import)
decltype(cl_icd_dispatch::clCreateBufferWithProperties) layer_create_buffer = nullptr;  // the layer's own (buffer import)

// ---- what the ICD has itself -------------------------------------------------

struct IcdCaps {
    bool egl_image = false;
    bool gl_sharing = false;
};

std::mutex caps_mutex;
std::map<cl_platform_id, IcdCaps> caps_cache;

IcdCaps icd_caps(cl_platform_id platform) {
    {
        std::lock_guard lock(caps_mutex);
        if (auto it = caps_cache.find(platform); it != caps_cache.end()) return it->second;
    }
    IcdCaps caps;
    size_t n = 0;
    if (platform && next().clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, 0, nullptr, &n) == CL_SUCCESS) {
        std::string s(n, '\0');
        if (next().clGetPlatformInfo(platform, CL_PLATFORM_EXTENSIONS, n, s.data(), nullptr) == CL_SUCCESS) {
            s = " " + std::string(s.c_str()) + " ";
            caps.egl_image = s.find(" cl_khr_egl_image ") != std::string::npos;
            caps.gl_sharing = s.find(" cl_khr_gl_sharing ") != std::string::npos;
        }
    }
    std::lock_guard lock(caps_mutex);
    caps_cache[platform] = caps;
    return caps;
}

cl_platform_id context_platform(cl_context context) {
    cl_device_id device = nullptr;
    if (next().clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof device, &device, nullptr) != CL_SUCCESS &&
        !device)
        return nullptr;
    cl_platform_id platform = nullptr;
    next().clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr);
    return platform;
}

// Whether the ICD handles these calls itself on `platform`.
bool icd_egl_image(cl_platform_id platform) {
    return egl_mode() != EglMode::force && platform && icd_caps(platform).egl_image;
}
bool icd_gl_sharing(cl_platform_id platform) {
    return egl_mode() != EglMode::force && platform && icd_caps(platform).gl_sharing;
}

// ---- GL-shared contexts --------------------------------------------------------

struct GlShare {
    EGLDisplay display = EGL_NO_DISPLAY;
    EGLContext context = EGL_NO_CONTEXT;
    bool allow_tiled = false;
    std::vector<cl_context_properties> properties;  // the application's list, for CL_CONTEXT_PROPERTIES
};

std::mutex shares_mutex;
std::unordered_map<cl_context, GlShare> shares;

// A copy of map[key] taken under `mu` (the entry may go at any moment after).
template <typename Map>
bool find_locked(std::mutex &mu, const Map &map, const typename Map::key_type &key, typename Map::mapped_type *out) {
    std::lock_guard lock(mu);
    auto it = map.find(key);
    if (it == map.end()) return false;
    if (out) *out = it->second;
    return true;
}

bool find_share(cl_context context, GlShare *out) { return find_locked(shares_mutex, shares, context, out); }

void CL_CALLBACK on_context_destroyed(cl_context context, void *) {
    std::lock_guard lock(shares_mutex);
    shares.erase(context);
}

// ---- memory objects made from EGL/GL objects ---------------------------------------

struct EglObject {
    cl_context context = nullptr;
    EGLDisplay display = EGL_NO_DISPLAY;
    EGLImageKHR image = EGL_NO_IMAGE_KHR;
    bool own_image = false;             // created by the layer (from a GL object): destroyed with the cl_mem
    bool from_gl = false;
    cl_gl_object_type gl_type = 0;
    GLenum target = 0;
    GLint level = 0;
    GLuint name = 0;
    EGLContext producer = EGL_NO_CONTEXT;  // the GL-sharing context's GL context (none for EGLImages)
    cl_mem_flags flags = 0;
    std::shared_ptr<LinearCopy> copy;      // the tiled-export path: the linear buffer the import uses
};

std::mutex objects_mutex;
std::unordered_map<cl_mem, EglObject> objects;

bool find_object(cl_mem mem, EglObject *out) { return find_locked(objects_mutex, objects, mem, out); }

void CL_CALLBACK on_mem_destroyed(cl_mem mem, void *) {
    EglObject object;
    {
        std::lock_guard lock(objects_mutex);
        auto it = objects.find(mem);
        if (it == objects.end()) return;
        object = it->second;
        objects.erase(it);
    }
    const EglApi *egl = egl_api();
    if (!egl) return;
    if (object.copy) destroy_linear_copy(*egl, object.display, object.copy.get());
    if (object.own_image && egl->DestroyImageKHR) egl->DestroyImageKHR(object.display, object.image);
}

// Records `object` for `mem` until the ICD destroys it.  false (and `mem`
// released) when the destructor callback cannot be registered.
bool track_object(cl_mem mem, const EglObject &object) {
    {
        std::lock_guard lock(objects_mutex);
        objects[mem] = object;
    }
    if (next().clSetMemObjectDestructorCallback(mem, on_mem_destroyed, nullptr) == CL_SUCCESS) return true;
    {
        std::lock_guard lock(objects_mutex);
        objects.erase(mem);
    }
    next().clReleaseMemObject(mem);
    return false;
}

cl_mem fail(cl_int *errcode_ret, cl_int err, const char *what, const std::string &why) {
    LOG_ERROR("%s: %s", what, why.c_str());
    if (errcode_ret) *errcode_ret = err;
    return nullptr;
}

// ---- device match --------------------------------------------------------------

ClDeviceFacts device_facts(cl_device_id device) {
    ClDeviceFacts f;
    next().clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof f.type, &f.type, nullptr);
    f.has_pci = cl_device_pci_address(device, &f.pci);
    return f;
}

std::string device_name(cl_device_id device) {
    char name[256] = "";
    next().clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name - 1, name, nullptr);
    return name;
}

// CL_SUCCESS when every device may share with the display (unverified ones with a warning).
cl_int check_devices(const EglApi &egl, EGLDisplay dpy, const std::vector<cl_device_id> &devices,
                     std::string *why) {
    const DisplayDevice display = display_device(egl, dpy);
    for (cl_device_id d : devices) {
        std::string reason;
        switch (match_device(display, device_facts(d), &reason)) {
        case Match::yes: break;
        case Match::unverified:
            LOG_WARN("EGL sharing with device \"%s\": %s", device_name(d).c_str(), reason.c_str());
            break;
        case Match::no:
            *why = "device \"" + device_name(d) + "\" cannot share with this EGL display: " + reason;
            return CL_INVALID_OPERATION;
        }
    }
    return CL_SUCCESS;
}

std::vector<cl_device_id> context_device_list(cl_context context) {
    size_t bytes = 0;
    if (next().clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, nullptr, &bytes) != CL_SUCCESS) return {};
    std::vector<cl_device_id> devices(bytes / sizeof(cl_device_id));
    if (next().clGetContextInfo(context, CL_CONTEXT_DEVICES, bytes, devices.data(), nullptr) != CL_SUCCESS)
        return {};
    return devices;
}

// ---- the import ------------------------------------------------------------------

struct ImportRequest {
    const char *what;        // the API call, for log lines
    cl_int invalid_object;   // CL_INVALID_EGL_OBJECT_KHR or CL_INVALID_GL_OBJECT
    cl_int bad_format;       // CL_IMAGE_FORMAT_NOT_SUPPORTED or CL_INVALID_IMAGE_FORMAT_DESCRIPTOR
    cl_int refused_tiling;   // CL_IMAGE_FORMAT_NOT_SUPPORTED or CL_INVALID_OPERATION
    bool allow_tiled;
};

// CLDMABUF_EGL_FORCE_COPY=1: treat every export as tiled, so that the copy
// path runs on drivers that export LINEAR (tests on llvmpipe).  Read on each
// import: tests switch it within one process.
bool force_copy() {
    const char *v = std::getenv("CLDMABUF_EGL_FORCE_COPY");
    return v && *v == '1';
}

std::string hex_text(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

std::string fourcc_text(int fourcc) {
    std::string s;
    for (int i = 0; i < 4; ++i) s += static_cast<char>((fourcc >> (8 * i)) & 0xff);
    return s;
}

// Wraps `image` (valid on `dpy`) as a 2D cl image of `context`.  `object`
// (display/image/GL facts) is registered on success.
cl_mem import_image(cl_context context, cl_mem_flags flags, const EglApi &egl, EglObject object,
                    const ImportRequest &req, cl_int *errcode_ret) {
    std::string why;
    if (cl_int err = check_devices(egl, object.display, context_device_list(context), &why); err != CL_SUCCESS)
        return fail(errcode_ret, err, req.what, why);

    ExportedImage ex;
    if (!export_dmabuf(egl, object.display, object.image, &ex, &why))
        return fail(errcode_ret, req.invalid_object, req.what, why);
    auto give_up = [&](cl_int err, const std::string &reason) {
        ::close(ex.fd);
        return fail(errcode_ret, err, req.what, reason);
    };

    cl_dma_buf_layout_cldmabuf layout;
    if (cl_dma_buf_fourcc_layout_cldmabuf(static_cast<cl_uint>(ex.fourcc), &layout) != 1)
        return give_up(req.bad_format,
                       "the EGLImage's dma-buf format " + fourcc_text(ex.fourcc) + " has no OpenCL image format");
    // INVALID ("implicit") from EGL means the driver's default layout, which
    // is tiled on every GPU driver: only a linear export is used in place.
    const bool forced = force_copy();
    if (ex.modifier != DRM_FORMAT_MOD_LINEAR || forced) {
        char hex[32];
        std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(ex.modifier));
        if (!req.allow_tiled)
            return give_up(req.refused_tiling,
                           std::string("the EGLImage's layout (modifier ") + hex +
                               (forced ? ", copy forced by CLDMABUF_EGL_FORCE_COPY" : "") +
                               ") is not linear: it needs a GPU copy; set CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF "
                               "to CL_TRUE to consent to it");
    }
    if (!query_image_size(egl, object.display, object.image, &ex.width, &ex.height, &why))
        return give_up(req.invalid_object, why);
    if (ex.modifier != DRM_FORMAT_MOD_LINEAR || forced) {
        auto copy = std::make_shared<LinearCopy>();
        if (!create_linear_copy(egl, object.display, display_device(egl, object.display), ex.fourcc, ex.width,
                                ex.height, copy.get(), &why))
            return give_up(CL_OUT_OF_RESOURCES, "tiled export, no linear copy: " + why);
        ::close(ex.fd);  // the tiled export itself is not imported
        ex.fd = copy->fd;
        copy->fd = -1;   // the import owns it from here (closed by give_up on failure)
        ex.stride = static_cast<EGLint>(copy->stride);
        ex.offset = 0;
        ex.modifier = DRM_FORMAT_MOD_LINEAR;
        object.copy = copy;
        LOG_INFO("%s: tiled export (or forced copy): GPU copy through a linear %dx%d buffer from GBM on %s", req.what,
                 ex.width, ex.height, copy->node.c_str());
    }

    const cl_mem_properties props[] = {
        CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(ex.fd),
        CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF,  static_cast<cl_mem_properties>(ex.offset),
        CL_MEM_DMA_BUF_MODIFIER_CLDMABUF,      static_cast<cl_mem_properties>(ex.modifier),
        0};
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = static_cast<size_t>(ex.width);
    desc.image_height = static_cast<size_t>(ex.height);
    desc.image_row_pitch = static_cast<size_t>(ex.stride);
    cl_int err = CL_SUCCESS;
    cl_mem mem = layer_create_image(context, props, flags, &layout.planes[0].format, &desc, nullptr, &err);
    if (!mem && object.copy) destroy_linear_copy(egl, object.display, object.copy.get());
    if (!mem) {
        const cl_int code = err == CL_IMAGE_FORMAT_NOT_SUPPORTED ? req.bad_format : err;
        return give_up(code, "the dma-buf import of the EGLImage failed (error " + std::to_string(err) + ")");
    }
    // The import owns the fd now.
    object.context = context;
    object.flags = flags;
    if (!track_object(mem, object))
        return fail(errcode_ret, CL_OUT_OF_RESOURCES, req.what, "cannot register the destructor callback");
    LOG_INFO("%s: %dx%d %s (modifier linear%s), pitch %d, offset %d -> %p", req.what, ex.width, ex.height,
             fourcc_text(ex.fourcc).c_str(), object.copy ? ", GPU copy" : "", ex.stride, ex.offset,
             static_cast<void *>(mem));
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return mem;
}

bool valid_access_flags(cl_mem_flags flags) {
    return flags == CL_MEM_READ_ONLY || flags == CL_MEM_WRITE_ONLY || flags == CL_MEM_READ_WRITE;
}

// ---- cl_khr_egl_image ------------------------------------------------------------------

cl_mem CL_API_CALL create_from_egl_image(cl_context context, CLeglDisplayKHR display, CLeglImageKHR image,
                                         cl_mem_flags flags, const cl_egl_image_properties_khr *properties,
                                         cl_int *errcode_ret) {
    constexpr const char *what = "clCreateFromEGLImageKHR";
    cl_platform_id platform = context_platform(context);
    if (!platform) return fail(errcode_ret, CL_INVALID_CONTEXT, what, "the context is not valid");
    if (icd_egl_image(platform) && next().clCreateFromEGLImageKHR)
        return next().clCreateFromEGLImageKHR(context, display, image, flags, properties, errcode_ret);

    ImportRequest req{what, CL_INVALID_EGL_OBJECT_KHR, CL_IMAGE_FORMAT_NOT_SUPPORTED, CL_IMAGE_FORMAT_NOT_SUPPORTED,
                      false};
    for (const cl_egl_image_properties_khr *p = properties; p && *p; p += 2) {
        if (p[0] == CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF && (p[1] == CL_TRUE || p[1] == CL_FALSE)) {
            req.allow_tiled = p[1] == CL_TRUE;
            continue;
        }
        return fail(errcode_ret, CL_INVALID_PROPERTY, what,
                    "property " + hex_text(static_cast<uint64_t>(p[0])) + " is not supported (cl_khr_egl_image defines none)");
    }
    if (!valid_access_flags(flags))
        return fail(errcode_ret, CL_INVALID_VALUE, what,
                    "flags must be CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY or CL_MEM_READ_WRITE");
    std::string why;
    const EglApi *egl = egl_api(&why);
    if (!egl) return fail(errcode_ret, CL_INVALID_EGL_OBJECT_KHR, what, "EGL is not available: " + why);
    auto dpy = static_cast<EGLDisplay>(display);
    if (!display_valid(*egl, dpy))
        return fail(errcode_ret, CL_INVALID_EGL_OBJECT_KHR, what, "display is not an initialised EGLDisplay");
    if (image == nullptr) return fail(errcode_ret, CL_INVALID_EGL_OBJECT_KHR, what, "image is EGL_NO_IMAGE");
    EglObject object;
    object.display = dpy;
    object.image = static_cast<EGLImageKHR>(image);
    return import_image(context, flags, *egl, object, req, errcode_ret);
}

// Acquire/release of layer-made objects: the import's own commands, with the
// command type of the interop API.
using ImportStep = cl_int(CL_API_CALL *)(cl_command_queue, cl_uint, const cl_mem *, cl_uint, const cl_event *,
                                         cl_event *);

cl_int run_step(ImportStep step, cl_command_type type, cl_command_queue queue, cl_uint n, const cl_mem *mems,
                cl_uint num_events, const cl_event *wait_list, cl_event *event) {
    cl_event ev = nullptr;
    cl_int err = step(queue, n, mems, num_events, wait_list, event ? &ev : nullptr);
    if (err == CL_SUCCESS && event) {
        event_types().add(ev, type);
        *event = ev;
    }
    return err;
}

// The tiled-export path's copies: GL -> linear before the acquire, linear ->
// GL after the release (once OpenCL's writes are done: the release waits for
// its own completion on this path only).
cl_int copy_objects(cl_uint n, const cl_mem *mems, bool to_linear, const char *what) {
    const EglApi *egl = egl_api();
    for (cl_uint i = 0; i < n; ++i) {
        EglObject object;
        if (!find_object(mems[i], &object) || !object.copy) continue;
        if (!to_linear && object.flags == CL_MEM_READ_ONLY) continue;
        std::string why;
        const bool ok = egl && with_gl_context(
                                   *egl, object.display, object.producer,
                                   [&](std::string *w) { return blit_linear(*egl, object.image, *object.copy, to_linear, w); },
                                   &why);
        if (!ok) {
            LOG_ERROR("%s: the GPU copy %s the linear buffer failed: %s", what, to_linear ? "into" : "out of",
                      why.c_str());
            return CL_OUT_OF_RESOURCES;
        }
    }
    return CL_SUCCESS;
}

bool any_copy_back(cl_uint n, const cl_mem *mems) {
    for (cl_uint i = 0; i < n; ++i) {
        EglObject object;
        if (find_object(mems[i], &object) && object.copy && object.flags != CL_MEM_READ_ONLY) return true;
    }
    return false;
}

cl_int acquire_step(ImportStep step, cl_command_type type, cl_command_queue queue, cl_uint n, const cl_mem *mems,
                    cl_uint num_events, const cl_event *wait_list, cl_event *event, const char *what) {
    if (cl_int err = copy_objects(n, mems, true, what); err != CL_SUCCESS) return err;
    return run_step(step, type, queue, n, mems, num_events, wait_list, event);
}

cl_int release_step(ImportStep step, cl_command_type type, cl_command_queue queue, cl_uint n, const cl_mem *mems,
                    cl_uint num_events, const cl_event *wait_list, cl_event *event, const char *what) {
    if (!any_copy_back(n, mems)) return run_step(step, type, queue, n, mems, num_events, wait_list, event);
    cl_event done = nullptr;
    cl_int err = run_step(step, type, queue, n, mems, num_events, wait_list, &done);
    if (err != CL_SUCCESS) return err;
    err = next().clWaitForEvents(1, &done);
    if (err == CL_SUCCESS) err = copy_objects(n, mems, false, what);
    if (event)
        *event = done;
    else
        next().clReleaseEvent(done);
    return err;
}

cl_context queue_context(cl_command_queue queue) {
    cl_context context = nullptr;
    if (next().clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr) != CL_SUCCESS)
        return nullptr;
    return context;
}

// Which of the objects the layer made; CL_SUCCESS when all of them (or, with
// *forward set, none of them and the ICD should get the call).
cl_int classify(cl_command_queue queue, cl_uint n, const cl_mem *mems, bool gl, bool *forward, const char *what) {
    *forward = false;
    cl_context context = queue_context(queue);
    if (!context) {
        LOG_ERROR("%s: invalid command queue", what);
        return CL_INVALID_COMMAND_QUEUE;
    }
    if ((n == 0) != (mems == nullptr)) {
        LOG_ERROR("%s: num_objects and mem_objects disagree", what);
        return CL_INVALID_VALUE;
    }
    cl_uint ours = 0;
    for (cl_uint i = 0; i < n; ++i) {
        EglObject object;
        if (find_object(mems[i], &object) && object.from_gl == gl) ++ours;
    }
    const cl_platform_id platform = context_platform(context);
    const bool icd = gl ? icd_gl_sharing(platform) : icd_egl_image(platform);
    if (ours == 0 && icd) {
        *forward = true;
        return CL_SUCCESS;
    }
    if (ours != n) {
        LOG_ERROR("%s: a memory object was not created from %s", what, gl ? "a GL object" : "an EGLImage");
        return gl ? CL_INVALID_GL_OBJECT : CL_INVALID_EGL_OBJECT_KHR;
    }
    if (gl && !find_share(context, nullptr)) {
        LOG_ERROR("%s: the queue's context was not created from a GL context", what);
        return CL_INVALID_CONTEXT;
    }
    return CL_SUCCESS;
}

// The four acquire/release entry points differ only in the ICD slot they
// forward to, the command type and the kind of object they take: one
// template serves them all.  `Slot` is the next layer's entry point, used
// when every object is the ICD's own (it has the extension itself).
template <auto Slot, bool Acquire, bool Gl, cl_command_type Type>
cl_int CL_API_CALL handoff(cl_command_queue queue, cl_uint n, const cl_mem *mems, cl_uint num_events,
                           const cl_event *wait_list, cl_event *event) {
    static constexpr const char *what = Gl ? (Acquire ? "clEnqueueAcquireGLObjects" : "clEnqueueReleaseGLObjects")
                                           : (Acquire ? "clEnqueueAcquireEGLObjectsKHR"
                                                      : "clEnqueueReleaseEGLObjectsKHR");
    bool forward = false;
    if (cl_int err = classify(queue, n, mems, Gl, &forward, what); err != CL_SUCCESS) return err;
    if (forward && next().*Slot) return (next().*Slot)(queue, n, mems, num_events, wait_list, event);
    return Acquire ? acquire_step(enqueue_acquire_external_mem_objects, Type, queue, n, mems, num_events, wait_list,
                                  event, what)
                   : release_step(enqueue_release_external_mem_objects, Type, queue, n, mems, num_events, wait_list,
                                  event, what);
}

constexpr auto enqueue_acquire_egl_objects =
    handoff<&cl_icd_dispatch::clEnqueueAcquireEGLObjectsKHR, true, false, CL_COMMAND_ACQUIRE_EGL_OBJECTS_KHR>;
constexpr auto enqueue_release_egl_objects =
    handoff<&cl_icd_dispatch::clEnqueueReleaseEGLObjectsKHR, false, false, CL_COMMAND_RELEASE_EGL_OBJECTS_KHR>;
constexpr auto enqueue_acquire_gl_objects =
    handoff<&cl_icd_dispatch::clEnqueueAcquireGLObjects, true, true, CL_COMMAND_ACQUIRE_GL_OBJECTS>;
constexpr auto enqueue_release_gl_objects =
    handoff<&cl_icd_dispatch::clEnqueueReleaseGLObjects, false, true, CL_COMMAND_RELEASE_GL_OBJECTS>;

// ---- cl_khr_gl_sharing: memory objects -----------------------------------------------

bool forward_gl(cl_context context) { return icd_gl_sharing(context_platform(context)); }

cl_mem create_from_gl(cl_context context, cl_mem_flags flags, EGLenum egl_target, cl_gl_object_type gl_type,
                      GLenum target, GLint level, GLuint name, const char *what, cl_int *errcode_ret) {
    GlShare share;
    if (!find_share(context, &share))
        return fail(errcode_ret, CL_INVALID_CONTEXT, what,
                    "the context was not created with CL_GL_CONTEXT_KHR and CL_EGL_DISPLAY_KHR");
    if (!valid_access_flags(flags))
        return fail(errcode_ret, CL_INVALID_VALUE, what,
                    "flags must be CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY or CL_MEM_READ_WRITE");
    if (level < 0) return fail(errcode_ret, CL_INVALID_MIP_LEVEL, what, "miplevel is negative");
    if (name == 0) return fail(errcode_ret, CL_INVALID_GL_OBJECT, what, "the GL object name is 0");
    std::string why;
    const EglApi *egl = egl_api(&why);
    if (!egl || !egl->CreateImageKHR || !egl->DestroyImageKHR)
        return fail(errcode_ret, CL_INVALID_CONTEXT, what, "EGL (with eglCreateImageKHR) is not available: " + why);

    std::vector<EGLint> attribs;
    if (egl_target == EGL_GL_TEXTURE_2D_KHR) attribs = {EGL_GL_TEXTURE_LEVEL_KHR, level};
    // The texture keeps its contents (EGL_KHR_image_base: otherwise undefined).
    attribs.insert(attribs.end(), {EGL_IMAGE_PRESERVED_KHR, EGL_TRUE, EGL_NONE});
    EGLImageKHR image = egl->CreateImageKHR(share.display, share.context, egl_target,
                                            reinterpret_cast<EGLClientBuffer>(static_cast<uintptr_t>(name)),
                                            attribs.data());
    if (image == EGL_NO_IMAGE_KHR) {
        const EGLint e = egl->GetError();
        const cl_int code = e == EGL_BAD_MATCH && level > 0 ? CL_INVALID_MIP_LEVEL : CL_INVALID_GL_OBJECT;
        return fail(errcode_ret, code, what,
                    std::string("eglCreateImageKHR from GL object ") + std::to_string(name) + " failed (" +
                        egl_error_name(e) + "): not a complete " +
                        (egl_target == EGL_GL_TEXTURE_2D_KHR ? "2D texture" : "renderbuffer") +
                        " of the context, or the level does not exist");
    }
    EglObject object;
    object.display = share.display;
    object.image = image;
    object.own_image = true;
    object.from_gl = true;
    object.producer = share.context;
    object.gl_type = gl_type;
    object.target = target;
    object.level = level;
    object.name = name;
    ImportRequest req{what, CL_INVALID_GL_OBJECT, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, CL_INVALID_OPERATION,
                      share.allow_tiled};
    cl_mem mem = import_image(context, flags, *egl, object, req, errcode_ret);
    if (!mem) egl->DestroyImageKHR(share.display, image);
    return mem;
}

cl_mem CL_API_CALL create_from_gl_texture(cl_context context, cl_mem_flags flags, cl_GLenum target,
                                          cl_GLint miplevel, cl_GLuint texture, cl_int *errcode_ret) {
    if (!find_share(context, nullptr) && forward_gl(context) && next().clCreateFromGLTexture)
        return next().clCreateFromGLTexture(context, flags, target, miplevel, texture, errcode_ret);
    constexpr const char *what = "clCreateFromGLTexture";
    switch (target) {
    case GL_TEXTURE_2D: break;
    case 0x0DE0 /* GL_TEXTURE_1D */: case 0x8C18 /* GL_TEXTURE_1D_ARRAY */: case 0x8C2A /* GL_TEXTURE_BUFFER */:
    case GL_TEXTURE_2D_ARRAY: case GL_TEXTURE_3D: case 0x84F5 /* GL_TEXTURE_RECTANGLE */:
    case GL_TEXTURE_CUBE_MAP_POSITIVE_X: case GL_TEXTURE_CUBE_MAP_NEGATIVE_X:
    case GL_TEXTURE_CUBE_MAP_POSITIVE_Y: case GL_TEXTURE_CUBE_MAP_NEGATIVE_Y:
    case GL_TEXTURE_CUBE_MAP_POSITIVE_Z: case GL_TEXTURE_CUBE_MAP_NEGATIVE_Z:
        return fail(errcode_ret, CL_INVALID_OPERATION, what,
                    "only GL_TEXTURE_2D textures are shared by the layer (target " + hex_text(target) + ")");
    default:
        return fail(errcode_ret, CL_INVALID_VALUE, what, "texture_target is not a GL texture target");
    }
    return create_from_gl(context, flags, EGL_GL_TEXTURE_2D_KHR, CL_GL_OBJECT_TEXTURE2D, target, miplevel, texture,
                          what, errcode_ret);
}

cl_mem CL_API_CALL create_from_gl_texture_2d(cl_context context, cl_mem_flags flags, cl_GLenum target,
                                             cl_GLint miplevel, cl_GLuint texture, cl_int *errcode_ret) {
    if (!find_share(context, nullptr) && forward_gl(context) && next().clCreateFromGLTexture2D)
        return next().clCreateFromGLTexture2D(context, flags, target, miplevel, texture, errcode_ret);
    return create_from_gl_texture(context, flags, target, miplevel, texture, errcode_ret);
}

cl_mem CL_API_CALL create_from_gl_renderbuffer(cl_context context, cl_mem_flags flags, cl_GLuint renderbuffer,
                                               cl_int *errcode_ret) {
    if (!find_share(context, nullptr) && forward_gl(context) && next().clCreateFromGLRenderbuffer)
        return next().clCreateFromGLRenderbuffer(context, flags, renderbuffer, errcode_ret);
    return create_from_gl(context, flags, EGL_GL_RENDERBUFFER_KHR, CL_GL_OBJECT_RENDERBUFFER, GL_RENDERBUFFER, 0,
                          renderbuffer, "clCreateFromGLRenderbuffer", errcode_ret);
}

cl_mem CL_API_CALL create_from_gl_buffer(cl_context context, cl_mem_flags flags, cl_GLuint buffer,
                                         cl_int *errcode_ret) {
    if (!find_share(context, nullptr) && forward_gl(context) && next().clCreateFromGLBuffer)
        return next().clCreateFromGLBuffer(context, flags, buffer, errcode_ret);
    constexpr const char *what = "clCreateFromGLBuffer";
    GlShare share;
    if (!find_share(context, &share))
        return fail(errcode_ret, CL_INVALID_CONTEXT, what,
                    "the context was not created with CL_GL_CONTEXT_KHR and CL_EGL_DISPLAY_KHR");
    if (!valid_access_flags(flags))
        return fail(errcode_ret, CL_INVALID_VALUE, what,
                    "flags must be CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY or CL_MEM_READ_WRITE");
    if (buffer == 0) return fail(errcode_ret, CL_INVALID_GL_OBJECT, what, "the GL buffer name is 0");
    std::string why;
    const EglApi *egl = egl_api(&why);
    if (!egl) return fail(errcode_ret, CL_INVALID_CONTEXT, what, "EGL is not available: " + why);
    if (cl_int err = check_devices(*egl, share.display, context_device_list(context), &why); err != CL_SUCCESS)
        return fail(errcode_ret, err, what, why);
    GlBufferExport ex;
    cl_int code = CL_SUCCESS;
    if (!export_gl_buffer(*egl, share.display, share.context, buffer, flags, &ex, &code, &why))
        return fail(errcode_ret, code, what, why);
    if (ex.offset != 0 || ex.size == 0) {
        ::close(ex.fd);
        return fail(errcode_ret, CL_INVALID_GL_OBJECT, what,
                    "GL buffer " + std::to_string(buffer) + " is a sub-allocation (offset " + std::to_string(ex.offset) +
                        ", size " + std::to_string(ex.size) + " of its dma-buf): only whole dma-bufs are imported");
    }
    const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR, static_cast<cl_mem_properties>(ex.fd), 0};
    cl_int err = CL_SUCCESS;
    cl_mem mem = layer_create_buffer(context, props, flags, ex.size, nullptr, &err);
    if (!mem) {
        ::close(ex.fd);
        return fail(errcode_ret, err, what, "the dma-buf import of the GL buffer failed (error " + std::to_string(err) + ")");
    }
    EglObject object;
    object.context = context;
    object.display = share.display;
    object.from_gl = true;
    object.gl_type = CL_GL_OBJECT_BUFFER;
    object.name = buffer;
    object.producer = share.context;
    object.flags = flags;
    if (!track_object(mem, object))
        return fail(errcode_ret, CL_OUT_OF_RESOURCES, what, "cannot register the destructor callback");
    LOG_INFO("%s: GL buffer %u, %zu bytes -> %p", what, buffer, ex.size, static_cast<void *>(mem));
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return mem;
}

cl_event CL_API_CALL create_event_from_gl_sync(cl_context context, cl_GLsync sync, cl_int *errcode_ret) {
    constexpr const char *what = "clCreateEventFromGLsyncKHR";
    GlShare share;
    if (!find_share(context, &share)) {
        if (forward_gl(context) && next().clCreateEventFromGLsyncKHR)
            return next().clCreateEventFromGLsyncKHR(context, sync, errcode_ret);
        LOG_ERROR("%s: the context was not created with CL_GL_CONTEXT_KHR and CL_EGL_DISPLAY_KHR", what);
        if (errcode_ret) *errcode_ret = CL_INVALID_CONTEXT;
        return nullptr;
    }
    std::string why;
    const EglApi *egl = egl_api(&why);
    cl_int code = CL_INVALID_CONTEXT;
    cl_event event = egl ? gl_sync_event(*egl, context, share.display, share.context, reinterpret_cast<GLsync>(sync),
                                         &code, &why)
                         : nullptr;
    if (!event) {
        LOG_ERROR("%s: %s", what, why.c_str());
        if (errcode_ret) *errcode_ret = code;
        return nullptr;
    }
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return event;
}

cl_mem CL_API_CALL create_from_gl_texture_3d(cl_context context, cl_mem_flags flags, cl_GLenum target,
                                             cl_GLint miplevel, cl_GLuint texture, cl_int *errcode_ret) {
    if (!find_share(context, nullptr) && forward_gl(context) && next().clCreateFromGLTexture3D)
        return next().clCreateFromGLTexture3D(context, flags, target, miplevel, texture, errcode_ret);
    if (!find_share(context, nullptr))
        return fail(errcode_ret, CL_INVALID_CONTEXT, "clCreateFromGLTexture3D",
                    "the context was not created with CL_GL_CONTEXT_KHR and CL_EGL_DISPLAY_KHR");
    return fail(errcode_ret, CL_INVALID_OPERATION, "clCreateFromGLTexture3D",
                "only GL_TEXTURE_2D textures are shared by the layer");
}

cl_context mem_context(cl_mem mem) {
    cl_context context = nullptr;
    if (next().clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof context, &context, nullptr) != CL_SUCCESS)
        return nullptr;
    return context;
}

cl_int CL_API_CALL get_gl_object_info(cl_mem mem, cl_gl_object_type *type, cl_GLuint *name) {
    EglObject object;
    if (!find_object(mem, &object) || !object.from_gl) {
        cl_context context = mem_context(mem);
        if (!context) return CL_INVALID_MEM_OBJECT;
        if (forward_gl(context) && next().clGetGLObjectInfo) return next().clGetGLObjectInfo(mem, type, name);
        return CL_INVALID_GL_OBJECT;
    }
    if (type) *type = object.gl_type;
    if (name) *name = object.name;
    return CL_SUCCESS;
}

cl_int CL_API_CALL get_gl_texture_info(cl_mem mem, cl_gl_texture_info param, size_t size, void *value,
                                       size_t *size_ret) {
    EglObject object;
    if (!find_object(mem, &object) || !object.from_gl) {
        cl_context context = mem_context(mem);
        if (!context) return CL_INVALID_MEM_OBJECT;
        if (forward_gl(context) && next().clGetGLTextureInfo)
            return next().clGetGLTextureInfo(mem, param, size, value, size_ret);
        return CL_INVALID_GL_OBJECT;
    }
    if (object.gl_type != CL_GL_OBJECT_TEXTURE2D) return CL_INVALID_GL_OBJECT;  // renderbuffers, buffers
    switch (param) {
    case CL_GL_TEXTURE_TARGET: {
        const cl_GLenum target = object.target;
        return answer(&target, sizeof target, size, value, size_ret);
    }
    case CL_GL_MIPMAP_LEVEL: {
        const cl_GLint level = object.level;
        return answer(&level, sizeof level, size, value, size_ret);
    }
    case CL_GL_NUM_SAMPLES: {
        const GLsizei samples = 1;  // GLsizei, as cl_gl.h documents CL_GL_NUM_SAMPLES
        return answer(&samples, sizeof samples, size, value, size_ret);
    }
    default: return CL_INVALID_VALUE;
    }
}

// ---- cl_khr_gl_sharing: contexts ----------------------------------------------------

struct ContextRequest {
    bool any_gl = false;             // a GL property was given
    cl_platform_id platform = nullptr;
    EGLDisplay display = EGL_NO_DISPLAY;
    bool has_display = false;
    EGLContext gl_context = EGL_NO_CONTEXT;
    bool has_gl_context = false;
    bool other_window_system = false;  // GLX/WGL/CGL
    bool allow_tiled = false;
    std::vector<cl_context_properties> stripped;  // for the ICD
    std::vector<cl_context_properties> original;
};

void parse_context_properties(const cl_context_properties *props, ContextRequest *req) {
    if (!props) return;
    const cl_context_properties *p = props;
    for (; *p; p += 2) {
        switch (p[0]) {
        case CL_GL_CONTEXT_KHR:
            req->any_gl = req->has_gl_context = true;
            req->gl_context = reinterpret_cast<EGLContext>(p[1]);
            continue;
        case CL_EGL_DISPLAY_KHR:
            req->any_gl = req->has_display = true;
            req->display = reinterpret_cast<EGLDisplay>(p[1]);
            continue;
        case CL_GLX_DISPLAY_KHR: case CL_WGL_HDC_KHR: case CL_CGL_SHAREGROUP_KHR:
            req->any_gl = req->other_window_system = true;
            continue;
        case CL_EGL_IMAGE_ALLOW_TILED_CLDMABUF:
            req->any_gl = true;
            req->allow_tiled = p[1] == CL_TRUE;
            continue;
        case CL_CONTEXT_PLATFORM:
            req->platform = reinterpret_cast<cl_platform_id>(p[1]);
            break;
        default: break;
        }
        req->stripped.push_back(p[0]);
        req->stripped.push_back(p[1]);
    }
    req->stripped.push_back(0);
    req->original.assign(props, p + 1);
}

// Validates a GL request the layer serves; CL_SUCCESS or an error after one log line.
cl_int check_gl_request(const ContextRequest &req, const EglApi **egl_out, const char *what) {
    if (req.other_window_system) {
        LOG_ERROR("%s: the layer shares with GL only through EGL (CL_EGL_DISPLAY_KHR), not GLX/WGL/CGL", what);
        return CL_INVALID_OPERATION;
    }
    if (req.has_gl_context && !req.has_display) {
        LOG_ERROR("%s: CL_GL_CONTEXT_KHR needs CL_EGL_DISPLAY_KHR", what);
        return CL_INVALID_OPERATION;
    }
    std::string why;
    const EglApi *egl = egl_api(&why);
    if (!egl) {
        LOG_ERROR("%s: EGL is not available: %s", what, why.c_str());
        return CL_INVALID_OPERATION;
    }
    if (!display_valid(*egl, req.display)) {
        LOG_ERROR("%s: CL_EGL_DISPLAY_KHR is not an initialised EGLDisplay", what);
        return CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR;
    }
    if (req.has_gl_context) {
        EGLint type = 0;
        if (!egl->QueryContext(req.display, req.gl_context, EGL_CONTEXT_CLIENT_TYPE, &type)) {
            LOG_ERROR("%s: CL_GL_CONTEXT_KHR is not an EGLContext of the display (%s)", what,
                      egl_error_name(egl->GetError()));
            return CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR;
        }
    }
    *egl_out = egl;
    return CL_SUCCESS;
}

void remember(cl_context context, const ContextRequest &req) {
    if (!req.has_gl_context && !req.allow_tiled) return;
    GlShare share;
    share.display = req.display;
    share.context = req.gl_context;
    share.allow_tiled = req.allow_tiled;
    share.properties = req.original;
    {
        std::lock_guard lock(shares_mutex);
        shares[context] = share;
    }
    if (next().clSetContextDestructorCallback)
        next().clSetContextDestructorCallback(context, on_context_destroyed, nullptr);
}

cl_platform_id device_platform(cl_device_id device) {
    cl_platform_id platform = nullptr;
    next().clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr);
    return platform;
}

cl_context CL_API_CALL create_context(const cl_context_properties *properties, cl_uint num_devices,
                                      const cl_device_id *devices,
                                      void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                      void *user_data, cl_int *errcode_ret) {
    ContextRequest req;
    parse_context_properties(properties, &req);
    if (!req.any_gl) return next().clCreateContext(properties, num_devices, devices, notify, user_data, errcode_ret);
    cl_platform_id platform = req.platform ? req.platform : (devices && num_devices ? device_platform(devices[0]) : nullptr);
    if (icd_gl_sharing(platform) && !req.allow_tiled)
        return next().clCreateContext(properties, num_devices, devices, notify, user_data, errcode_ret);
    const EglApi *egl = nullptr;
    if (cl_int err = check_gl_request(req, &egl, "clCreateContext"); err != CL_SUCCESS) {
        if (errcode_ret) *errcode_ret = err;
        return nullptr;
    }
    if (devices && num_devices) {
        std::string why;
        if (check_devices(*egl, req.display, std::vector<cl_device_id>(devices, devices + num_devices), &why) !=
            CL_SUCCESS) {
            LOG_ERROR("clCreateContext: %s", why.c_str());
            if (errcode_ret) *errcode_ret = CL_INVALID_OPERATION;
            return nullptr;
        }
    }
    cl_context context =
        next().clCreateContext(req.stripped.data(), num_devices, devices, notify, user_data, errcode_ret);
    if (context) remember(context, req);
    return context;
}

cl_context CL_API_CALL create_context_from_type(const cl_context_properties *properties, cl_device_type type,
                                                void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *),
                                                void *user_data, cl_int *errcode_ret) {
    ContextRequest req;
    parse_context_properties(properties, &req);
    if (!req.any_gl || (icd_gl_sharing(req.platform) && !req.allow_tiled))
        return next().clCreateContextFromType(properties, type, notify, user_data, errcode_ret);
    const EglApi *egl = nullptr;
    if (cl_int err = check_gl_request(req, &egl, "clCreateContextFromType"); err != CL_SUCCESS) {
        if (errcode_ret) *errcode_ret = err;
        return nullptr;
    }
    cl_int err = CL_SUCCESS;
    cl_context context = next().clCreateContextFromType(req.stripped.data(), type, notify, user_data, &err);
    if (!context) {
        if (errcode_ret) *errcode_ret = err;
        return nullptr;
    }
    std::string why;
    if (check_devices(*egl, req.display, context_device_list(context), &why) != CL_SUCCESS) {
        LOG_ERROR("clCreateContextFromType: %s", why.c_str());
        next().clReleaseContext(context);
        if (errcode_ret) *errcode_ret = CL_INVALID_OPERATION;
        return nullptr;
    }
    remember(context, req);
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return context;
}

cl_int CL_API_CALL get_context_info(cl_context context, cl_context_info name, size_t size, void *value,
                                    size_t *size_ret) {
    if (name == CL_CONTEXT_PROPERTIES) {
        GlShare share;
        if (find_share(context, &share)) {
            cl_int err = next().clGetContextInfo(context, CL_CONTEXT_REFERENCE_COUNT, 0, nullptr, nullptr);
            if (err != CL_SUCCESS) return err;
            return answer(share.properties.data(), share.properties.size() * sizeof(cl_context_properties), size,
                          value, size_ret);
        }
    }
    return next().clGetContextInfo(context, name, size, value, size_ret);
}

cl_int CL_API_CALL get_gl_context_info(const cl_context_properties *properties, cl_gl_context_info name,
                                       size_t size, void *value, size_t *size_ret) {
    ContextRequest req;
    parse_context_properties(properties, &req);
    if (icd_gl_sharing(req.platform) && next().clGetGLContextInfoKHR)
        return next().clGetGLContextInfoKHR(properties, name, size, value, size_ret);
    if (name != CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR && name != CL_DEVICES_FOR_GL_CONTEXT_KHR) return CL_INVALID_VALUE;
    if (!req.platform) {
        LOG_ERROR("clGetGLContextInfoKHR: give CL_CONTEXT_PLATFORM (the layer serves one platform at a time)");
        return CL_INVALID_PLATFORM;
    }
    if (!req.has_gl_context) {
        LOG_ERROR("clGetGLContextInfoKHR: properties name no GL context (CL_GL_CONTEXT_KHR)");
        return CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR;
    }
    const EglApi *egl = nullptr;
    if (cl_int err = check_gl_request(req, &egl, "clGetGLContextInfoKHR"); err != CL_SUCCESS) return err;
    cl_uint n = 0;
    if (cl_int err = next().clGetDeviceIDs(req.platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n); err != CL_SUCCESS)
        return err == CL_DEVICE_NOT_FOUND ? answer(nullptr, 0, size, value, size_ret) : err;
    std::vector<cl_device_id> all(n);
    if (cl_int err = next().clGetDeviceIDs(req.platform, CL_DEVICE_TYPE_ALL, n, all.data(), nullptr); err != CL_SUCCESS)
        return err;
    const DisplayDevice display = display_device(*egl, req.display);
    std::vector<cl_device_id> matching;
    for (cl_device_id d : all) {
        std::string why;
        if (match_device(display, device_facts(d), &why) != Match::no) matching.push_back(d);
    }
    if (name == CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR)
        return answer(matching.data(), matching.empty() ? 0 : sizeof(cl_device_id), size, value, size_ret);
    return answer(matching.data(), matching.size() * sizeof(cl_device_id), size, value, size_ret);
}

}  // namespace

void *egl_function(const char *name) {
    if (egl_mode() == EglMode::off || !name) return nullptr;
    if (!std::strcmp(name, "clCreateFromEGLImageKHR")) return reinterpret_cast<void *>(&create_from_egl_image);
    if (!std::strcmp(name, "clEnqueueAcquireEGLObjectsKHR"))
        return reinterpret_cast<void *>(enqueue_acquire_egl_objects);
    if (!std::strcmp(name, "clEnqueueReleaseEGLObjectsKHR"))
        return reinterpret_cast<void *>(enqueue_release_egl_objects);
    if (!std::strcmp(name, "clGetGLContextInfoKHR")) return reinterpret_cast<void *>(&get_gl_context_info);
    if (!std::strcmp(name, "clCreateEventFromGLsyncKHR")) return reinterpret_cast<void *>(&create_event_from_gl_sync);
    return nullptr;
}

void install_egl_overrides(cl_icd_dispatch &table) {
    if (egl_mode() == EglMode::off) return;
    layer_create_image = table.clCreateImageWithProperties;
    layer_create_buffer = table.clCreateBufferWithProperties;
    table.clCreateEventFromGLsyncKHR = create_event_from_gl_sync;
    table.clCreateFromEGLImageKHR = create_from_egl_image;
    table.clEnqueueAcquireEGLObjectsKHR = enqueue_acquire_egl_objects;
    table.clEnqueueReleaseEGLObjectsKHR = enqueue_release_egl_objects;
    table.clCreateFromGLTexture = create_from_gl_texture;
    table.clCreateFromGLTexture2D = create_from_gl_texture_2d;
    table.clCreateFromGLTexture3D = create_from_gl_texture_3d;
    table.clCreateFromGLRenderbuffer = create_from_gl_renderbuffer;
    table.clCreateFromGLBuffer = create_from_gl_buffer;
    table.clGetGLObjectInfo = get_gl_object_info;
    table.clGetGLTextureInfo = get_gl_texture_info;
    table.clEnqueueAcquireGLObjects = enqueue_acquire_gl_objects;
    table.clEnqueueReleaseGLObjects = enqueue_release_gl_objects;
    table.clGetGLContextInfoKHR = get_gl_context_info;
    table.clCreateContext = create_context;
    table.clCreateContextFromType = create_context_from_type;
    table.clGetContextInfo = get_context_info;
}

}  // namespace cldmabuf
