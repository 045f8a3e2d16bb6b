// Image imports: clCreateImageWithProperties with
// CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR (cl_khr_external_memory_dma_buf,
// linear layouts).
//
// The layer translates the import before the ICD sees anything (an ICD
// validates e.g. a non-zero image_row_pitch without host_ptr before it looks
// at properties), then hands the ICD one of three routes:
//
//   image-from-buffer  a CL_MEM_USE_HOST_PTR buffer over the mapping and a 2D
//                      image on it (cl_khr_image2d_from_buffer), when the
//                      pitch and base meet the device's alignments;
//   host-ptr           CL_MEM_USE_HOST_PTR on the image itself, with the
//                      dma-buf's pitch as host row pitch;
//   copy               an image of the ICD's own, written from the dma-buf
//                      on acquire and read back on release.
//
// Zero-copy is proven, not assumed: the first import of a context on a
// device probes the route (a write to the host memory after creation must
// reach a device-side copy out of the image) and falls back to the copy
// route when the ICD keeps its own storage.  docs/images.md has the routes
// each ICD got.
#include "layer/param_answer.hpp"
#include "layer/ext/image_import.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include <drm_fourcc.h>

#include "CL/cl_ext_cldmabuf.h"
#include "layer/blit/exporter_gate.hpp"
#include "layer/blit/gem_cache.hpp"
#include "layer/blit/tiled_shadow.hpp"
#include "layer/dispatch.hpp"
#include "layer/ext/dmabuf.hpp"
#include "layer/ext/exporter.hpp"
#include "layer/ext/import.hpp"
#include "layer/ext/native_import.hpp"
#include "layer/ext/properties.hpp"
#include "layer/ext/zero_copy_check.hpp"
#include "layer/kernel_ops.hpp"
#include "layer/log.hpp"
#include "layer/registry.hpp"
#include "layer/stats.hpp"

namespace cldmabuf {

// ---- properties ------------------------------------------------------------

cl_int split_image_layer_properties(const cl_mem_properties *props, ImageLayerProperties *out, std::string *why) {
    *out = ImageLayerProperties{};
    bool seen_offset = false, seen_tiled = false, seen_linear = false;
    auto flag = [why](cl_mem_properties value, const char *name, bool *dst) -> cl_int {
        if (value != CL_TRUE && value != CL_FALSE) {
            *why = std::string(name) + " must be CL_TRUE or CL_FALSE";
            return CL_INVALID_PROPERTY;
        }
        *dst = value == CL_TRUE;
        return CL_SUCCESS;
    };
    auto twice = [why](bool *seen, const char *name) -> bool {
        if (*seen) *why = std::string(name) + " is given twice";
        return std::exchange(*seen, true);
    };
    const cl_mem_properties *p = props;
    while (*p) {
        switch (p[0]) {
        case CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF:
            if (twice(&seen_offset, "CL_MEM_DMA_BUF_PLANE_OFFSET_CLDMABUF")) return CL_INVALID_PROPERTY;
            out->plane_offset = p[1];
            break;
        case CL_MEM_DMA_BUF_MODIFIER_CLDMABUF:
            if (twice(&out->has_modifier, "CL_MEM_DMA_BUF_MODIFIER_CLDMABUF")) return CL_INVALID_PROPERTY;
            out->modifier = p[1];
            break;
        case CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF:
            if (twice(&seen_tiled, "CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF")) return CL_INVALID_PROPERTY;
            if (cl_int err = flag(p[1], "CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF", &out->allow_tiled)) return err;
            break;
        case CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF:
            if (twice(&seen_linear, "CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF")) return CL_INVALID_PROPERTY;
            if (cl_int err = flag(p[1], "CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF", &out->assume_linear)) return err;
            break;
        case CL_MEM_DEVICE_HANDLE_LIST_KHR: {
            // The only variable-length entry: name, devices, end marker.
            out->rest.push_back(*p++);
            while (*p != CL_MEM_DEVICE_HANDLE_LIST_END_KHR) out->rest.push_back(*p++);
            out->rest.push_back(*p++);
            continue;
        }
        default:
            out->rest.push_back(p[0]);
            out->rest.push_back(p[1]);
            break;
        }
        p += 2;
    }
    out->rest.push_back(0);
    return CL_SUCCESS;
}

cl_int check_modifier(const ImageLayerProperties &props, std::string *why) {
    if (!props.has_modifier || props.modifier == DRM_FORMAT_MOD_LINEAR) return CL_SUCCESS;
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(props.modifier));
    if (props.modifier == DRM_FORMAT_MOD_INVALID) {
        if (props.assume_linear) return CL_SUCCESS;
        *why = "DRM_FORMAT_MOD_INVALID means the layout is unknown; set CL_MEM_DMA_BUF_ASSUME_LINEAR_CLDMABUF "
               "to CL_TRUE if the dma-buf is linear";
        return CL_INVALID_PROPERTY;
    }
    if (props.modifier == I915_FORMAT_MOD_X_TILED || props.modifier == I915_FORMAT_MOD_Y_TILED) {
        const char *name = props.modifier == I915_FORMAT_MOD_X_TILED ? "I915_FORMAT_MOD_X_TILED"
                                                                       : "I915_FORMAT_MOD_Y_TILED";
        if (!props.allow_tiled) {
            *why = std::string("modifier ") + name + " is tiled: the import needs a de-tiled copy; set "
                   "CL_MEM_DMA_BUF_ALLOW_TILED_CLDMABUF to CL_TRUE to consent to it";
            return CL_INVALID_PROPERTY;
        }
        return CL_SUCCESS;  // consented: layer/blit/tiled_shadow.cpp decides whether it can be served
    }
    *why = std::string("modifier ") + hex +
           " is not supported (only DRM_FORMAT_MOD_LINEAR; compressed layouts are never imported)";
    return CL_INVALID_PROPERTY;
}

