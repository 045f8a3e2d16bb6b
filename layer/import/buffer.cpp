#include "layer/param_answer.hpp"
#include "layer/import/buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "layer/dispatch.hpp"
#include "layer/ext/dmabuf.hpp"
#include "layer/ext/exporter.hpp"
#include "layer/ext/mapping_cache.hpp"
#include "layer/import/native.hpp"
#include "layer/import/request.hpp"
#include "layer/ext/zero_copy_check.hpp"
#include "layer/kernel_ops.hpp"
#include "layer/log.hpp"
#include "layer/stats.hpp"

namespace cldmabuf {

StrategyChoice strategy_choice() {
    static const StrategyChoice choice = [] {
        const char *v = std::getenv("CLDMABUF_IMPORT");
        if (v && (!std::strcmp(v, "copy"))) return StrategyChoice::copy;
        if (v && (!std::strcmp(v, "zero-copy") || !std::strcmp(v, "zerocopy")))
            return StrategyChoice::zero_copy;
        return StrategyChoice::automatic;
    }();
    return choice;
}

bool device_shares_host_memory(cl_device_id device) {
    cl_device_type type = 0;
    if (next().clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, nullptr) == CL_SUCCESS &&
        (type & CL_DEVICE_TYPE_CPU))
        return true;
    cl_bool unified = CL_FALSE;
    return next().clGetDeviceInfo(device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified,
                                  nullptr) == CL_SUCCESS &&
           unified;
}

cl_int context_devices(cl_context context, std::vector<cl_device_id> *out) {
    size_t bytes = 0;
    cl_int err = next().clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, nullptr, &bytes);
    if (err != CL_SUCCESS) return err;
    out->resize(bytes / sizeof(cl_device_id));
    return next().clGetContextInfo(context, CL_CONTEXT_DEVICES, bytes, out->data(), nullptr);
}

int map_dmabuf(Import &import, int fd, size_t bytes, cl_mem_flags flags) {
    const long page = sysconf(_SC_PAGESIZE);
    const size_t len = (bytes + page - 1) / page * page;
    // A CL_MEM_READ_ONLY object is only read by devices: the layer's mapping
    // (which the ICD uses in place) is read-only too, so nothing through it
    // can write the producer's buffer.  The copy strategy never writes such
    // an object back (acquire_release.cpp skips CL_MEM_READ_ONLY on release).
    const bool writable = !(flags & CL_MEM_READ_ONLY);
    void *map = acquire_mapping(fd, len, writable, &import.mapping_len);
    if (map == MAP_FAILED) return errno;
    import.mapped_writable = writable;
    import.mapping = map;
    return 0;
}

void unmap_dmabuf(Import &import, bool keep) {
    if (!import.mapping) return;
    release_mapping(import.mapping, import.mapping_len, keep);
    import.mapping = nullptr;
}

cl_device_id root_device_of(cl_device_id device) {
    for (int depth = 0; depth < 8; ++depth) {
        cl_device_id parent = nullptr;
        if (next().clGetDeviceInfo(device, CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, nullptr) != CL_SUCCESS ||
            !parent)
            return device;
        device = parent;
    }
    return device;
}

bool device_in(const std::vector<cl_device_id> &list, cl_device_id device) {
    return std::find(list.begin(), list.end(), device) != list.end();
}

bool device_or_parent_in(const std::vector<cl_device_id> &list, cl_device_id device) {
    for (int depth = 0; device && depth < 8; ++depth) {
        if (device_in(list, device)) return true;
        cl_device_id parent = nullptr;
        if (next().clGetDeviceInfo(device, CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, nullptr) != CL_SUCCESS)
            return false;
        device = parent;
    }
    return false;
}

cl_mem refuse_import(cl_int *errcode_ret, cl_int err, const char *what, const std::string &why) {
    LOG_ERROR("%s refused: %s", what, why.c_str());
    stats().import_errors++;
    if (errcode_ret) *errcode_ret = err;
    return nullptr;
}

