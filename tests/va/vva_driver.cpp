// The virtual VA-API driver: a libva backend (LIBVA_DRIVER_NAME=vva,
// LIBVA_DRIVERS_PATH=<build>/tests/va) whose surfaces are real dma-bufs
// (vva_memory.hpp).  A test instrument like the virtual Gen9: the layer never
// links it and knows nothing of it; it reaches it through libva's public API
// only.  It implements what FFmpeg's VAAPI upload, download and OpenCL
// mapping use — surfaces (NV12, P010), images (create, derive, get, put),
// buffers, vaExportSurfaceHandle (DRM PRIME 2, separate or composed layers),
// vaSyncSurface(2) — and answers every misuse with the VA_STATUS_ERROR_*
// code a real driver gives (iHD's and Mesa's choices where they agree).
// No decoding, encoding or video processing: those entry points answer
// VA_STATUS_ERROR_UNIMPLEMENTED, as a driver without the feature does.
#include <va/va.h>
#include <va/va_backend.h>
#include <va/va_drmcommon.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "vva_control.h"
#include "vva_memory.hpp"

namespace vva {
namespace {

constexpr unsigned kMaxSide = 16384;

// Plane geometry of a 4:2:0 two-plane surface or image.
struct Layout {
    uint32_t fourcc = 0;
    unsigned width = 0, height = 0;
    unsigned bytes_per_sample = 1;  // 1 NV12, 2 P010
    uint32_t pitch = 0;
    uint32_t uv_offset = 0;
    size_t size = 0;
};

bool layout_of(uint32_t fourcc, unsigned w, unsigned h, Layout *out) {
    if (fourcc != VA_FOURCC_NV12 && fourcc != VA_FOURCC_P010) return false;
    Layout l;
    l.fourcc = fourcc;
    l.width = w;
    l.height = h;
    l.bytes_per_sample = fourcc == VA_FOURCC_P010 ? 2 : 1;
    l.pitch = (w * l.bytes_per_sample + 63) & ~63u;
    const uint32_t rows = (h + 15) & ~15u;  // the chroma plane starts on a 16-row boundary, as iHD's
    l.uv_offset = l.pitch * rows;
    l.size = size_t(l.pitch) * rows * 3 / 2;
    *out = l;
    return true;
}

struct Surface {
    Layout layout;
    DmaBuf mem;
    int derived = 0;  // images derived from it and alive
};
struct Buffer {
    std::vector<uint8_t> host;  // own storage, or empty for a derived image's
    VASurfaceID derived_from = VA_INVALID_SURFACE;
    bool mapped = false;
    unsigned num_elements = 1;
    VABufferType type = VAImageBufferType;
};
struct Image {
    VAImage image{};
    VASurfaceID derived_from = VA_INVALID_SURFACE;
};

struct State {
    std::mutex mu;
    int drm_fd = -1;
    unsigned next_id = 1;
    std::map<VASurfaceID, Surface> surfaces;
    std::map<VAImageID, Image> images;
    std::map<VABufferID, Buffer> buffers;
    std::map<VAConfigID, int> configs;
};

std::atomic<unsigned> syncs{0}, fail_syncs{0}, fail_exports{0}, live{0};
std::atomic<int> sync_status{VA_STATUS_ERROR_TIMEDOUT}, export_status{VA_STATUS_ERROR_ALLOCATION_FAILED};
// The modifier exports report (a test control: a tiled driver's surfaces, as iHD's).
std::atomic<uint64_t> export_modifier{0};

State &state(VADriverContextP ctx) { return *static_cast<State *>(ctx->pDriverData); }

void log_line(const char *fmt, const std::string &a) {
    if (getenv("VVA_LOG")) std::fprintf(stderr, fmt, a.c_str());
}

VAImageFormat format_of(uint32_t fourcc) {
    VAImageFormat f{};
    f.fourcc = fourcc;
    f.byte_order = VA_LSB_FIRST;
    f.bits_per_pixel = fourcc == VA_FOURCC_P010 ? 24 : 12;
    return f;
}

VAImage image_for(const Layout &l, VAImageID id, VABufferID buf) {
    VAImage img{};
    img.image_id = id;
    img.format = format_of(l.fourcc);
    img.buf = buf;
    img.width = static_cast<uint16_t>(l.width);
    img.height = static_cast<uint16_t>(l.height);
    img.data_size = static_cast<uint32_t>(l.size);
    img.num_planes = 2;
    img.pitches[0] = img.pitches[1] = l.pitch;
    img.offsets[0] = 0;
    img.offsets[1] = l.uv_offset;
    return img;
}

// Copies a rectangle of both planes between two layouts of one fourcc.
void copy_rect(const Layout &sl, const uint8_t *src, unsigned sx, unsigned sy, const Layout &dl, uint8_t *dst,
               unsigned dx, unsigned dy, unsigned w, unsigned h) {
    const unsigned bps = sl.bytes_per_sample;
    for (unsigned r = 0; r < h; ++r)
        std::memcpy(dst + size_t(dy + r) * dl.pitch + size_t(dx) * bps, src + size_t(sy + r) * sl.pitch + size_t(sx) * bps,
                    size_t(w) * bps);
    // Chroma: one interleaved UV pair per 2x2 block.
    const unsigned cx = sx / 2, cy = sy / 2, cdx = dx / 2, cdy = dy / 2, cw = (w + 1) / 2, ch = (h + 1) / 2;
    for (unsigned r = 0; r < ch; ++r)
        std::memcpy(dst + dl.uv_offset + size_t(cdy + r) * dl.pitch + size_t(cdx) * 2 * bps,
                    src + sl.uv_offset + size_t(cy + r) * sl.pitch + size_t(cx) * 2 * bps, size_t(cw) * 2 * bps);
}

// ---- config (what FFmpeg asks for its frame constraints) ----------------------------

VAStatus query_config_profiles(VADriverContextP, VAProfile *list, int *num) {
    list[0] = VAProfileNone;
    *num = 1;
    return VA_STATUS_SUCCESS;
}

VAStatus query_config_entrypoints(VADriverContextP, VAProfile profile, VAEntrypoint *list, int *num) {
    if (profile != VAProfileNone) return VA_STATUS_ERROR_UNSUPPORTED_PROFILE;
    list[0] = VAEntrypointVideoProc;
    *num = 1;
    return VA_STATUS_SUCCESS;
}

VAStatus get_config_attributes(VADriverContextP, VAProfile profile, VAEntrypoint entrypoint, VAConfigAttrib *list,
                               int num) {
    if (profile != VAProfileNone) return VA_STATUS_ERROR_UNSUPPORTED_PROFILE;
    if (entrypoint != VAEntrypointVideoProc) return VA_STATUS_ERROR_UNSUPPORTED_ENTRYPOINT;
    for (int i = 0; i < num; ++i)
        list[i].value = list[i].type == VAConfigAttribRTFormat ? (VA_RT_FORMAT_YUV420 | VA_RT_FORMAT_YUV420_10)
                                                               : VA_ATTRIB_NOT_SUPPORTED;
    return VA_STATUS_SUCCESS;
}

VAStatus create_config(VADriverContextP ctx, VAProfile profile, VAEntrypoint entrypoint, VAConfigAttrib *, int,
                       VAConfigID *id) {
    if (profile != VAProfileNone) return VA_STATUS_ERROR_UNSUPPORTED_PROFILE;
    if (entrypoint != VAEntrypointVideoProc) return VA_STATUS_ERROR_UNSUPPORTED_ENTRYPOINT;
    State &s = state(ctx);
    std::lock_guard lock(s.mu);
    *id = s.next_id++;
    s.configs[*id] = 1;
    ++live;
    return VA_STATUS_SUCCESS;
}

VAStatus destroy_config(VADriverContextP ctx, VAConfigID id) {
    State &s = state(ctx);
    std::lock_guard lock(s.mu);
    if (!s.configs.erase(id)) return VA_STATUS_ERROR_INVALID_CONFIG;
    --live;
    return VA_STATUS_SUCCESS;
}

VAStatus query_config_attributes(VADriverContextP ctx, VAConfigID id, VAProfile *profile, VAEntrypoint *entrypoint,
                                 VAConfigAttrib *, int *num) {
    State &s = state(ctx);
    std::lock_guard lock(s.mu);
    if (!s.configs.count(id)) return VA_STATUS_ERROR_INVALID_CONFIG;
    *profile = VAProfileNone;
    *entrypoint = VAEntrypointVideoProc;
    *num = 0;
    return VA_STATUS_SUCCESS;
}

VAStatus query_surface_attributes(VADriverContextP ctx, VAConfigID id, VASurfaceAttrib *list, unsigned *num) {
    {
        State &s = state(ctx);
        std::lock_guard lock(s.mu);
        if (!s.configs.count(id)) return VA_STATUS_ERROR_INVALID_CONFIG;
    }
    std::vector<VASurfaceAttrib> attrs;
    auto add = [&](VASurfaceAttribType type, int value, uint32_t flags) {
        VASurfaceAttrib a{};
        a.type = type;
        a.flags = flags;
        a.value.type = VAGenericValueTypeInteger;
        a.value.value.i = value;
        attrs.push_back(a);
    };
    add(VASurfaceAttribPixelFormat, VA_FOURCC_NV12, VA_SURFACE_ATTRIB_GETTABLE | VA_SURFACE_ATTRIB_SETTABLE);
    add(VASurfaceAttribPixelFormat, VA_FOURCC_P010, VA_SURFACE_ATTRIB_GETTABLE | VA_SURFACE_ATTRIB_SETTABLE);
    add(VASurfaceAttribMinWidth, 1, VA_SURFACE_ATTRIB_GETTABLE);
    add(VASurfaceAttribMinHeight, 1, VA_SURFACE_ATTRIB_GETTABLE);
    add(VASurfaceAttribMaxWidth, kMaxSide, VA_SURFACE_ATTRIB_GETTABLE);
    add(VASurfaceAttribMaxHeight, kMaxSide, VA_SURFACE_ATTRIB_GETTABLE);
    add(VASurfaceAttribMemoryType, VA_SURFACE_ATTRIB_MEM_TYPE_VA | VA_SURFACE_ATTRIB_MEM_TYPE_DRM_PRIME_2,
        VA_SURFACE_ATTRIB_GETTABLE);
    if (!list) {
        *num = static_cast<unsigned>(attrs.size());
        return VA_STATUS_SUCCESS;
    }
    if (*num < attrs.size()) {
        *num = static_cast<unsigned>(attrs.size());
        return VA_STATUS_ERROR_MAX_NUM_EXCEEDED;
    }
    std::copy(attrs.begin(), attrs.end(), list);
    *num = static_cast<unsigned>(attrs.size());
    return VA_STATUS_SUCCESS;
}

// ---- surfaces -------------------------------------------------------------------------

VAStatus create_surfaces2(VADriverContextP ctx, unsigned format, unsigned width, unsigned height,
                          VASurfaceID *out, unsigned num, VASurfaceAttrib *attribs, unsigned num_attribs) {
    if (!out || num == 0) return VA_STATUS_ERROR_INVALID_PARAMETER;
    if (width == 0 || height == 0 || width > kMaxSide || height > kMaxSide)
        return VA_STATUS_ERROR_RESOLUTION_NOT_SUPPORTED;
    uint32_t fourcc = format == VA_RT_FORMAT_YUV420 ? VA_FOURCC_NV12
                      : format == VA_RT_FORMAT_YUV420_10 ? VA_FOURCC_P010 : 0;
    if (!fourcc) return VA_STATUS_ERROR_UNSUPPORTED_RT_FORMAT;
    for (unsigned i = 0; attribs && i < num_attribs; ++i) {
        const VASurfaceAttrib &a = attribs[i];
        if (!(a.flags & VA_SURFACE_ATTRIB_SETTABLE)) continue;
        if (a.type == VASurfaceAttribPixelFormat) fourcc = static_cast<uint32_t>(a.value.value.i);
        if (a.type == VASurfaceAttribMemoryType && a.value.value.i != VA_SURFACE_ATTRIB_MEM_TYPE_VA)
            return VA_STATUS_ERROR_UNSUPPORTED_MEMORY_TYPE;  // no import of external buffers
    }
    Layout layout;
    if (!layout_of(fourcc, width, height, &layout)) return VA_STATUS_ERROR_INVALID_IMAGE_FORMAT;
    if ((fourcc == VA_FOURCC_P010) != (format == VA_RT_FORMAT_YUV420_10)) return VA_STATUS_ERROR_INVALID_PARAMETER;
    State &s = state(ctx);
    std::lock_guard lock(s.mu);
    for (unsigned i = 0; i < num; ++i) {
        Surface surface;
        surface.layout = layout;
        std::string why;
        if (!allocate(s.drm_fd, layout.size, &surface.mem, &why)) {
            log_line("vva: surface allocation failed: %s\n", why);
            for (unsigned j = 0; j < i; ++j) {  // nothing of a failed call stays
                free_buffer(&s.surfaces[out[j]].mem);
                s.surfaces.erase(out[j]);
                --live;
            }
            return VA_STATUS_ERROR_ALLOCATION_FAILED;
        }
        // Fresh surfaces read as black, as decoders' output before a frame.
        std::memset(surface.mem.map, 0, surface.mem.size);
        out[i] = s.next_id++;
        s.surfaces[out[i]] = surface;
        ++live;
    }
    return VA_STATUS_SUCCESS;
}

VAStatus create_surfaces(VADriverContextP ctx, int width, int height, int format, int num, VASurfaceID *out) {
    if (width <= 0 || height <= 0 || num <= 0) return VA_STATUS_ERROR_INVALID_PARAMETER;
    return create_surfaces2(ctx, static_cast<unsigned>(format), static_cast<unsigned>(width),
                            static_cast<unsigned>(height), out, static_cast<unsigned>(num), nullptr, 0);
}

VAStatus destroy_surfaces(VADriverContextP ctx, VASurfaceID *list, int num) {
    State &s = state(ctx);
    std::lock_guard lock(s.mu);
    for (int i = 0; i < num; ++i)
        if (!s.surfaces.count(list[i])) return VA_STATUS_ERROR_INVALID_SURFACE;
    for (int i = 0; i < num; ++i) {
        auto it = s.surfaces.find(list[i]);
        if (it == s.surfaces.end()) continue;  // listed twice
        free_buffer(&it->second.mem);
        s.surfaces.erase(it);
        --live;
    }
    return VA_STATUS_SUCCESS;
}

VAStatus sync_common(VADriverContextP ctx, VASurfaceID id) {
    {
        State &s = state(ctx);
        std::lock_guard lock(s.mu);
        if (!s.surfaces.count(id)) return VA_STATUS_ERROR_INVALID_SURFACE;
    }
    ++syncs;
    for (unsigned n = fail_syncs.load(); n;)
        if (fail_syncs.compare_exchange_weak(n, n - 1)) return sync_status.load();
    return VA_STATUS_SUCCESS;  // the CPU did all the work already: nothing is in flight
}

VAStatus sync_surface(VADriverContextP ctx, VASurfaceID id) { return sync_common(ctx, id); }
VAStatus sync_surface2(VADriverContextP ctx, VASurfaceID id, uint64_t) { return sync_common(ctx, id); }

VAStatus query_surface_status(VADriverContextP ctx, VASurfaceID id, VASurfaceStatus *status) {
    State &s = state(ctx);
    std::lock_guard lock(s.mu);
    if (!s.surfaces.count(id)) return VA_STATUS_ERROR_INVALID_SURFACE;
    *status = VASurfaceReady;
    return VA_STATUS_SUCCESS;
}

VAStatus export_surface_handle(VADriverContextP ctx, VASurfaceID id, uint32_t mem_type, uint32_t flags,
                               void *descriptor) {
    if (mem_type != VA_SURFACE_ATTRIB_MEM_TYPE_DRM_PRIME_2) return VA_STATUS_ERROR_UNSUPPORTED_MEMORY_TYPE;
    State &s = state(ctx);
    std::lock_guard lock(s.mu);
    auto it = s.surfaces.find(id);
    if (it == s.surfaces.end()) return VA_STATUS_ERROR_INVALID_SURFACE;
    const bool separate = flags & VA_EXPORT_SURFACE_SEPARATE_LAYERS;
    if (separate == bool(flags & VA_EXPORT_SURFACE_COMPOSED_LAYERS) || !(flags & VA_EXPORT_SURFACE_READ_WRITE))
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    for (unsigned n = fail_exports.load(); n;)
        if (fail_exports.compare_exchange_weak(n, n - 1)) return export_status.load();
    const Surface &surface = it->second;
    const int fd = fcntl(surface.mem.fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return VA_STATUS_ERROR_ALLOCATION_FAILED;
    auto *d = static_cast<VADRMPRIMESurfaceDescriptor *>(descriptor);
    *d = VADRMPRIMESurfaceDescriptor{};
    const Layout &l = surface.layout;
    const bool p010 = l.fourcc == VA_FOURCC_P010;
    d->fourcc = l.fourcc;
    d->width = l.width;
    d->height = l.height;
    d->num_objects = 1;
    d->objects[0].fd = fd;
    d->objects[0].size = static_cast<uint32_t>(surface.mem.size);
    d->objects[0].drm_format_modifier = export_modifier.load();  // DRM_FORMAT_MOD_LINEAR unless told
    const uint32_t y_format = p010 ? 0x20363152 /* R16 */ : 0x20203852 /* R8 */;
    const uint32_t uv_format = p010 ? 0x32335247 /* GR32 (GR1616) */ : 0x38385247 /* GR88 */;
    if (separate) {
        d->num_layers = 2;
        d->layers[0] = {y_format, 1, {0}, {0}, {l.pitch}};
        d->layers[1] = {uv_format, 1, {0}, {l.uv_offset}, {l.pitch}};
    } else {
        d->num_layers = 1;
        d->layers[0] = {l.fourcc, 2, {0, 0}, {0, l.uv_offset}, {l.pitch, l.pitch}};
    }
    return VA_STATUS_SUCCESS;
}

// ---- images and buffers -----------------------------------------------------------------

VAStatus query_image_formats(VADriverContextP, VAImageFormat *list, int *num) {
    list[0] = format_of(VA_FOURCC_NV12);
    list[1] = format_of(VA_FOURCC_P010);
    *num = 2;
    return VA_STATUS_SUCCESS;
}

VAStatus create_image(VADriverContextP ctx, VAImageFormat *format, int width, int height, VAImage *out) {
    if (!format || !out) return VA_STATUS_ERROR_INVALID_PARAMETER;
    if (width <= 0 || height <= 0 || width > int(kMaxSide) || height > int(kMaxSide))
        return VA_STATUS_ERROR_RESOLUTION_NOT_SUPPORTED;
    Layout l;
    if (!layout_of(format->fourcc, unsigned(width), unsigned(height), &l)) return VA_STATUS_ERROR_INVALID_IMAGE_FORMAT;
    State &s = state(ctx);
    std::lock_guard lock(s.mu);
    Buffer buf;
    buf.host.assign(l.size, 0);
    const VABufferID buf_id = s.next_id++;
    s.buffers[buf_id] = std::move(buf);
    Image img;
    img.image = image_for(l, s.next_id++, buf_id);
    s.images[img.image.image_id] = img;
    *out = img.image;
    live += 2;
    return VA_STATUS_SUCCESS;
}

VAStatus derive_image(VADriverContextP ctx, VASurfaceID id, VAImage *out) {
    State &s = state(ctx);
    std::lock_guard lock(s.mu);
    auto it = s.surfaces.find(id);
    if (it == s.surfaces.end()) return VA_STATUS_ERROR_INVALID_SURFACE;
    Buffer buf;
    buf.derived_from = id;
    const VABufferID buf_id = s.next_id++;
    s.buffers[buf_id] = std::move(buf);
    Image img;
    img.image = image_for(it->second.layout, s.next_id++, buf_id);
    img.derived_from = id;
    s.images[img.image.image_id] = img;
    ++it->second.derived;
    *out = img.image;
    live += 2;
    return VA_STATUS_SUCCESS;
}

VAStatus destroy_image(VADriverContextP ctx, VAImageID id) {
    State &s = state(ctx);
    std::lock_guard lock(s.mu);
    auto it = s.images.find(id);
    if (it == s.images.end()) return VA_STATUS_ERROR_INVALID_IMAGE;
    auto b = s.buffers.find(it->second.image.buf);
    if (b != s.buffers.end()) {
        if (b->second.mapped && b->second.derived_from != VA_INVALID_SURFACE)
            if (auto sf = s.surfaces.find(b->second.derived_from); sf != s.surfaces.end()) cpu_end(sf->second.mem, true);
        s.buffers.erase(b);
        --live;
    }
    if (auto sf = s.surfaces.find(it->second.derived_from); sf != s.surfaces.end()) --sf->second.derived;
    s.images.erase(it);
    --live;
    return VA_STATUS_SUCCESS;
}

VAStatus create_buffer(VADriverContextP ctx, VAContextID, VABufferType type, unsigned size, unsigned num_elements,
                       void *data, VABufferID *out) {
    if (size == 0 || num_elements == 0) return VA_STATUS_ERROR_INVALID_PARAMETER;
    State &s = state(ctx);
    std::lock_guard lock(s.mu);
    Buffer buf;
    buf.type = type;
    buf.num_elements = num_elements;
    buf.host.assign(size_t(size) * num_elements, 0);
    if (data) std::memcpy(buf.host.data(), data, buf.host.size());
    *out = s.next_id++;
    s.buffers[*out] = std::move(buf);
    ++live;
    return VA_STATUS_SUCCESS;
}

using BufferTable = decltype(State::buffers);

// Runs fn(state, buffer) under the state's lock; an id naming no buffer gets
// VA_STATUS_ERROR_INVALID_BUFFER, as from a real driver.
template <typename Fn>
VAStatus with_buffer(VADriverContextP ctx, VABufferID id, Fn fn) {
    State &s = state(ctx);
    std::lock_guard lock(s.mu);
    auto it = s.buffers.find(id);
    if (it == s.buffers.end()) return VA_STATUS_ERROR_INVALID_BUFFER;
    return fn(s, it);
}

VAStatus buffer_set_num_elements(VADriverContextP ctx, VABufferID id, unsigned n) {
    return with_buffer(ctx, id, [&](State &, BufferTable::iterator it) {
        if (n == 0 || n > it->second.num_elements) return VA_STATUS_ERROR_INVALID_PARAMETER;
        it->second.num_elements = n;
        return VA_STATUS_SUCCESS;
    });
}

VAStatus map_buffer(VADriverContextP ctx, VABufferID id, void **out) {
    return with_buffer(ctx, id, [&](State &s, BufferTable::iterator it) {
        Buffer &b = it->second;
        if (b.derived_from == VA_INVALID_SURFACE) {
            *out = b.host.data();
            b.mapped = true;
            return VA_STATUS_SUCCESS;
        }
        auto sf = s.surfaces.find(b.derived_from);
        if (sf == s.surfaces.end()) return VA_STATUS_ERROR_INVALID_SURFACE;  // surface destroyed under its image
        if (!b.mapped) cpu_begin(sf->second.mem, true);
        b.mapped = true;
        *out = sf->second.mem.map;
        return VA_STATUS_SUCCESS;
    });
}

VAStatus unmap_buffer(VADriverContextP ctx, VABufferID id) {
    return with_buffer(ctx, id, [&](State &s, BufferTable::iterator it) {
        Buffer &b = it->second;
        if (!b.mapped) return VA_STATUS_SUCCESS;  // iHD answers success for an unmapped buffer too
        if (b.derived_from != VA_INVALID_SURFACE)
            if (auto sf = s.surfaces.find(b.derived_from); sf != s.surfaces.end()) cpu_end(sf->second.mem, true);
        b.mapped = false;
        return VA_STATUS_SUCCESS;
    });
}

VAStatus destroy_buffer(VADriverContextP ctx, VABufferID id) {
    return with_buffer(ctx, id, [&](State &s, BufferTable::iterator it) {
        s.buffers.erase(it);
        --live;
        return VA_STATUS_SUCCESS;
    });
}

VAStatus buffer_info(VADriverContextP ctx, VABufferID id, VABufferType *type, unsigned *size, unsigned *num) {
    return with_buffer(ctx, id, [&](State &, BufferTable::iterator it) {
        *type = it->second.type;
        *size = static_cast<unsigned>(it->second.host.size() / std::max(1u, it->second.num_elements));
        *num = it->second.num_elements;
        return VA_STATUS_SUCCESS;
    });
}

// Runs fn(state, surface, image) under the state's lock, the two looked up
// for vaGetImage/vaPutImage; unknown ids get the error a real driver answers.
template <typename Fn>
VAStatus with_surface_and_image(VADriverContextP ctx, VASurfaceID sid, VAImageID iid, Fn fn) {
    State &s = state(ctx);
    std::lock_guard lock(s.mu);
    auto sf = s.surfaces.find(sid);
    if (sf == s.surfaces.end()) return VA_STATUS_ERROR_INVALID_SURFACE;
    auto im = s.images.find(iid);
    if (im == s.images.end()) return VA_STATUS_ERROR_INVALID_IMAGE;
    return fn(s, sf, im);
}

// vaGetImage: surface rectangle -> image (same fourcc; no conversion).
VAStatus get_image(VADriverContextP ctx, VASurfaceID sid, int x, int y, unsigned w, unsigned h, VAImageID iid) {
    return with_surface_and_image(ctx, sid, iid, [&](State &s, auto sf, auto im) {
        const Layout &sl = sf->second.layout;
        const VAImage &img = im->second.image;
        if (img.format.fourcc != sl.fourcc) return VA_STATUS_ERROR_INVALID_IMAGE_FORMAT;
        if (x < 0 || y < 0 || (x | y) & 1 || x + w > sl.width || y + h > sl.height || w > img.width || h > img.height)
            return VA_STATUS_ERROR_INVALID_PARAMETER;
        auto b = s.buffers.find(img.buf);
        if (b == s.buffers.end() || b->second.derived_from != VA_INVALID_SURFACE) return VA_STATUS_ERROR_INVALID_IMAGE;
        Layout il;
        layout_of(img.format.fourcc, img.width, img.height, &il);
        cpu_begin(sf->second.mem, false);
        copy_rect(sl, static_cast<const uint8_t *>(sf->second.mem.map), unsigned(x), unsigned(y), il, b->second.host.data(),
                  0, 0, w, h);
        cpu_end(sf->second.mem, false);
        return VA_STATUS_SUCCESS;
    });
}

// vaPutImage: image rectangle -> surface (no scaling: a real driver's VPP
// would scale; this one refuses as a driver without it does).
VAStatus put_image(VADriverContextP ctx, VASurfaceID sid, VAImageID iid, int sx, int sy, unsigned sw, unsigned sh,
                   int dx, int dy, unsigned dw, unsigned dh) {
    return with_surface_and_image(ctx, sid, iid, [&](State &s, auto sf, auto im) {
        const Layout &dl = sf->second.layout;
        const VAImage &img = im->second.image;
        if (img.format.fourcc != dl.fourcc) return VA_STATUS_ERROR_INVALID_IMAGE_FORMAT;
        if (sw != dw || sh != dh) return VA_STATUS_ERROR_UNIMPLEMENTED;
        if (sx < 0 || sy < 0 || dx < 0 || dy < 0 || (sx | sy | dx | dy) & 1 || sx + sw > img.width ||
            sy + sh > img.height || dx + dw > dl.width || dy + dh > dl.height)
            return VA_STATUS_ERROR_INVALID_PARAMETER;
        auto b = s.buffers.find(img.buf);
        if (b == s.buffers.end() || b->second.derived_from != VA_INVALID_SURFACE) return VA_STATUS_ERROR_INVALID_IMAGE;
        Layout il;
        layout_of(img.format.fourcc, img.width, img.height, &il);
        cpu_begin(sf->second.mem, true);
        copy_rect(il, b->second.host.data(), unsigned(sx), unsigned(sy), dl, static_cast<uint8_t *>(sf->second.mem.map),
                  unsigned(dx), unsigned(dy), sw, sh);
        cpu_end(sf->second.mem, true);
        return VA_STATUS_SUCCESS;
    });
}

VAStatus query_subpicture_formats(VADriverContextP, VAImageFormat *, unsigned *, unsigned *num) {
    *num = 0;
    return VA_STATUS_SUCCESS;
}

VAStatus query_display_attributes(VADriverContextP, VADisplayAttribute *, int *num) {
    *num = 0;
    return VA_STATUS_SUCCESS;
}

VAStatus terminate(VADriverContextP ctx) {
    State *s = static_cast<State *>(ctx->pDriverData);
    for (auto &[id, surface] : s->surfaces) {
        free_buffer(&surface.mem);
        --live;
    }
    live -= static_cast<unsigned>(s->images.size() + s->buffers.size() + s->configs.size());
    delete s;
    ctx->pDriverData = nullptr;
    return VA_STATUS_SUCCESS;
}

// Every entry point this driver does not have.  libva requires the core
// ones to be non-null; a driver without the feature answers UNIMPLEMENTED.
// Called through the vtable's own pointer types: on the x86-64 and AArch64
// calling conventions a function that ignores its arguments may be called
// with any (this is a test instrument, built only for those).
extern "C" VAStatus vva_unimplemented() { return VA_STATUS_ERROR_UNIMPLEMENTED; }

template <typename Fn>
void stub(Fn &slot) {
    if (!slot) slot = reinterpret_cast<Fn>(reinterpret_cast<void (*)(void)>(&vva_unimplemented));
}

}  // namespace
}  // namespace vva

// libva looks for __vaDriverInit_<VA-API major>_<minor>, from its own minor
// down: the name is made from the headers the driver is built with.
#define VVA_CONCAT2(a, b) a##b
#define VVA_CONCAT(a, b) VVA_CONCAT2(a, b)
#define VVA_DRIVER_INIT VVA_CONCAT(VVA_CONCAT(__vaDriverInit_, VA_MAJOR_VERSION), VVA_CONCAT(_, VA_MINOR_VERSION))

extern "C" {

unsigned vva_sync_count(void) { return vva::syncs.load(); }
void vva_fail_next_syncs(unsigned n, int status) {
    vva::sync_status = status;
    vva::fail_syncs = n;
}
void vva_fail_next_exports(unsigned n, int status) {
    vva::export_status = status;
    vva::fail_exports = n;
}
void vva_export_modifier(uint64_t modifier) { vva::export_modifier = modifier; }
unsigned vva_live_objects(void) { return vva::live.load(); }
const char *vva_memory_backend(void) { return vva::backend_name(); }

__attribute__((visibility("default"))) VAStatus VVA_DRIVER_INIT(VADriverContextP ctx) {
    using namespace vva;
    auto *drm = static_cast<drm_state *>(ctx->drm_state);
    auto *s = new State;
    s->drm_fd = drm ? drm->fd : -1;
    ctx->pDriverData = s;
    ctx->version_major = VA_MAJOR_VERSION;
    ctx->version_minor = VA_MINOR_VERSION;
    ctx->max_profiles = 1;
    ctx->max_entrypoints = 1;
    ctx->max_attributes = 8;
    ctx->max_image_formats = 2;
    ctx->max_subpic_formats = 1;
    ctx->max_display_attributes = 1;
    ctx->str_vendor = "cldmabuf virtual VA driver (test instrument, tests/va)";
    VADriverVTable &v = *ctx->vtable;
    v.vaTerminate = terminate;
    v.vaQueryConfigProfiles = query_config_profiles;
    v.vaQueryConfigEntrypoints = query_config_entrypoints;
    v.vaGetConfigAttributes = get_config_attributes;
    v.vaCreateConfig = create_config;
    v.vaDestroyConfig = destroy_config;
    v.vaQueryConfigAttributes = query_config_attributes;
    v.vaQuerySurfaceAttributes = query_surface_attributes;
    v.vaCreateSurfaces = create_surfaces;
    v.vaCreateSurfaces2 = create_surfaces2;
    v.vaDestroySurfaces = destroy_surfaces;
    v.vaSyncSurface = sync_surface;
    v.vaSyncSurface2 = sync_surface2;
    v.vaQuerySurfaceStatus = query_surface_status;
    v.vaExportSurfaceHandle = export_surface_handle;
    v.vaQueryImageFormats = query_image_formats;
    v.vaCreateImage = create_image;
    v.vaDeriveImage = derive_image;
    v.vaDestroyImage = destroy_image;
    v.vaGetImage = get_image;
    v.vaPutImage = put_image;
    v.vaCreateBuffer = create_buffer;
    v.vaBufferSetNumElements = buffer_set_num_elements;
    v.vaMapBuffer = map_buffer;
    v.vaUnmapBuffer = unmap_buffer;
    v.vaDestroyBuffer = destroy_buffer;
    v.vaBufferInfo = buffer_info;
    v.vaQuerySubpictureFormats = query_subpicture_formats;
    v.vaQueryDisplayAttributes = query_display_attributes;
    stub(v.vaCreateContext);
    stub(v.vaDestroyContext);
    stub(v.vaBeginPicture);
    stub(v.vaRenderPicture);
    stub(v.vaEndPicture);
    stub(v.vaQuerySurfaceError);
    stub(v.vaPutSurface);
    stub(v.vaSetImagePalette);
    stub(v.vaCreateSubpicture);
    stub(v.vaDestroySubpicture);
    stub(v.vaSetSubpictureImage);
    stub(v.vaSetSubpictureChromakey);
    stub(v.vaSetSubpictureGlobalAlpha);
    stub(v.vaAssociateSubpicture);
    stub(v.vaDeassociateSubpicture);
    stub(v.vaGetDisplayAttributes);
    stub(v.vaSetDisplayAttributes);
    stub(v.vaLockSurface);
    stub(v.vaUnlockSurface);
    return VA_STATUS_SUCCESS;
}

}  // extern "C"