size_t image_element_size(const cl_image_format &f) {
    size_t channels = 0;
    switch (f.image_channel_order) {
    case CL_R: case CL_A: case CL_INTENSITY: case CL_LUMINANCE: case CL_DEPTH: channels = 1; break;
    case CL_RG: case CL_RA: case CL_Rx: channels = 2; break;
    case CL_RGB: case CL_RGx: case CL_sRGB: channels = 3; break;
    case CL_RGBA: case CL_BGRA: case CL_ARGB: case CL_ABGR: case CL_RGBx: case CL_sRGBA: case CL_sBGRA:
    case CL_sRGBx: channels = 4; break;
#ifdef CL_DEPTH_STENCIL
    case CL_DEPTH_STENCIL:
        return f.image_channel_data_type == CL_UNORM_INT24 ? 4 : f.image_channel_data_type == CL_FLOAT ? 8 : 0;
#endif
    default: return 0;
    }
    switch (f.image_channel_data_type) {
    case CL_SNORM_INT8: case CL_UNORM_INT8: case CL_SIGNED_INT8: case CL_UNSIGNED_INT8: return channels;
    case CL_SNORM_INT16: case CL_UNORM_INT16: case CL_SIGNED_INT16: case CL_UNSIGNED_INT16: case CL_HALF_FLOAT:
        return 2 * channels;
    case CL_SIGNED_INT32: case CL_UNSIGNED_INT32: case CL_FLOAT: return 4 * channels;
    // Packed types hold every channel in one element.
    case CL_UNORM_SHORT_565: case CL_UNORM_SHORT_555: return 2;
    case CL_UNORM_INT_101010: case CL_UNORM_INT24: return 4;
#ifdef CL_UNORM_INT_101010_2
    case CL_UNORM_INT_101010_2: return 4;
#endif
    default: return 0;
    }
}

namespace {

cl_mem fail(cl_int *errcode_ret, cl_int err, const std::string &why) {
    return refuse_import(errcode_ret, err, "image import", why);
}

template <typename T>
T device_value(cl_device_id d, cl_device_info name, T fallback = T{}) {
    T v = fallback;
    if (next().clGetDeviceInfo(d, name, sizeof v, &v, nullptr) != CL_SUCCESS) return fallback;
    return v;
}

bool device_has_extension(cl_device_id d, const char *ext) {
    size_t n = 0;
    if (next().clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, nullptr, &n) != CL_SUCCESS) return false;
    std::string s(n, '\0');
    if (next().clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, s.data(), nullptr) != CL_SUCCESS) return false;
    s = " " + std::string(s.c_str()) + " ";
    return s.find(std::string(" ") + ext + " ") != std::string::npos;
}

const char *route_name(cl_uint route) {
    switch (route) {
    case CL_DMA_BUF_ROUTE_HOST_PTR_CLDMABUF: return "zero-copy (USE_HOST_PTR image)";
    case CL_DMA_BUF_ROUTE_IMAGE_FROM_BUFFER_CLDMABUF: return "zero-copy (USE_HOST_PTR buffer + image from buffer)";
    default: return "device copy";
    }
}

// ---- teardown --------------------------------------------------------------

void teardown(Import &import) {
    {
        std::lock_guard lock(import.backend_mutex);
        import.backend.reset();
    }
    import.tiled.reset();  // the ICD's image over the shadow is gone
    unmap_dmabuf(import);  // layer/ext/mapping_cache may keep it for the next import
    const int dup = import.fd, app = import.app_fd;
    const bool closed_app = close_import_fds(import);
    LOG_DEBUG("image import destroyed: unmapped %zu bytes, closed the layer's fd %d%s%d", import.mapping_len, dup,
              closed_app ? " and the application's fd " : "; left the application's number alone: ", app);
}

// The image is gone.  Without an internal buffer nothing uses the mapping any
// more; with one, the buffer (released by the image last) tears down.
void CL_CALLBACK on_image_destroyed(cl_mem mem, void *) {
    std::shared_ptr<Import> import = imports().remove(mem);
    if (import && !import->image.internal_buffer) teardown(*import);
}

void CL_CALLBACK on_internal_buffer_destroyed(cl_mem, void *user_data) {
    auto *holder = static_cast<std::shared_ptr<Import> *>(user_data);
    teardown(**holder);
    delete holder;
}

// ---- zero-copy probe -----------------------------------------------------