namespace {

cl_mem fail(cl_int *errcode_ret, cl_int err, const std::string &why) {
    return refuse_import(errcode_ret, err, "import", why);
}

// Runs when the ICD destroys the object (after the application's own
// destructor callbacks, which were registered later): the ICD no longer
// touches our mapping, so unmap it and close the fd we own.
void CL_CALLBACK on_import_destroyed(cl_mem mem, void *) {
    std::shared_ptr<Import> import = imports().remove(mem);
    if (!import) return;
    {
        std::lock_guard lock(import->backend_mutex);
        import->backend.reset();  // GEM handle etc.
    }
    const size_t mapped = import->mapping_len;
    const int dup = import->fd, app = import->app_fd;
    unmap_dmabuf(*import);
    const bool closed_app = close_import_fds(*import);
    LOG_DEBUG("import %p destroyed: released the mapping (%zu bytes), closed the layer's fd %d%s%d",
              static_cast<void *>(mem), mapped, dup,
              closed_app ? " and the application's fd " : "; left the application's number alone: ", app);
}

ImportStrategy pick_strategy(const Import &import) {
    switch (strategy_choice()) {
    case StrategyChoice::copy: return ImportStrategy::copy;
    case StrategyChoice::zero_copy: return ImportStrategy::zero_copy;
    case StrategyChoice::automatic: break;
    }
    for (cl_device_id d : import.devices)
        if (!device_shares_host_memory(d)) return ImportStrategy::copy;
    // The device's claim is necessary, not sufficient: check that the ICD
    // really uses a mapping of this kind of dma-buf in place.
    for (cl_device_id d : import.devices)
        if (check_buffer_zero_copy(import.context, d, import.exporter, import.fd) == ZeroCopyVerdict::copies)
            return ImportStrategy::copy;
    return ImportStrategy::zero_copy;
}

cl_mem CL_API_CALL create_buffer_with_properties(cl_context context, const cl_mem_properties *properties,
                                                 cl_mem_flags flags, size_t size, void *host_ptr,
                                                 cl_int *errcode_ret) {
    if (cl_mem mem = nullptr; native_buffer_import(context, properties, flags, size, host_ptr, errcode_ret, &mem))
        return mem;
    if (!mentions_external_memory(properties))
        return next().clCreateBufferWithProperties(context, properties, flags, size, host_ptr, errcode_ret);

    ImportProperties props;
    std::string why;
    if (cl_int err = parse_import_properties(properties, &props, &why); err != CL_SUCCESS)
        return fail(errcode_ret, err, why);

    std::vector<cl_device_id> ctx_devices;
    if (cl_int err = context_devices(context, &ctx_devices); err != CL_SUCCESS)
        return fail(errcode_ret, CL_INVALID_CONTEXT, "the context is not valid");
    for (cl_device_id d : props.devices)
        if (!device_in(ctx_devices, d))
            return fail(errcode_ret, CL_INVALID_DEVICE,
                        "a device in CL_MEM_DEVICE_HANDLE_LIST_KHR is not a device of the context");

    if (std::string bad = check_dmabuf_fd(props.fd); !bad.empty())
        return fail(errcode_ret, CL_INVALID_PROPERTY, bad);
    if (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR))
        return fail(errcode_ret, CL_INVALID_VALUE,
                    "CL_MEM_USE/ALLOC/COPY_HOST_PTR cannot be combined with an external memory handle");
    if (host_ptr) return fail(errcode_ret, CL_INVALID_HOST_PTR, "host_ptr must be NULL for an import");
    if (size == 0) return fail(errcode_ret, CL_INVALID_BUFFER_SIZE, "size is 0");
    const int64_t dmabuf_bytes = dmabuf_size(props.fd);
    if (dmabuf_bytes < 0)
        return fail(errcode_ret, CL_INVALID_PROPERTY,
                    "cannot size dma-buf fd " + std::to_string(props.fd) + ": " + std::strerror(-dmabuf_bytes));
    if (static_cast<uint64_t>(size) > static_cast<uint64_t>(dmabuf_bytes))
        return fail(errcode_ret, CL_INVALID_BUFFER_SIZE,
                    "size " + std::to_string(size) + " is larger than the dma-buf (" +
                        std::to_string(dmabuf_bytes) + " bytes)");

    auto import = std::make_shared<Import>();
    // From here the layer works on its own duplicate; the application's
    // number is only recorded (closed on destroy if it is still this dma-buf).
    if (int err = adopt_dmabuf_fd(*import, props.fd); err != 0)
        return fail(errcode_ret, CL_OUT_OF_RESOURCES,
                    "cannot duplicate dma-buf fd " + std::to_string(props.fd) + ": " + std::strerror(-err));
    set_exporter(*import, identify_exporter(import->fd));
    import->context = context;
    import->dmabuf_size = static_cast<uint64_t>(dmabuf_bytes);
    import->size = size;
    import->flags = flags;
    import->properties = std::move(props.original);
    import->device_list_given = props.has_device_list;
    import->devices = props.has_device_list ? props.devices : ctx_devices;
    import->strategy = pick_strategy(*import);

    if (int err = map_dmabuf(*import, import->fd, size, flags); err != 0) {
        drop_dmabuf_dup(*import);
        return fail(errcode_ret, CL_INVALID_PROPERTY,
                    "cannot map dma-buf fd " + std::to_string(props.fd) + ": " + std::strerror(err));
    }
    void *map = import->mapping;

