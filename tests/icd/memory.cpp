// Buffers on host memory (USE/COPY/ALLOC_HOST_PTR, sub-buffers, destructor
// callbacks), the native external-memory imports of the modes, and images,
// which this ICD does not support (CL_DEVICE_IMAGE_SUPPORT is false).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "testicd.hpp"

namespace testicd {

void retain_mem(cl_mem mem) { ++mem->refs; }

namespace {
// late_destructors: callbacks owed by released buffers, and the one released
// buffer whose handle the next buffer gets (under lock()).
using Destructors = std::vector<std::pair<void(CL_CALLBACK *)(cl_mem, void *), void *>>;
std::vector<std::pair<cl_mem, Destructors>> owed_destructors;
_cl_mem *reusable = nullptr;
}  // namespace

void run_late_destructors() {
    std::vector<std::pair<cl_mem, Destructors>> owed;
    {
        std::lock_guard guard(lock());
        owed.swap(owed_destructors);
    }
    for (auto &[mem, list] : owed)
        for (auto it = list.rbegin(); it != list.rend(); ++it) it->first(mem, it->second);
}

void release_mem(cl_mem mem, Later &later) {
    if (--mem->refs) return;
    auto destroy = [mem] {
        const bool late = config().late_destructors;
        if (!late)
            for (auto it = mem->destructors.rbegin(); it != mem->destructors.rend(); ++it) it->first(mem, it->second);
        Later more;
        {
            std::lock_guard guard(lock());
            if (mem->owns_storage) std::free(mem->storage);
            if (mem->mapping) munmap(mem->mapping, mem->mapping_len);
            if (mem->owned_fd >= 0) close(mem->owned_fd);
            if (mem->parent) release_mem(mem->parent, more);
            mem->kind = Kind{};
            if (--mem->context->refs == 0) {
                // The context outlived by its objects: release it the usual way.
                ++mem->context->refs;
                cl_context ctx = mem->context;
                more.push_back([ctx] { ctx->disp->clReleaseContext(ctx); });
            }
            count_object(Kind::mem, -1);
            if (late) {
                owed_destructors.emplace_back(mem, std::move(mem->destructors));
                delete reusable;
                reusable = mem;  // the next buffer's handle
            } else {
                delete mem;
            }
        }
        run_later(more);
    };
    if (config().manual) defer_step("destroy mem", std::move(destroy));
    else later.push_back(std::move(destroy));
}

char *mem_bytes(cl_mem mem) { return mem->storage; }

cl_mem new_buffer(cl_context ctx, cl_mem_flags flags, size_t size, char *storage, bool owns) {
    _cl_mem *m = reusable ? reusable : new _cl_mem{};
    if (reusable) {
        *m = _cl_mem{};
        reusable = nullptr;
    }
    count_object(Kind::mem, +1);
    m->disp = dispatch();
    m->kind = Kind::mem;
    m->context = ctx;
    m->flags = flags;
    m->size = size;
    m->storage = storage;
    m->owns_storage = owns;
    ++ctx->refs;
    return m;
}

namespace {

cl_mem fail(cl_int *errcode_ret, cl_int err) {
    if (errcode_ret) *errcode_ret = err;
    return nullptr;
}

cl_mem create_buffer_common(cl_context ctx, cl_mem_flags flags, size_t size, void *host_ptr, cl_int *errcode_ret) {
    if (size == 0 || size > (size_t{1} << 30)) return fail(errcode_ret, CL_INVALID_BUFFER_SIZE);
    if ((flags & CL_MEM_USE_HOST_PTR) && (flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_ALLOC_HOST_PTR)))
        return fail(errcode_ret, CL_INVALID_VALUE);
    if (!!host_ptr != !!(flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR)))
        return fail(errcode_ret, CL_INVALID_HOST_PTR);
    char *storage = nullptr;
    bool owns = false;
    if (flags & CL_MEM_USE_HOST_PTR) {
        storage = static_cast<char *>(host_ptr);
    } else {
        storage = static_cast<char *>(std::aligned_alloc(4096, (size + 4095) / 4096 * 4096));
        if (!storage) return fail(errcode_ret, CL_OUT_OF_HOST_MEMORY);
        owns = true;
        if (flags & CL_MEM_COPY_HOST_PTR) std::memcpy(storage, host_ptr, size);
        else std::memset(storage, 0, size);
    }
    std::lock_guard guard(lock());
    if (!valid(ctx, Kind::context)) {
        if (owns) std::free(storage);
        return fail(errcode_ret, CL_INVALID_CONTEXT);
    }
    cl_mem m = new_buffer(ctx, flags, size, storage, owns);
    if (flags & CL_MEM_USE_HOST_PTR) m->host_ptr = host_ptr;
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return m;
}