// Whether `route` really shares the host memory on `device`: a write to the
// host memory after the image's creation must show in a device-side copy
// out of the image.  Cached per (root device, route) for the process: what
// the ICD does with a USE_HOST_PTR image is the device's, not the context's,
// and root devices (unlike contexts and sub-devices, whose addresses are
// reused once released) live as long as their platform.
std::mutex probe_mutex;
std::map<std::pair<cl_device_id, cl_uint>, bool> probe_cache;

void CL_CALLBACK free_probe_memory(cl_mem, void *memory) { std::free(memory); }

bool run_probe(cl_context context, cl_device_id device, cl_uint route) {
    constexpr size_t width = 16, height = 4;
    const cl_image_format format{CL_RGBA, CL_UNORM_INT8};
    size_t pitch = width * 4;
    if (route == CL_DMA_BUF_ROUTE_IMAGE_FROM_BUFFER_CLDMABUF) {
        size_t align = std::max<cl_uint>(device_value<cl_uint>(device, CL_DEVICE_IMAGE_PITCH_ALIGNMENT), 1) * 4;
        pitch = (pitch + align - 1) / align * align;
    }
    const size_t bytes = (pitch * height + 4095) / 4096 * 4096;
    auto *host = static_cast<unsigned char *>(std::aligned_alloc(4096, bytes));
    if (!host) return false;
    std::memset(host, 0x11, bytes);

    cl_int err = CL_SUCCESS;
    cl_mem buffer = nullptr, image = nullptr;
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = width;
    desc.image_height = height;
    desc.image_row_pitch = pitch;
    if (route == CL_DMA_BUF_ROUTE_IMAGE_FROM_BUFFER_CLDMABUF) {
        buffer = next().clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, host, &err);
        if (buffer) {
            desc.buffer = buffer;
            image = next().clCreateImage(context, CL_MEM_READ_WRITE, &format, &desc, nullptr, &err);
        }
    } else {
        image = next().clCreateImage(context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, &format, &desc, host, &err);
    }
    cl_mem owner = buffer ? buffer : image;
    if (!owner || next().clSetMemObjectDestructorCallback(owner, free_probe_memory, host) != CL_SUCCESS) {
        if (image) next().clReleaseMemObject(image);
        if (buffer) next().clReleaseMemObject(buffer);
        // Nothing was enqueued on the objects and both are released: the ICD
        // has no use of `host` left, so it is freed here, not leaked.
        std::free(host);
        LOG_WARN("zero-copy probe: the ICD refused the probe image (error %d)", err);
        return false;
    }
    // The write the device must see.
    for (size_t y = 0; y < height; ++y)
        for (size_t x = 0; x < width * 4; ++x) host[y * pitch + x] = static_cast<unsigned char>(0x40 + y * 3 + x);

    bool shared = false;
    cl_command_queue queue = nullptr;
    cl_mem out = nullptr;
    if (image) {
        queue = next().clCreateCommandQueueWithProperties(context, device, nullptr, &err);
        out = next().clCreateBuffer(context, CL_MEM_READ_WRITE, width * height * 4, nullptr, &err);
    }
    if (image && queue && out) {
        const size_t origin[3] = {0, 0, 0}, region[3] = {width, height, 1};
        std::vector<unsigned char> seen(width * height * 4);
        err = next().clEnqueueCopyImageToBuffer(queue, image, out, origin, region, 0, 0, nullptr, nullptr);
        if (err == CL_SUCCESS)
            err = next().clEnqueueReadBuffer(queue, out, CL_TRUE, 0, seen.size(), seen.data(), 0, nullptr, nullptr);
        shared = err == CL_SUCCESS;
        for (size_t y = 0; y < height && shared; ++y)
            for (size_t x = 0; x < width * 4 && shared; ++x)
                shared = seen[y * width * 4 + x] == static_cast<unsigned char>(0x40 + y * 3 + x);
        next().clFinish(queue);
    }
    if (out) next().clReleaseMemObject(out);
    if (queue) next().clReleaseCommandQueue(queue);
    if (image) next().clReleaseMemObject(image);
    if (buffer) next().clReleaseMemObject(buffer);
    return shared;
}

bool route_is_in_place(cl_context context, cl_device_id device, cl_uint route) {
    const auto key = std::make_pair(root_device_of(device), route);
    {
        std::lock_guard lock(probe_mutex);
        if (auto it = probe_cache.find(key); it != probe_cache.end()) return it->second;
    }
    const bool shared = run_probe(context, device, route);
    LOG_INFO("zero-copy probe on device %p: route %s %s", static_cast<void *>(device), route_name(route),
             shared ? "shares host memory" : "keeps its own copy");
    std::lock_guard lock(probe_mutex);
    probe_cache[key] = shared;
    return shared;
}

// ---- the import --------------------------------------------------------------

struct Geometry {
    size_t elem = 0;
    size_t row_pitch = 0, slice_pitch = 0;
    size_t region[3] = {1, 1, 1};
    size_t needed = 0;  // bytes of the dma-buf the image spans from the plane offset
    size_t bytes = 0;   // pixel bytes
};