    const cl_mem_properties *icd_props = props.passthrough.empty() ? nullptr : props.passthrough.data();
    cl_int err = CL_SUCCESS;
    cl_mem mem = nullptr;
    cl_mem_flags icd_flags =
        flags | (import->strategy == ImportStrategy::zero_copy ? CL_MEM_USE_HOST_PTR : CL_MEM_COPY_HOST_PTR);
    // A device copy is filled and written back by the layer's own
    // Write/ReadBuffer, which the application's host-access flags would make
    // the ICD refuse; CL_MEM_FLAGS still answers the application's flags.
    if (import->strategy == ImportStrategy::copy)
        icd_flags &= ~(CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY);
    if (icd_props)
        mem = next().clCreateBufferWithProperties(context, icd_props, icd_flags, size, map, &err);
    else
        mem = next().clCreateBuffer(context, icd_flags, size, map, &err);
    if (!mem) {
        unmap_dmabuf(*import, false);
        drop_dmabuf_dup(*import);
        return fail(errcode_ret, err, "the ICD refused the buffer (error " + std::to_string(err) + ")");
    }
    import->mem = mem;
    imports().add(import);
    if (cl_int cb = next().clSetMemObjectDestructorCallback(mem, on_import_destroyed, nullptr); cb != CL_SUCCESS) {
        imports().remove(mem);
        next().clReleaseMemObject(mem);
        unmap_dmabuf(*import, false);
        drop_dmabuf_dup(*import);
        return fail(errcode_ret, CL_OUT_OF_RESOURCES, "cannot register the destructor callback");
    }

    stats().imports++;
    if (import->strategy == ImportStrategy::zero_copy) {
        stats().zero_copy_imports++;
        stats().zero_copy_bytes += size;
    } else {
        stats().copy_imports++;
        stats().host_bytes_copied += size;
    }
    LOG_INFO("imported dma-buf fd %d (%zu of %lld bytes, %s, layer fd %d) as %p, %s", props.fd, size,
             static_cast<long long>(dmabuf_bytes), describe_exporter(*import).c_str(), import->fd,
             static_cast<void *>(mem), import->strategy == ImportStrategy::zero_copy ? "zero-copy" : "device copy");
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return mem;
}

// The application sees the object as it created it: its own flags and
// property list, and no host pointer (the mapping is the layer's business).
cl_int CL_API_CALL get_mem_object_info(cl_mem mem, cl_mem_info name, size_t size, void *value,
                                       size_t *size_ret) {
    if (!imports().empty() &&
        (name == CL_MEM_PROPERTIES || name == CL_MEM_FLAGS || name == CL_MEM_HOST_PTR)) {
        auto import = imports().find(mem);
        if (import && import->mem != mem) {
            // A sub-buffer of an import: the ICD answers, minus the host
            // pointer it inherited from the layer's mapping.
            if (name == CL_MEM_HOST_PTR) {
                void *none = nullptr;
                return answer(&none, sizeof none, size, value, size_ret);
            }
            if (name == CL_MEM_FLAGS) {
                cl_mem_flags flags = 0;
                cl_int err = next().clGetMemObjectInfo(mem, name, sizeof flags, &flags, nullptr);
                if (err != CL_SUCCESS) return err;
                flags &= ~(CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR);
                return answer(&flags, sizeof flags, size, value, size_ret);
            }
        }
        if (import && import->mem == mem) {
            switch (name) {
            case CL_MEM_PROPERTIES:
                return answer(import->properties.data(), import->properties.size() * sizeof(cl_mem_properties),
                              size, value, size_ret);
            case CL_MEM_FLAGS:
                return answer(&import->flags, sizeof import->flags, size, value, size_ret);
            case CL_MEM_HOST_PTR: {
                void *none = nullptr;
                return answer(&none, sizeof none, size, value, size_ret);
            }
            }
        }
    }
    return next().clGetMemObjectInfo(mem, name, size, value, size_ret);
}

void CL_CALLBACK forget_sub_buffer(cl_mem sub, void *) { imports().remove_sub(sub); }

// Sub-buffers of imports are recorded here, once, so that lookups on the
// intercepted hot paths never have to ask the ICD for a buffer's parent.
cl_mem CL_API_CALL create_sub_buffer(cl_mem parent, cl_mem_flags flags, cl_buffer_create_type type,
                                     const void *info, cl_int *errcode_ret) {
    cl_mem sub = next().clCreateSubBuffer(parent, flags, type, info, errcode_ret);
    if (!sub || imports().empty()) return sub;
    auto import = imports().find(parent);
    if (!import || import->mem != parent || type != CL_BUFFER_CREATE_TYPE_REGION) return sub;
    imports().add_sub(sub, import, static_cast<const cl_buffer_region *>(info)->origin);
    if (next().clSetMemObjectDestructorCallback(sub, forget_sub_buffer, nullptr) != CL_SUCCESS)
        imports().remove_sub(sub);  // unregistered rather than stale
    return sub;
}

}  // namespace

void install_import_overrides(cl_icd_dispatch &table) {
    table.clCreateSubBuffer = create_sub_buffer;
    table.clCreateBufferWithProperties = create_buffer_with_properties;
    table.clGetMemObjectInfo = get_mem_object_info;
}

}  // namespace cldmabuf