cl_mem CL_API_CALL create_buffer(cl_context ctx, cl_mem_flags flags, size_t size, void *host_ptr,
                                 cl_int *errcode_ret) {
    record("clCreateBuffer flags=" + hex(flags) + " size=" + std::to_string(size));
    if (injected_failure("clCreateBuffer")) return fail(errcode_ret, CL_OUT_OF_RESOURCES);
    return create_buffer_common(ctx, flags, size, host_ptr, errcode_ret);
}

// The handle types the modes import natively; anything else is refused as
// an unknown property would be.
cl_mem CL_API_CALL create_buffer_with_properties(cl_context ctx, const cl_mem_properties *props, cl_mem_flags flags,
                                                 size_t size, void *host_ptr, cl_int *errcode_ret) {
    if (injected_failure("clCreateBufferWithProperties")) return fail(errcode_ret, CL_OUT_OF_RESOURCES);
    record("clCreateBufferWithProperties props=" + properties_text(props) + " flags=" + hex(flags) +
           " size=" + std::to_string(size));
    int handle_fd = -1;
    cl_mem_properties handle_type = 0;
    for (const cl_mem_properties *p = props; p && *p;) {
        if (p[0] == CL_MEM_DEVICE_HANDLE_LIST_KHR) {
            for (++p; *p != CL_MEM_DEVICE_HANDLE_LIST_END_KHR; ++p)
                if (reinterpret_cast<cl_device_id>(*p) != the_device()) return fail(errcode_ret, CL_INVALID_DEVICE);
            ++p;
            continue;
        }
        const bool opaque = p[0] == CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR && config().native_opaque_fd;
        const bool dmabuf = p[0] == CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR && config().native_dmabuf;
        if (!opaque && !dmabuf) return fail(errcode_ret, CL_INVALID_PROPERTY);
        handle_type = p[0];
        handle_fd = static_cast<int>(p[1]);
        p += 2;
    }
    if (!handle_type) {
        cl_mem m = create_buffer_common(ctx, flags, size, host_ptr, errcode_ret);
        if (m && props) {
            const cl_mem_properties *end = props;
            while (*end) ++end;
            m->properties.assign(props, end + 1);
        }
        return m;
    }
    if (host_ptr || (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR | CL_MEM_ALLOC_HOST_PTR)))
        return fail(errcode_ret, CL_INVALID_VALUE);
    cl_mem m = nullptr;
    if (handle_type == CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR) {
        m = import_dmabuf_fd(ctx, flags, handle_fd, size, errcode_ret);
    } else {
        // Opaque fds carry nothing this ICD can map: the import is recorded
        // and backed by fresh memory; the fd becomes the ICD's.
        m = create_buffer_common(ctx, flags, size, nullptr, errcode_ret);
        if (m) m->owned_fd = handle_fd;
    }
    if (m) {
        const cl_mem_properties *end = props;
        while (*end) ++end;
        m->properties.assign(props, end + 1);
    }
    return m;
}

cl_mem CL_API_CALL create_sub_buffer(cl_mem parent, cl_mem_flags flags, cl_buffer_create_type type,
                                     const void *info, cl_int *errcode_ret) {
    std::lock_guard guard(lock());
    if (!valid(parent, Kind::mem) || parent->parent || parent->type != CL_MEM_OBJECT_BUFFER)
        return fail(errcode_ret, CL_INVALID_MEM_OBJECT);
    if (type != CL_BUFFER_CREATE_TYPE_REGION || !info) return fail(errcode_ret, CL_INVALID_VALUE);
    const auto *region = static_cast<const cl_buffer_region *>(info);
    if (region->size == 0) return fail(errcode_ret, CL_INVALID_BUFFER_SIZE);
    if (region->origin + region->size > parent->size || region->origin + region->size < region->origin)
        return fail(errcode_ret, CL_INVALID_VALUE);
    if (region->origin % 128) return fail(errcode_ret, CL_MISALIGNED_SUB_BUFFER_OFFSET);
    const cl_mem_flags inherited = parent->flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR);
    const cl_mem_flags access = flags ? flags : parent->flags & ~inherited;
    cl_mem m = new_buffer(parent->context, access | inherited, region->size, parent->storage + region->origin, false);
    if (parent->host_ptr) m->host_ptr = static_cast<char *>(parent->host_ptr) + region->origin;
    m->parent = parent;
    m->origin = region->origin;
    retain_mem(parent);
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return m;
}

cl_int CL_API_CALL retain_mem_object(cl_mem mem) {
    std::lock_guard guard(lock());
    if (!valid(mem, Kind::mem)) return CL_INVALID_MEM_OBJECT;
    retain_mem(mem);
    return CL_SUCCESS;
}

cl_int CL_API_CALL release_mem_object(cl_mem mem) {
    Later later;
    {
        std::lock_guard guard(lock());
        if (!valid(mem, Kind::mem)) return CL_INVALID_MEM_OBJECT;
        release_mem(mem, later);
    }
    run_later(later);
    return CL_SUCCESS;
}