// The terminating 0 of a property list (a device list is the one variable-length entry).
const cl_mem_properties *list_end(const cl_mem_properties *p) {
    while (*p) {
        if (*p == CL_MEM_DEVICE_HANDLE_LIST_KHR) {
            ++p;
            while (*p != CL_MEM_DEVICE_HANDLE_LIST_END_KHR) ++p;
            ++p;
        } else {
            p += 2;
        }
    }
    return p;
}

bool mul(size_t a, size_t b, size_t *out) { return !__builtin_mul_overflow(a, b, out); }

// Pitches and extent of the descriptor; CL_SUCCESS or the error with a reason.
cl_int geometry(const cl_image_desc &desc, size_t elem, Geometry *g, std::string *why) {
    g->elem = elem;
    const cl_mem_object_type t = desc.image_type;
    if (desc.image_width == 0) {
        *why = "image_width is 0";
        return CL_INVALID_IMAGE_DESCRIPTOR;
    }
    size_t rows = 1, slices = 1;
    switch (t) {
    case CL_MEM_OBJECT_IMAGE1D:
    case CL_MEM_OBJECT_IMAGE1D_BUFFER: break;
    case CL_MEM_OBJECT_IMAGE1D_ARRAY: slices = desc.image_array_size; break;
    case CL_MEM_OBJECT_IMAGE2D: rows = desc.image_height; break;
    case CL_MEM_OBJECT_IMAGE2D_ARRAY: rows = desc.image_height; slices = desc.image_array_size; break;
    case CL_MEM_OBJECT_IMAGE3D: rows = desc.image_height; slices = desc.image_depth; break;
    default: *why = "image_type is not an image type"; return CL_INVALID_IMAGE_DESCRIPTOR;
    }
    if (rows == 0 || slices == 0) {
        *why = "image_height, image_depth or image_array_size is 0";
        return CL_INVALID_IMAGE_DESCRIPTOR;
    }
    size_t row_bytes = 0;
    if (!mul(desc.image_width, elem, &row_bytes)) {
        *why = "image_width overflows";
        return CL_INVALID_IMAGE_SIZE;
    }
    g->row_pitch = desc.image_row_pitch ? desc.image_row_pitch : row_bytes;
    if (g->row_pitch < row_bytes) {
        *why = "image_row_pitch " + std::to_string(g->row_pitch) + " is smaller than a row (" +
               std::to_string(row_bytes) + " bytes)";
        return CL_INVALID_IMAGE_DESCRIPTOR;
    }
    if (g->row_pitch % elem) {
        *why = "image_row_pitch " + std::to_string(g->row_pitch) + " is not a multiple of the element size (" +
               std::to_string(elem) + " bytes)";
        return CL_INVALID_IMAGE_DESCRIPTOR;
    }
    const bool layered = t == CL_MEM_OBJECT_IMAGE1D_ARRAY || t == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
                         t == CL_MEM_OBJECT_IMAGE3D;
    size_t plane = 0;
    if (!mul(g->row_pitch, rows, &plane)) {
        *why = "image_row_pitch * image_height overflows";
        return CL_INVALID_IMAGE_SIZE;
    }
    if (layered) {
        g->slice_pitch = desc.image_slice_pitch ? desc.image_slice_pitch : plane;
        if (g->slice_pitch < plane || g->slice_pitch % g->row_pitch) {
            *why = "image_slice_pitch " + std::to_string(g->slice_pitch) +
                   " is smaller than a slice or not a multiple of image_row_pitch";
            return CL_INVALID_IMAGE_DESCRIPTOR;
        }
        if (!mul(g->slice_pitch, slices, &g->needed)) {
            *why = "image_slice_pitch * slices overflows";
            return CL_INVALID_IMAGE_SIZE;
        }
    } else if (desc.image_slice_pitch) {
        *why = "image_slice_pitch must be 0 for this image type";
        return CL_INVALID_IMAGE_DESCRIPTOR;
    } else {
        g->needed = plane;
    }
    g->region[0] = desc.image_width;
    g->region[1] = t == CL_MEM_OBJECT_IMAGE1D_ARRAY ? slices : rows;
    g->region[2] = t == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 1 : slices;
    g->bytes = row_bytes * rows * slices;
    // 1D arrays: the slice pitch is the distance between rows of the array.
    if (t == CL_MEM_OBJECT_IMAGE1D_ARRAY) g->row_pitch = g->slice_pitch;
    return CL_SUCCESS;
}

bool format_supported(cl_context context, cl_mem_flags flags, cl_mem_object_type type, const cl_image_format &f) {
    cl_mem_flags access = flags & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY |
                                   CL_MEM_KERNEL_READ_AND_WRITE);
    if (!access) access = CL_MEM_READ_WRITE;
    cl_uint n = 0;
    if (next().clGetSupportedImageFormats(context, access, type, 0, nullptr, &n) != CL_SUCCESS || n == 0)
        return false;
    std::vector<cl_image_format> formats(n);
    if (next().clGetSupportedImageFormats(context, access, type, n, formats.data(), nullptr) != CL_SUCCESS)
        return false;
    return std::any_of(formats.begin(), formats.end(), [&](const cl_image_format &g) {
        return g.image_channel_order == f.image_channel_order &&
               g.image_channel_data_type == f.image_channel_data_type;
    });
}

