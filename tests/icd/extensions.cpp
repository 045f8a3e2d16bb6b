// What the modes add: extension strings, external-memory handle types, the
// native acquire/release (recorded), semaphore stubs and a native
// clImportMemoryARM.  Everything they receive goes to the record.
#include <unistd.h>

#include <cstring>

#include "testicd.hpp"

namespace testicd {
namespace {

struct Ext {
    const char *name;
    cl_version version;
    bool on;
};

std::vector<Ext> extensions() {
    const Config &c = config();
    return {
        {"cl_khr_icd", CL_MAKE_VERSION(1, 0, 0), true},
        // NVIDIA 580 reports 1.0.0; the layer implements 1.0.1.
        {"cl_khr_external_memory", CL_MAKE_VERSION(1, 0, 0), c.external_memory()},
        {"cl_khr_external_memory_opaque_fd", CL_MAKE_VERSION(1, 0, 0), c.native_opaque_fd},
        {"cl_khr_external_memory_dma_buf", CL_MAKE_VERSION(1, 0, 0), c.native_dmabuf},
        {"cl_khr_semaphore", CL_MAKE_VERSION(1, 0, 0), c.semaphores},
        {"cl_khr_external_semaphore", CL_MAKE_VERSION(1, 0, 0), c.semaphores},
        {"cl_khr_external_semaphore_opaque_fd", CL_MAKE_VERSION(1, 0, 0), c.semaphores},
        {"cl_arm_import_memory", CL_MAKE_VERSION(1, 0, 0), c.arm_import},
        {"cl_arm_import_memory_dma_buf", CL_MAKE_VERSION(1, 0, 0), c.arm_import},
        {"cl_intel_va_api_media_sharing", CL_MAKE_VERSION(1, 0, 0), c.va_sharing},
    };
}

std::string list_text(cl_uint n, const cl_mem *mems) {
    std::string s;
    for (cl_uint i = 0; i < n && mems; ++i) s += (i ? "," : "") + hex(reinterpret_cast<uintptr_t>(mems[i]));
    return s;
}

// The ICD's own acquire/release: commands without work, recorded.
cl_int external_mem_command(const char *what, cl_command_type type, cl_command_queue q, cl_uint n,
                            const cl_mem *mems, cl_uint num_events, const cl_event *waits, cl_event *event) {
    record(std::string(what) + " mems=" + list_text(n, mems));
    if ((n == 0) != (mems == nullptr)) return CL_INVALID_VALUE;
    std::vector<cl_mem> keep(mems, mems + n);
    {
        std::lock_guard guard(lock());
        for (cl_mem m : keep)
            if (!valid(m, Kind::mem) || m->properties.empty()) return CL_INVALID_MEM_OBJECT;
    }
    return submit(q, type, num_events, waits, event, false, keep, [] { return CL_SUCCESS; });
}

cl_int CL_API_CALL acquire(cl_command_queue q, cl_uint n, const cl_mem *mems, cl_uint ne, const cl_event *w,
                           cl_event *e) {
    return external_mem_command("clEnqueueAcquireExternalMemObjectsKHR", CL_COMMAND_ACQUIRE_EXTERNAL_MEM_OBJECTS_KHR,
                                q, n, mems, ne, w, e);
}

cl_int CL_API_CALL release(cl_command_queue q, cl_uint n, const cl_mem *mems, cl_uint ne, const cl_event *w,
                           cl_event *e) {
    return external_mem_command("clEnqueueReleaseExternalMemObjectsKHR", CL_COMMAND_RELEASE_EXTERNAL_MEM_OBJECTS_KHR,
                                q, n, mems, ne, w, e);
}

// ---- cl_khr_semaphore stubs: enough to show the layer passes them through --------

cl_semaphore_khr CL_API_CALL create_semaphore(cl_context, const cl_semaphore_properties_khr *props,
                                              cl_int *errcode_ret) {
    std::string text;
    for (const cl_semaphore_properties_khr *p = props; p && *p; ++p) text += hex(*p) + ",";
    record("clCreateSemaphoreWithPropertiesKHR props=" + text + "0");
    auto *s = new _cl_semaphore_khr{};
    s->disp = dispatch();
    s->kind = Kind::semaphore;
    if (errcode_ret) *errcode_ret = CL_SUCCESS;
    return s;
}

cl_int CL_API_CALL release_semaphore(cl_semaphore_khr s) {
    record("clReleaseSemaphoreKHR");
    if (!valid(s, Kind::semaphore)) return CL_INVALID_SEMAPHORE_KHR;
    if (--s->refs == 0) {
        s->kind = Kind{};
        delete s;
    }
    return CL_SUCCESS;
}

cl_int CL_API_CALL retain_semaphore(cl_semaphore_khr s) {
    record("clRetainSemaphoreKHR");
    if (!valid(s, Kind::semaphore)) return CL_INVALID_SEMAPHORE_KHR;
    ++s->refs;
    return CL_SUCCESS;
}

cl_int CL_API_CALL semaphore_command(const char *what, cl_command_queue q, cl_uint n, const cl_semaphore_khr *sems,
                                     cl_uint ne, const cl_event *w, cl_event *e) {
    record(std::string(what) + " n=" + std::to_string(n));
    if (n == 0 || !sems) return CL_INVALID_VALUE;
    return submit(q, CL_COMMAND_SEMAPHORE_WAIT_KHR, ne, w, e, false, {}, [] { return CL_SUCCESS; });
}

cl_int CL_API_CALL wait_semaphores(cl_command_queue q, cl_uint n, const cl_semaphore_khr *s,
                                   const cl_semaphore_payload_khr *, cl_uint ne, const cl_event *w, cl_event *e) {
    return semaphore_command("clEnqueueWaitSemaphoresKHR", q, n, s, ne, w, e);
}

cl_int CL_API_CALL signal_semaphores(cl_command_queue q, cl_uint n, const cl_semaphore_khr *s,
                                     const cl_semaphore_payload_khr *, cl_uint ne, const cl_event *w, cl_event *e) {
    return semaphore_command("clEnqueueSignalSemaphoresKHR", q, n, s, ne, w, e);
}

cl_int CL_API_CALL get_semaphore_info(cl_semaphore_khr s, cl_semaphore_info_khr name, size_t size, void *value,
                                      size_t *size_ret) {
    record("clGetSemaphoreInfoKHR name=" + hex(name));
    if (!valid(s, Kind::semaphore)) return CL_INVALID_SEMAPHORE_KHR;
    if (name == CL_SEMAPHORE_REFERENCE_COUNT_KHR) return answer_value(s->refs, size, value, size_ret);
    return CL_INVALID_VALUE;
}

cl_int CL_API_CALL get_semaphore_handle(cl_semaphore_khr, cl_device_id, cl_external_semaphore_handle_type_khr type,
                                        size_t, void *, size_t *) {
    record("clGetSemaphoreHandleForTypeKHR type=" + hex(type));
    return CL_INVALID_OPERATION;
}

// ---- cl_arm_import_memory: dma-bufs only (mmap of the fd, like the KHR import) ----

cl_mem CL_API_CALL import_memory_arm(cl_context ctx, cl_mem_flags flags, const cl_import_properties_arm *props,
                                     void *memory, size_t size, cl_int *errcode_ret) {
    std::string text;
    cl_import_properties_arm type = CL_IMPORT_TYPE_HOST_ARM;
    for (const cl_import_properties_arm *p = props; p && *p; p += 2) {
        text += hex(p[0]) + "," + hex(p[1]) + ",";
        if (p[0] == CL_IMPORT_TYPE_ARM) type = p[1];
    }
    record("clImportMemoryARM props=" + text + "0 flags=" + hex(flags) + " size=" + std::to_string(size));
    if (type != CL_IMPORT_TYPE_DMA_BUF_ARM || !memory) {
        if (errcode_ret) *errcode_ret = CL_INVALID_PROPERTY;
        return nullptr;
    }
    const int fd = dup(*static_cast<const int *>(memory));
    cl_mem m = import_dmabuf_fd(ctx, flags & ~CL_MEM_USE_HOST_PTR, fd, size, errcode_ret);
    if (!m && fd >= 0) close(fd);
    return m;
}

// ---- cl_intel_va_api_media_sharing: NEO's entry points, recorded.  The layer
// must hand them every call untouched; they refuse (the test ICD has no VA). ----

constexpr cl_int kInvalidMediaAdapter = -1098;  // CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL
constexpr cl_int kInvalidMediaSurface = -1099;  // CL_INVALID_VA_API_MEDIA_SURFACE_INTEL
constexpr cl_int kNotAcquired = -1101;          // CL_VA_API_MEDIA_SURFACE_NOT_ACQUIRED_INTEL

cl_int CL_API_CALL va_device_ids(cl_platform_id, cl_uint source, void *adapter, cl_uint set, cl_uint, cl_device_id *,
                                 cl_uint *) {
    record("clGetDeviceIDsFromVA_APIMediaAdapterINTEL source=" + hex(source) + " adapter=" +
           hex(reinterpret_cast<uintptr_t>(adapter)) + " set=" + hex(set));
    return kInvalidMediaAdapter;
}

cl_mem CL_API_CALL va_create(cl_context, cl_mem_flags flags, unsigned int *surface, cl_uint plane, cl_int *errcode_ret) {
    record("clCreateFromVA_APIMediaSurfaceINTEL flags=" + hex(flags) + " surface=" +
           std::to_string(surface ? *surface : 0) + " plane=" + std::to_string(plane));
    if (errcode_ret) *errcode_ret = kInvalidMediaSurface;
    return nullptr;
}

cl_int CL_API_CALL va_acquire(cl_command_queue, cl_uint n, const cl_mem *, cl_uint, const cl_event *, cl_event *) {
    record("clEnqueueAcquireVA_APIMediaSurfacesINTEL n=" + std::to_string(n));
    return CL_INVALID_MEM_OBJECT;
}

cl_int CL_API_CALL va_release(cl_command_queue, cl_uint n, const cl_mem *, cl_uint, const cl_event *, cl_event *) {
    record("clEnqueueReleaseVA_APIMediaSurfacesINTEL n=" + std::to_string(n));
    return kNotAcquired;
}

// cl_intel_sharing_format_query's VA-API query, as NEO has it beside the extension.
cl_int CL_API_CALL va_formats(cl_context, cl_mem_flags flags, cl_mem_object_type type, cl_uint plane, cl_uint,
                              void *, cl_uint *num) {
    record("clGetSupportedVA_APIMediaSurfaceFormatsINTEL flags=" + hex(flags) + " type=" + hex(type) +
           " plane=" + std::to_string(plane));
    if (num) *num = 7;  // distinct: the ICD's answer comes back unchanged
    return CL_SUCCESS;
}

}  // namespace

std::string extension_string() {
    std::string s;
    for (const Ext &e : extensions())
        if (e.on) s += std::string(e.name) + " ";
    return s;
}

std::vector<cl_name_version> extension_versions() {
    std::vector<cl_name_version> list;
    for (const Ext &e : extensions()) {
        if (!e.on) continue;
        cl_name_version nv{};
        nv.version = e.version;
        std::strncpy(nv.name, e.name, sizeof nv.name - 1);
        list.push_back(nv);
    }
    return list;
}

std::vector<cl_external_memory_handle_type_khr> import_handle_types() {
    std::vector<cl_external_memory_handle_type_khr> types;
    if (config().native_opaque_fd) types.push_back(CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR);
    if (config().native_dmabuf) types.push_back(CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR);
    return types;
}

void *extension_function(const char *name) {
    if (!name) return nullptr;
    const Config &c = config();
    struct Entry {
        const char *name;
        void *fn;
        bool on;
    };
    const Entry table[] = {
        {"clEnqueueAcquireExternalMemObjectsKHR", reinterpret_cast<void *>(&acquire), c.external_memory()},
        {"clEnqueueReleaseExternalMemObjectsKHR", reinterpret_cast<void *>(&release), c.external_memory()},
        {"clCreateSemaphoreWithPropertiesKHR", reinterpret_cast<void *>(&create_semaphore), c.semaphores},
        {"clReleaseSemaphoreKHR", reinterpret_cast<void *>(&release_semaphore), c.semaphores},
        {"clRetainSemaphoreKHR", reinterpret_cast<void *>(&retain_semaphore), c.semaphores},
        {"clEnqueueWaitSemaphoresKHR", reinterpret_cast<void *>(&wait_semaphores), c.semaphores},
        {"clEnqueueSignalSemaphoresKHR", reinterpret_cast<void *>(&signal_semaphores), c.semaphores},
        {"clGetSemaphoreInfoKHR", reinterpret_cast<void *>(&get_semaphore_info), c.semaphores},
        {"clGetSemaphoreHandleForTypeKHR", reinterpret_cast<void *>(&get_semaphore_handle), c.semaphores},
        {"clImportMemoryARM", reinterpret_cast<void *>(&import_memory_arm), c.arm_import},
        {"clGetDeviceIDsFromVA_APIMediaAdapterINTEL", reinterpret_cast<void *>(&va_device_ids), c.va_sharing},
        {"clCreateFromVA_APIMediaSurfaceINTEL", reinterpret_cast<void *>(&va_create), c.va_sharing},
        {"clEnqueueAcquireVA_APIMediaSurfacesINTEL", reinterpret_cast<void *>(&va_acquire), c.va_sharing},
        {"clEnqueueReleaseVA_APIMediaSurfacesINTEL", reinterpret_cast<void *>(&va_release), c.va_sharing},
        {"clGetSupportedVA_APIMediaSurfaceFormatsINTEL", reinterpret_cast<void *>(&va_formats), c.va_sharing},
    };
    for (const Entry &e : table)
        if (e.on && !std::strcmp(e.name, name)) return e.fn;
    return nullptr;
}

}  // namespace testicd