cl_int CL_API_CALL set_mem_object_destructor_callback(cl_mem mem, void(CL_CALLBACK *fn)(cl_mem, void *), void *data) {
    if (injected_failure("clSetMemObjectDestructorCallback")) return CL_OUT_OF_RESOURCES;
    std::lock_guard guard(lock());
    if (!valid(mem, Kind::mem)) return CL_INVALID_MEM_OBJECT;
    if (!fn) return CL_INVALID_VALUE;
    mem->destructors.emplace_back(fn, data);
    return CL_SUCCESS;
}

cl_int CL_API_CALL get_mem_object_info(cl_mem mem, cl_mem_info name, size_t size, void *value, size_t *size_ret) {
    std::lock_guard guard(lock());
    if (!valid(mem, Kind::mem)) return CL_INVALID_MEM_OBJECT;
    switch (name) {
    case CL_MEM_TYPE: return answer_value(mem->type, size, value, size_ret);
    case CL_MEM_FLAGS: return answer_value(mem->flags, size, value, size_ret);
    case CL_MEM_SIZE: return answer_value(mem->size, size, value, size_ret);
    case CL_MEM_HOST_PTR: return answer_value(mem->host_ptr, size, value, size_ret);
    case CL_MEM_MAP_COUNT: return answer_value(mem->map_count, size, value, size_ret);
    case CL_MEM_REFERENCE_COUNT: return answer_value(mem->refs, size, value, size_ret);
    case CL_MEM_CONTEXT: return answer_value(mem->context, size, value, size_ret);
    case CL_MEM_ASSOCIATED_MEMOBJECT: return answer_value(mem->parent, size, value, size_ret);
    case CL_MEM_OFFSET: return answer_value(mem->origin, size, value, size_ret);
    case CL_MEM_USES_SVM_POINTER:
        if (!config().at_least(2, 0)) return CL_INVALID_VALUE;
        return answer_value(cl_bool{CL_FALSE}, size, value, size_ret);
    case CL_MEM_PROPERTIES:
        if (!config().at_least(3, 0)) return CL_INVALID_VALUE;
        return answer(mem->properties.data(), mem->properties.size() * sizeof(cl_mem_properties), size, value,
                      size_ret);
    default: return CL_INVALID_VALUE;
    }
}

cl_mem CL_API_CALL create_image(cl_context, cl_mem_flags, const cl_image_format *, const cl_image_desc *, void *,
                                cl_int *errcode_ret) {
    record("clCreateImage");
    return fail(errcode_ret, CL_INVALID_OPERATION);  // no image support
}

cl_mem CL_API_CALL create_image_with_properties(cl_context, const cl_mem_properties *props, cl_mem_flags flags,
                                                const cl_image_format *, const cl_image_desc *, void *,
                                                cl_int *errcode_ret) {
    record("clCreateImageWithProperties props=" + properties_text(props) + " flags=" + hex(flags));
    return fail(errcode_ret, CL_INVALID_OPERATION);  // no image support
}

cl_int CL_API_CALL get_supported_image_formats(cl_context ctx, cl_mem_flags, cl_mem_object_type, cl_uint,
                                               cl_image_format *, cl_uint *num) {
    if (!valid(ctx, Kind::context)) return CL_INVALID_CONTEXT;
    if (num) *num = 0;
    return CL_SUCCESS;
}

cl_int CL_API_CALL get_image_info(cl_mem, cl_image_info, size_t, void *, size_t *) { return CL_INVALID_MEM_OBJECT; }

}  // namespace

cl_mem import_dmabuf_fd(cl_context ctx, cl_mem_flags flags, int fd, size_t size, cl_int *errcode_ret) {
    if (size == 0) return fail(errcode_ret, CL_INVALID_BUFFER_SIZE);
    const size_t len = (size + 4095) / 4096 * 4096;
    void *map = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) return fail(errcode_ret, CL_INVALID_PROPERTY);
    std::lock_guard guard(lock());
    if (!valid(ctx, Kind::context)) {
        munmap(map, len);
        return fail(errcode_ret, CL_INVALID_CONTEXT);
    }
    cl_mem m = new_buffer(ctx, flags, size, static_cast<char *>(map), false);
    m->mapping = map;
    m->mapping_len = len;
    m->owned_fd = fd;
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return m;
}

void fill_memory_slots(cl_icd_dispatch &d) {
    d.clCreateBuffer = create_buffer;
    d.clCreateBufferWithProperties = create_buffer_with_properties;
    d.clCreateSubBuffer = create_sub_buffer;
    d.clRetainMemObject = retain_mem_object;
    d.clReleaseMemObject = release_mem_object;
    d.clSetMemObjectDestructorCallback = set_mem_object_destructor_callback;
    d.clGetMemObjectInfo = get_mem_object_info;
    d.clCreateImage = create_image;
    d.clCreateImageWithProperties = create_image_with_properties;
    d.clGetSupportedImageFormats = get_supported_image_formats;
    d.clGetImageInfo = get_image_info;
}

}  // namespace testicd