// The route for this import (before any probe).
cl_uint preferred_route(const std::vector<cl_device_id> &devices, cl_mem_object_type type, const Geometry &g,
                        uintptr_t base, std::string *note) {
    if (strategy_choice() == StrategyChoice::copy) {
        *note = "CLDMABUF_IMPORT=copy";
        return CL_DMA_BUF_ROUTE_COPY_CLDMABUF;
    }
    bool shares = true, from_buffer = type == CL_MEM_OBJECT_IMAGE2D || type == CL_MEM_OBJECT_IMAGE1D_BUFFER;
    for (cl_device_id d : devices) {
        shares &= device_shares_host_memory(d);
        // USE_HOST_PTR only stays in place at the device's base alignment.
        const size_t base_align = std::max<cl_uint>(device_value<cl_uint>(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN), 8) / 8;
        if (base % base_align) {
            *note = "the plane's address is not aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN (" +
                    std::to_string(base_align) + " bytes)";
            return strategy_choice() == StrategyChoice::zero_copy ? CL_DMA_BUF_ROUTE_HOST_PTR_CLDMABUF
                                                                  : CL_DMA_BUF_ROUTE_COPY_CLDMABUF;
        }
        if (type == CL_MEM_OBJECT_IMAGE2D) {
            const cl_uint pitch_align = device_value<cl_uint>(d, CL_DEVICE_IMAGE_PITCH_ALIGNMENT);
            const cl_uint addr_align = device_value<cl_uint>(d, CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT);
            from_buffer &= pitch_align != 0 && device_has_extension(d, "cl_khr_image2d_from_buffer") &&
                           g.row_pitch % (size_t{pitch_align} * g.elem) == 0 &&
                           base % (size_t{std::max<cl_uint>(addr_align, 1)} * g.elem) == 0;
        }
    }
    if (!shares && strategy_choice() == StrategyChoice::automatic) {
        *note = "a device does not share host memory";
        return CL_DMA_BUF_ROUTE_COPY_CLDMABUF;
    }
    return from_buffer ? CL_DMA_BUF_ROUTE_IMAGE_FROM_BUFFER_CLDMABUF : CL_DMA_BUF_ROUTE_HOST_PTR_CLDMABUF;
}

