// clGetDeviceIDsFromVA_APIMediaAdapterINTEL: the devices of the platform
// that can use the VADisplay's surfaces in place.  Pairing follows the
// blitter's rules (layer/blit/device_pairing.hpp, docs/blitter.md "Device
// matching"): a CPU device always (it reads the same host pages); a GPU
// device only when it is the PCI function of the DRM node that exported the
// display's surfaces (by cl_khr_pci_bus_info, else by vendor).  The node is
// learned through libva's public API only: a 64x64 surface is created,
// exported (DRM PRIME 2) and its dma-buf's exporter identified
// (layer/dmabuf/exporter.hpp).  Surfaces of system memory (dma-heap,
// udmabuf) have no node: only CPU devices pair with them.
// CL_PREFERRED_DEVICES_FOR_VA_API_INTEL and CL_ALL_DEVICES_FOR_VA_API_INTEL
// answer the same set: a device that does not pair cannot share at all.
#include <string>
#include <vector>

#include "layer/blit/device_pairing.hpp"
#include "layer/core/dispatch.hpp"
#include "layer/dmabuf/exporter.hpp"
#include "layer/base/kernel_ops.hpp"
#include "layer/base/log.hpp"
#include "layer/base/sysfs_pci.hpp"
#include "layer/va/entry_points.hpp"
#include "layer/va/forwarding.hpp"
#include "layer/va/libva.hpp"
#include "layer/va/surface_export.hpp"

namespace cldmabuf::va {
namespace {

constexpr const char *devices_call = "clGetDeviceIDsFromVA_APIMediaAdapterINTEL";

cl_int refuse_devices(cl_int err, const std::string &why) {
    LOG_ERROR("%s: %s", devices_call, why.c_str());
    return err;
}

// The DRM node behind `display`'s surfaces, as a Gen9Info for device_mismatch
// (path empty and no PCI address when the surfaces are system memory).
cl_int display_node(const Libva &api, VADisplay display, i915::Gen9Info *node, std::string *why) {
    VASurfaceID surface = kVaInvalidSurfaceId;
    VAStatus st = api.create_surfaces(display, kRtFormatYuv420, 64, 64, &surface, 1, nullptr, 0);
    if (st != kVaSuccess) {
        *why = "cannot create a probe surface on the display: " + status_text(api, st);
        return CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL;
    }
    ExportedSurface exported;
    st = export_surface(api, display, surface, kExportReadOnly, &exported);
    api.destroy_surfaces(display, &surface, 1);
    if (st != kVaSuccess) {
        *why = "the display's driver cannot export surfaces as DRM PRIME 2: " + status_text(api, st);
        return CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL;
    }
    const ExporterId id = identify_exporter(exported.desc.objects[0].fd);
    node->path = id.node;
    node->vendor_id = id.kind == ExporterKind::i915 ? 0x8086 : 0;
    node->has_pci = !id.node.empty() && drm_node_pci_address(id.node, &node->pci);
    LOG_INFO("va: display %p exports %s dma-bufs (%s%s%s)", display, id.name.empty() ? "unnamed" : id.name.c_str(),
             id.node.empty() ? "no device node" : id.node.c_str(), node->has_pci ? " at " : "",
             node->has_pci ? pci_text(node->pci).c_str() : "");
    return CL_SUCCESS;
}

}  // namespace

cl_int CL_API_CALL get_device_ids_from_media_adapter(cl_platform_id platform, cl_va_api_device_source_intel source,
                                                     void *adapter, cl_va_api_device_set_intel set,
                                                     cl_uint num_entries, cl_device_id *devices,
                                                     cl_uint *num_devices) {
    // NULL is no platform here (an ICD may take it for its own default).
    if (!platform || next().clGetPlatformInfo(platform, CL_PLATFORM_PROFILE, 0, nullptr, nullptr) != CL_SUCCESS)
        return refuse_devices(CL_INVALID_PLATFORM, "invalid platform");
    if (icd_has_va(platform)) {
        using Fn = decltype(&get_device_ids_from_media_adapter);
        if (auto icd = reinterpret_cast<Fn>(icd_function(platform, devices_call)))
            return icd(platform, source, adapter, set, num_entries, devices, num_devices);
    }
    if (source != CL_VA_API_DISPLAY_INTEL)
        return refuse_devices(CL_INVALID_VALUE, "media_adapter_type " + std::to_string(source) +
                                            " is not CL_VA_API_DISPLAY_INTEL");
    if (set != CL_PREFERRED_DEVICES_FOR_VA_API_INTEL && set != CL_ALL_DEVICES_FOR_VA_API_INTEL)
        return refuse_devices(CL_INVALID_VALUE, "media_adapter_set " + std::to_string(set) + " is not a VA device set");
    if ((num_entries == 0 && devices) || (!devices && !num_devices))
        return refuse_devices(CL_INVALID_VALUE, devices ? "num_entries is 0 with devices given"
                                                : "devices and num_devices are both NULL");
    const Libva *api = libva();
    if (!api) return refuse_devices(CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL, "libva cannot be loaded");
    if (!adapter || !api->display_is_valid(adapter))
        return refuse_devices(CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL, "media_adapter is not a valid VADisplay");
    i915::Gen9Info node;
    std::string why;
    if (cl_int err = display_node(*api, adapter, &node, &why); err != CL_SUCCESS) return refuse_devices(err, why);

    cl_uint count = 0;
    if (cl_int err = next().clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count); err != CL_SUCCESS)
        return err == CL_DEVICE_NOT_FOUND ? refuse_devices(err, "the platform has no devices") : err;
    std::vector<cl_device_id> all(count), paired;
    if (cl_int err = next().clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, all.data(), nullptr); err != CL_SUCCESS)
        return err;
    for (cl_device_id device : all) {
        bool ok = false;
        const DeviceFacts facts = device_facts(device, &ok);
        const std::string mismatch = ok ? device_mismatch(facts, node) : "device query failed";
        if (mismatch.empty()) paired.push_back(device);
        else LOG_INFO("va: device %p does not pair with display %p: %s", static_cast<void *>(device), adapter,
                      mismatch.c_str());
    }
    if (paired.empty()) return refuse_devices(CL_DEVICE_NOT_FOUND, "no device of the platform can reach the display's surfaces");
    if (num_devices) *num_devices = static_cast<cl_uint>(paired.size());
    for (cl_uint i = 0; devices && i < num_entries && i < paired.size(); ++i) devices[i] = paired[i];
    return CL_SUCCESS;
}

}  // namespace cldmabuf::va
