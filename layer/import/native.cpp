#include "layer/import/native.hpp"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_set>
#include <variant>
#include <vector>

#include "CL/cl_ext_cldmabuf.h"
#include "layer/core/dispatch.hpp"
#include "layer/icd/devices.hpp"
#include "layer/icd/profile.hpp"
#include "layer/import/request.hpp"
#include "layer/base/log.hpp"
#include "layer/core/registry.hpp"
#include "layer/base/stats.hpp"
#include "layer/base/settings.hpp"

namespace cldmabuf {
namespace {

// The devices an import concerns: its CL_MEM_DEVICE_HANDLE_LIST_KHR, else
// the context's.  Empty when a listed device is not the context's: nothing
// is asked about a handle the ICD may not know (the layer reports it).
std::vector<cl_device_id> import_devices(cl_context context, bool has_device_list,
                                         const std::vector<cl_device_id> &listed) {
    std::vector<cl_device_id> context_list;
    if (context_devices(context, &context_list) != CL_SUCCESS) return {};
    if (!has_device_list) return context_list;
    for (cl_device_id d : listed)
        if (!device_in(context_list, d)) return {};
    return listed;
}

// A handle type that no device concerned lists, the ICD's or the layer's, is
// the spec's "not a supported property name" (CL_INVALID_PROPERTY).  The
// layer says so itself: an ICD asked about a type it never listed may answer
// anything (NVIDIA 580 returns 801 for OPAQUE_WIN32 on Linux).
bool handle_type_unsupported(cl_context context, const IcdHandleRequest &request, cl_int *errcode_ret) {
    const std::vector<cl_device_id> devices = import_devices(context, request.has_device_list, request.devices);
    if (devices.empty()) return false;  // the ICD reports the device list
    for (cl_device_id d : devices) {
        if (profile_imports_handle_type(d, request.type)) continue;
        LOG_ERROR("import with external memory handle type 0x%llx: no device of the context lists it "
                  "(CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR); CL_INVALID_PROPERTY",
                  static_cast<unsigned long long>(request.type));
        stats().import_errors++;
        if (errcode_ret) *errcode_ret = CL_INVALID_PROPERTY;
        return true;
    }
    return false;
}

// A list with the layer's own property names (plane offset, modifier, tiling
// consent) stays with the layer: the ICD would refuse them (layer/egl
// imports this way).
bool icd_imports_dmabuf_for(cl_context context, const DmabufRequest &request) {
    if (dmabuf_importer() == DmabufImporter::layer || request.names_layer_properties) return false;
    const std::vector<cl_device_id> devices = import_devices(context, request.has_device_list, request.devices);
    if (devices.empty()) return false;
    for (cl_device_id d : devices)
        if (!profile_imports_handle_type(d, CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR)) return false;
    return true;
}

// True when the ICD created `mem` from an external memory handle (its
// CL_MEM_PROPERTIES name one).  A list the layer would refuse is the ICD's
// own answer about an object it made: the ICD judges the command.
bool icd_external_object(cl_mem mem) {
    size_t bytes = 0;
    if (next().clGetMemObjectInfo(mem, CL_MEM_PROPERTIES, 0, nullptr, &bytes) != CL_SUCCESS || !bytes) return false;
    std::vector<cl_mem_properties> props(bytes / sizeof(cl_mem_properties));
    if (next().clGetMemObjectInfo(mem, CL_MEM_PROPERTIES, bytes, props.data(), nullptr) != CL_SUCCESS) return false;
    props.push_back(0);  // a list cut short still ends
    return names_external_handle(props.data());
}

// Objects the ICD imported for the application through these hooks.
std::mutex native_mutex;
std::unordered_set<cl_mem> native_objects;

void CL_CALLBACK forget_native(cl_mem mem, void *) {
    std::lock_guard lock(native_mutex);
    native_objects.erase(mem);
}

void remember_native(cl_mem mem) {
    {
        std::lock_guard lock(native_mutex);
        native_objects.insert(mem);
    }
    if (next().clSetMemObjectDestructorCallback(mem, forget_native, nullptr) != CL_SUCCESS) forget_native(mem, nullptr);
}

}  // namespace

DmabufImporter dmabuf_importer() {
    static const DmabufImporter choice = [] {
        const char *v = setting("CLDMABUF_DMABUF_IMPORT");
        return v && !std::strcmp(v, "layer") ? DmabufImporter::layer : DmabufImporter::icd;
    }();
    return choice;
}

bool is_native_import(cl_mem mem) {
    std::lock_guard lock(native_mutex);
    return native_objects.count(mem) != 0;
}

namespace {

// Both object kinds: `create` is the ICD's entry point with the caller's
// arguments bound; `kind` names the object in the log line.
template <class Create>
bool native_import(cl_context context, const DmabufRequest &request, const char *kind, cl_mem *out,
                   Create &&create) {
    if (!icd_imports_dmabuf_for(context, request)) return false;
    *out = create();
    if (*out) {
        remember_native(*out);
        LOG_INFO("dma-buf %s import %p done by the ICD, which imports dma-bufs itself "
                 "(CLDMABUF_DMABUF_IMPORT=layer makes the layer do it)",
                 kind, static_cast<void *>(*out));
    }
    return true;
}

template <class Create>
cl_mem icd_handle_import(cl_context context, const IcdHandleRequest &request, const char *kind, cl_int *errcode_ret,
                         Create &&create) {
    if (handle_type_unsupported(context, request, errcode_ret)) return nullptr;
    LOG_DEBUG("%s import with handle type 0x%llx: the ICD's (properties passed on untouched)", kind,
              static_cast<unsigned long long>(request.type));
    return create();
}

}  // namespace

cl_mem icd_handle_buffer(cl_context context, const IcdHandleRequest &request, const cl_mem_properties *properties,
                         cl_mem_flags flags, size_t size, void *host_ptr, cl_int *errcode_ret) {
    return icd_handle_import(context, request, "buffer", errcode_ret, [&] {
        return next().clCreateBufferWithProperties(context, properties, flags, size, host_ptr, errcode_ret);
    });
}

cl_mem icd_handle_image(cl_context context, const IcdHandleRequest &request, const cl_mem_properties *properties,
                        cl_mem_flags flags, const cl_image_format *format, const cl_image_desc *desc, void *host_ptr,
                        cl_int *errcode_ret) {
    return icd_handle_import(context, request, "image", errcode_ret, [&] {
        return next().clCreateImageWithProperties(context, properties, flags, format, desc, host_ptr, errcode_ret);
    });
}

bool native_buffer_import(cl_context context, const DmabufRequest &request, cl_mem_flags flags, size_t size,
                          void *host_ptr, cl_int *errcode_ret, cl_mem *out) {
    return native_import(context, request, "buffer", out, [&] {
        return next().clCreateBufferWithProperties(context, request.original.data(), flags, size, host_ptr,
                                                   errcode_ret);
    });
}

bool native_image_import(cl_context context, const DmabufRequest &request, cl_mem_flags flags,
                         const cl_image_format *format, const cl_image_desc *desc, void *host_ptr,
                         cl_int *errcode_ret, cl_mem *out) {
    return native_import(context, request, "image", out, [&] {
        return next().clCreateImageWithProperties(context, request.original.data(), flags, format, desc, host_ptr,
                                                  errcode_ret);
    });
}

bool native_arm_import(cl_context context, cl_import_properties_arm type, cl_mem_flags flags,
                       const cl_import_properties_arm *properties, void *memory, size_t size, cl_int *errcode_ret,
                       cl_mem *out) {
    // Other memory types are forwarded by layer/import/arm.cpp already.
    if (type != CL_IMPORT_TYPE_DMA_BUF_ARM || dmabuf_importer() == DmabufImporter::layer) return false;
    std::vector<cl_device_id> devices;
    if (context_devices(context, &devices) != CL_SUCCESS || devices.empty()) return false;
    for (cl_device_id d : devices)
        if (!device_has_extension(d, "cl_arm_import_memory_dma_buf")) return false;
    using Fn = cl_mem(CL_API_CALL *)(cl_context, cl_mem_flags, const cl_import_properties_arm *, void *, size_t,
                                     cl_int *);
    auto icd = reinterpret_cast<Fn>(
        next().clGetExtensionFunctionAddressForPlatform(device_platform(devices[0]), "clImportMemoryARM"));
    if (!icd) return false;
    *out = icd(context, flags, properties, memory, size, errcode_ret);
    if (*out)
        LOG_INFO("clImportMemoryARM: dma-buf import %p done by the ICD, which has cl_arm_import_memory_dma_buf "
                 "(CLDMABUF_DMABUF_IMPORT=layer makes the layer do it)",
                 static_cast<void *>(*out));
    return true;
}

bool native_external_mem_command(bool acquire, cl_command_queue queue, cl_uint n, const cl_mem *mems,
                                 cl_uint num_events, const cl_event *wait_list, cl_event *event, cl_int *out) {
    if (n == 0 || !mems) return false;  // the layer reports the error
    cl_uint ours = 0;
    for (cl_uint i = 0; i < n; ++i) ours += imports().find(mems[i]) ? 1 : 0;
    if (ours == n) return false;
    const char *name = acquire ? "clEnqueueAcquireExternalMemObjectsKHR" : "clEnqueueReleaseExternalMemObjectsKHR";
    cl_device_id device = queue_device(queue);
    if (!device) return false;  // the layer reports the invalid queue
    auto icd = reinterpret_cast<clEnqueueAcquireExternalMemObjectsKHR_fn>(
        next().clGetExtensionFunctionAddressForPlatform(device_platform(device), name));
    if (!icd) return false;  // no native external memory: the layer reports the foreign object
    if (ours) {
        // A plain buffer among the layer's imports is the spec's
        // CL_INVALID_MEM_OBJECT, which the layer reports.
        for (cl_uint i = 0; i < n; ++i)
            if (!imports().find(mems[i]) && !icd_external_object(mems[i])) return false;
        LOG_ERROR("%s: mem_objects mixes %u object(s) the layer imported with %u the ICD imported; "
                  "enqueue them in two calls",
                  name, ours, n - ours);
        *out = CL_INVALID_OPERATION;
        return true;
    }
    // Only the ICD's own imports go to the ICD: a plain buffer is the spec's
    // CL_INVALID_MEM_OBJECT ("not valid OpenCL memory objects created using
    // an external memory handle"), which the layer reports.  NVIDIA 580
    // answers CL_SUCCESS for one (conformance/cts, docs/conformance.md).
    for (cl_uint i = 0; i < n; ++i)
        if (!icd_external_object(mems[i])) return false;
    *out = icd(queue, n, mems, num_events, wait_list, event);
    return true;
}

}  // namespace cldmabuf