cl_mem CL_API_CALL create_image_with_properties(cl_context context, const cl_mem_properties *properties,
                                                cl_mem_flags flags, const cl_image_format *format,
                                                const cl_image_desc *desc, void *host_ptr, cl_int *errcode_ret) {
    if (cl_mem mem = nullptr;
        native_image_import(context, properties, flags, format, desc, host_ptr, errcode_ret, &mem))
        return mem;
    if (!mentions_external_memory(properties))
        return next().clCreateImageWithProperties(context, properties, flags, format, desc, host_ptr, errcode_ret);

    std::string why;
    ImageLayerProperties layer_props;
    if (cl_int err = split_image_layer_properties(properties, &layer_props, &why); err != CL_SUCCESS)
        return fail(errcode_ret, err, why);
    ImportProperties props;
    if (cl_int err = parse_import_properties(layer_props.rest.data(), &props, &why); err != CL_SUCCESS)
        return fail(errcode_ret, err, why);
    // CL_MEM_PROPERTIES answers the caller's whole list, the layer's entries included.
    props.original.assign(properties, list_end(properties) + 1);
    if (!props.has_handle)
        return fail(errcode_ret, CL_INVALID_PROPERTY, "no external memory handle is given");

    std::vector<cl_device_id> ctx_devices;
    if (context_devices(context, &ctx_devices) != CL_SUCCESS)
        return fail(errcode_ret, CL_INVALID_CONTEXT, "the context is not valid");
    for (cl_device_id d : props.devices)
        if (std::find(ctx_devices.begin(), ctx_devices.end(), d) == ctx_devices.end())
            return fail(errcode_ret, CL_INVALID_DEVICE,
                        "a device in CL_MEM_DEVICE_HANDLE_LIST_KHR is not a device of the context");
    const std::vector<cl_device_id> &devices = props.has_device_list ? props.devices : ctx_devices;

    if (std::string bad = check_dmabuf_fd(props.fd); !bad.empty())
        return fail(errcode_ret, CL_INVALID_PROPERTY, bad);
    if (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))
        return fail(errcode_ret, CL_INVALID_VALUE,
                    "CL_MEM_USE/ALLOC/COPY_HOST_PTR cannot be combined with an external memory handle");
    if (host_ptr) return fail(errcode_ret, CL_INVALID_HOST_PTR, "host_ptr must be NULL for an import");
    if (!format) return fail(errcode_ret, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, "image_format is NULL");
    if (!desc) return fail(errcode_ret, CL_INVALID_IMAGE_DESCRIPTOR, "image_desc is NULL");
    if (desc->buffer)
        return fail(errcode_ret, CL_INVALID_IMAGE_DESCRIPTOR,
                    "image_desc->buffer/mem_object must be NULL for an import (the dma-buf is the storage)");
    if (desc->num_mip_levels || desc->num_samples)
        return fail(errcode_ret, CL_INVALID_IMAGE_DESCRIPTOR, "num_mip_levels and num_samples must be 0");
    if (std::none_of(devices.begin(), devices.end(),
                     [](cl_device_id d) { return device_value<cl_bool>(d, CL_DEVICE_IMAGE_SUPPORT) == CL_TRUE; }))
        return fail(errcode_ret, CL_INVALID_OPERATION, "no device of the import supports images");
    const size_t elem = image_element_size(*format);
    if (!elem)
        return fail(errcode_ret, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR,
                    "channel order 0x" + std::to_string(format->image_channel_order) + " / type 0x" +
                        std::to_string(format->image_channel_data_type) + " is not a valid image format");
    // A tiled surface's pitch, when not given, is the row in whole tiles.
    i915::Tiling tiling = i915::Tiling::Linear;
    const bool tiled = layer_props.has_modifier && layer_props.allow_tiled &&
                       tiling_of_modifier(layer_props.modifier, &tiling);
    cl_image_desc tiled_desc = *desc;
    if (tiled) tiled_desc.image_row_pitch = tiled_row_pitch(tiling, desc->image_width * elem, desc->image_row_pitch);
    Geometry g;
    if (cl_int err = geometry(tiled ? tiled_desc : *desc, elem, &g, &why); err != CL_SUCCESS)
        return fail(errcode_ret, err, why);
    if (!format_supported(context, flags, desc->image_type, *format))
        return fail(errcode_ret, CL_IMAGE_FORMAT_NOT_SUPPORTED,
                    "the ICD does not support this channel order/type for this image type and access");
    if (cl_int err = check_modifier(layer_props, &why); err != CL_SUCCESS) return fail(errcode_ret, err, why);

    const int64_t dmabuf_bytes = dmabuf_size(props.fd);
    if (dmabuf_bytes < 0)
        return fail(errcode_ret, CL_INVALID_PROPERTY,
                    "cannot size dma-buf fd " + std::to_string(props.fd) + ": " + std::strerror(-dmabuf_bytes));
    // The image's extent past the dma-buf's end is CL_INVALID_IMAGE_SIZE, as
    // for an image over a buffer (clCreateImage: "image_row_pitch *
    // image_height > size of the buffer"); CL_INVALID_BUFFER_SIZE is a
    // buffer's error.
    size_t end = 0;
    if (__builtin_add_overflow(static_cast<size_t>(layer_props.plane_offset), g.needed, &end) ||
        layer_props.plane_offset > static_cast<uint64_t>(SIZE_MAX) || end > static_cast<uint64_t>(dmabuf_bytes))
        return fail(errcode_ret, CL_INVALID_IMAGE_SIZE,
                    "plane offset " + std::to_string(layer_props.plane_offset) + " + " + std::to_string(g.needed) +
                        " image bytes is past the dma-buf's end (" + std::to_string(dmabuf_bytes) + " bytes)");

    std::unique_ptr<TiledImage> tiled_state;
    if (tiled) {
        TiledRequest req;
        req.tiling = tiling;
        req.type = desc->image_type;
        req.elem = elem;
        req.width = desc->image_width;
        req.height = desc->image_height;
        req.row_pitch = g.row_pitch;
        req.plane_offset = layer_props.plane_offset;
        req.dmabuf_size = static_cast<uint64_t>(dmabuf_bytes);
        if (cl_int err = prepare_tiled_image(req, devices, &tiled_state, &why); err != CL_SUCCESS)
            return fail(errcode_ret, err, why);
    }

    auto import = std::make_shared<Import>();
    // The layer's own duplicate from here on (docs/layer-rules.md, "Who owns the fd").
    if (int err = adopt_dmabuf_fd(*import, props.fd); err != 0)
        return fail(errcode_ret, CL_OUT_OF_RESOURCES,
                    "cannot duplicate dma-buf fd " + std::to_string(props.fd) + ": " + std::strerror(-err));
    set_exporter(*import, identify_exporter(import->fd));
    // Refusals below close the dup (not the application's fd); the import's
    // own state (GEM handle, shadow) goes with `import`.
    struct DupGuard {
        Import *import;
        ~DupGuard() {
            if (import) drop_dmabuf_dup(*import);
        }
    } dup_guard{import.get()};
    import->context = context;
    import->dmabuf_size = static_cast<uint64_t>(dmabuf_bytes);
    import->size = g.needed;
    import->flags = flags;
    import->properties = std::move(props.original);
    import->device_list_given = props.has_device_list;
    import->devices = devices;
    import->is_image = true;
    import->image.offset = static_cast<size_t>(layer_props.plane_offset);
    import->image.row_pitch = g.row_pitch;
    import->image.slice_pitch = g.slice_pitch;
    std::copy(std::begin(g.region), std::end(g.region), import->image.region);
    import->image.bytes = g.bytes;

    // What the ICD's image is laid over: the dma-buf's mapping, or a tiled
    // import's linear shadow (the dma-buf itself is only touched by the blitter).
    Geometry icd_g = g;
    if (tiled_state) {
        import->image.modifier = layer_props.modifier;
        import->mapped_writable = true;
        icd_g.row_pitch = tiled_state->shadow_pitch;
        icd_g.needed = size_t{tiled_state->shadow_pitch} * desc->image_height;
        i915::BltImport dmabuf_gem;
        if (int err = blt_import_of(*import, *tiled_state->engine, &dmabuf_gem); err == -EXDEV) {
            const i915::Gen9Info &node = tiled_state->engine->device_info();
            return fail(errcode_ret, CL_INVALID_OPERATION,
                        "a tiled import needs the blitter, which takes only its own GPU's dma-bufs: " +
                            exporter_mismatch(*import, node, node_rdev(node)));
        } else if (err != 0) {
            return fail(errcode_ret, CL_INVALID_OPERATION,
                        "the blitter cannot import dma-buf fd " + std::to_string(props.fd) + " (PRIME_FD_TO_HANDLE: " +
                            std::strerror(-err) + ")");
        }
        import->tiled = std::move(tiled_state);
    } else if (int err = map_dmabuf(*import, import->fd, end, flags); err != 0) {
        return fail(errcode_ret, CL_INVALID_PROPERTY,
                    "cannot map dma-buf fd " + std::to_string(props.fd) + ": " + std::strerror(err));
    }
    void *map = import->mapping;
    char *pixels = host_pixels(*import).ptr;

    std::string note;
    cl_uint route = preferred_route(devices, desc->image_type, icd_g, reinterpret_cast<uintptr_t>(pixels), &note);
    // The route probe below runs on ordinary memory; whether the ICD uses
    // this exporter's pages in place is the buffer check's answer (an ICD
    // that copies PFNMAP buffers copies them under an image too).
    if (route != CL_DMA_BUF_ROUTE_COPY_CLDMABUF && strategy_choice() == StrategyChoice::automatic && !tiled_state &&
        !import->tiled) {
        for (cl_device_id d : devices) {
            if (check_buffer_zero_copy(context, d, import->exporter, import->fd) == ZeroCopyVerdict::copies) {
                note = std::string("the ICD keeps its own copy of ") + exporter_kind_name(import->exporter) +
                       " dma-bufs";
                route = CL_DMA_BUF_ROUTE_COPY_CLDMABUF;
                break;
            }
        }
    }
    if (route != CL_DMA_BUF_ROUTE_COPY_CLDMABUF && strategy_choice() == StrategyChoice::automatic &&
        desc->image_type != CL_MEM_OBJECT_IMAGE1D_BUFFER) {
        for (cl_device_id d : devices) {
            if (!route_is_in_place(context, d, route)) {
                // An image over a buffer may still work in place where USE_HOST_PTR images do not, or the reverse.
                const cl_uint other = route == CL_DMA_BUF_ROUTE_IMAGE_FROM_BUFFER_CLDMABUF
                                          ? CL_DMA_BUF_ROUTE_HOST_PTR_CLDMABUF
                                          : CL_DMA_BUF_ROUTE_COPY_CLDMABUF;
                note = std::string("the ICD keeps its own copy for ") + route_name(route);
                route = other;
                if (route == CL_DMA_BUF_ROUTE_COPY_CLDMABUF || !route_is_in_place(context, d, route)) {
                    route = CL_DMA_BUF_ROUTE_COPY_CLDMABUF;
                    break;
                }
            }
        }
    }
    import->image.route = route;
    import->strategy = route == CL_DMA_BUF_ROUTE_COPY_CLDMABUF ? ImportStrategy::copy : ImportStrategy::zero_copy;

    const cl_mem_properties *icd_props = props.passthrough.empty() ? nullptr : props.passthrough.data();
    auto create = [&](cl_mem_flags f, const cl_image_desc *d, void *ptr, cl_int *err) {
        return icd_props ? next().clCreateImageWithProperties(context, icd_props, f, format, d, ptr, err)
                         : next().clCreateImage(context, f, format, d, ptr, err);
    };
    cl_image_desc icd_desc = *desc;
    icd_desc.image_row_pitch = desc->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY ? 0 : icd_g.row_pitch;
    icd_desc.image_slice_pitch = icd_g.slice_pitch;
    if (desc->image_type == CL_MEM_OBJECT_IMAGE1D || desc->image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER)
        icd_desc.image_row_pitch = 0;  // 1D: no pitch to give; let the ICD derive it
    cl_int err = CL_SUCCESS;
    cl_mem mem = nullptr, buffer = nullptr;
    switch (route) {
    case CL_DMA_BUF_ROUTE_IMAGE_FROM_BUFFER_CLDMABUF: {
        const cl_mem_flags buffer_flags =
            (import->mapped_writable ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY) | CL_MEM_USE_HOST_PTR;
        buffer = next().clCreateBuffer(context, buffer_flags, icd_g.needed, pixels, &err);
        if (!buffer) break;
        icd_desc.buffer = buffer;
        if (desc->image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER) icd_desc.image_row_pitch = 0;
        mem = create(flags, &icd_desc, nullptr, &err);
        break;
    }
    case CL_DMA_BUF_ROUTE_HOST_PTR_CLDMABUF:
        mem = create(flags | CL_MEM_USE_HOST_PTR, &icd_desc, pixels, &err);
        break;
    default:
        if (desc->image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER) {
            // A 1D image buffer always sits on a buffer: here the ICD's own copy.
            buffer = next().clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, icd_g.needed, pixels,
                                           &err);
            if (!buffer) break;
            icd_desc.buffer = buffer;
            mem = create(flags, &icd_desc, nullptr, &err);
            break;
        }
        mem = create(flags | CL_MEM_COPY_HOST_PTR, &icd_desc, pixels, &err);
        break;
    }
    auto undo = [&](cl_int code, const std::string &reason) {
        if (mem) next().clReleaseMemObject(mem);
        if (buffer) next().clReleaseMemObject(buffer);
        if (map) unmap_dmabuf(*import, false);
        return fail(errcode_ret, code, reason);
    };
    if (!mem) return undo(err, "the ICD refused the image (error " + std::to_string(err) + ", route " +
                                   route_name(route) + ")");
    import->mem = mem;
    if (next().clSetMemObjectDestructorCallback(mem, on_image_destroyed, nullptr) != CL_SUCCESS)
        return undo(CL_OUT_OF_RESOURCES, "cannot register the destructor callback");
    if (buffer) {
        // The buffer outlives the image (which holds it); it closes the import.
        auto *holder = new std::shared_ptr<Import>(import);
        if (next().clSetMemObjectDestructorCallback(buffer, on_internal_buffer_destroyed, holder) != CL_SUCCESS) {
            delete holder;
            // on_image_destroyed runs on the release below but finds nothing registered.
            return undo(CL_OUT_OF_RESOURCES, "cannot register the destructor callback");
        }
        import->image.internal_buffer = buffer;
        next().clReleaseMemObject(buffer);  // the image keeps it alive
    }
    imports().add(import);
    dup_guard.import = nullptr;  // the destructor callbacks close it now

    stats().imports++;
    if (import->tiled) {
        stats().tiled_imports++;
    } else if (import->strategy == ImportStrategy::zero_copy) {
        stats().zero_copy_imports++;
        stats().zero_copy_bytes += g.bytes;
    } else {
        stats().copy_imports++;
        stats().host_bytes_copied += g.bytes;
    }
    LOG_INFO("imported dma-buf fd %d as a %zux%zux%zu %simage (pitch %zu, offset %zu) %p, %s%s%s%s", props.fd,
             g.region[0], g.region[1], g.region[2], import->tiled ? "tiled " : "", g.row_pitch,
             import->image.offset, static_cast<void *>(mem), route_name(route),
             import->tiled ? " over a linear shadow de-tiled by the blitter" : "", note.empty() ? "" : ": ",
             note.c_str());
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return mem;
}

// ---- queries -------------------------------------------------------------------

decltype(cl_icd_dispatch::clGetMemObjectInfo) previous_get_mem_object_info = nullptr;
decltype(cl_icd_dispatch::clGetImageInfo) previous_get_image_info = nullptr;

// The layer's own query, and the internal buffer under an image kept out of
// sight (the application gave no buffer).
cl_int CL_API_CALL get_mem_object_info(cl_mem mem, cl_mem_info name, size_t size, void *value, size_t *size_ret) {
    if (name == CL_MEM_DMA_BUF_IMPORT_ROUTE_CLDMABUF) {
        auto import = imports().find(mem);
        if (!import || import->mem != mem) return CL_INVALID_VALUE;
        cl_uint route = import->is_image ? import->image.route
                        : import->strategy == ImportStrategy::zero_copy ? CL_DMA_BUF_ROUTE_HOST_PTR_CLDMABUF
                                                                         : CL_DMA_BUF_ROUTE_COPY_CLDMABUF;
        return answer(&route, sizeof route, size, value, size_ret);
    }
    if (name == CL_MEM_ASSOCIATED_MEMOBJECT && !imports().empty()) {
        if (auto import = imports().find(mem); import && import->mem == mem && import->image.internal_buffer) {
            cl_mem none = nullptr;
            return answer(&none, sizeof none, size, value, size_ret);
        }
    }
    return previous_get_mem_object_info(mem, name, size, value, size_ret);
}

cl_int CL_API_CALL get_image_info(cl_mem image, cl_image_info name, size_t size, void *value, size_t *size_ret) {
    if (name == CL_IMAGE_BUFFER && !imports().empty()) {
        if (auto import = imports().find(image); import && import->mem == image && import->image.internal_buffer) {
            cl_mem none = nullptr;
            return answer(&none, sizeof none, size, value, size_ret);
        }
    }
    return previous_get_image_info(image, name, size, value, size_ret);
}

}  // namespace

void install_image_overrides(cl_icd_dispatch &table) {
    table.clCreateImageWithProperties = create_image_with_properties;
    // Chained: install_import_overrides ran first and answers the common names.
    previous_get_mem_object_info = table.clGetMemObjectInfo;
    table.clGetMemObjectInfo = get_mem_object_info;
    previous_get_image_info = table.clGetImageInfo;
    table.clGetImageInfo = get_image_info;
}

}  // namespace cldmabuf
