#include "layer/blit/device_pairing.hpp"

#include <cstdio>
#include <deque>
#include <mutex>
#include <utility>

#include "layer/core/dispatch.hpp"
#include "layer/icd/devices.hpp"
#include "layer/i915/blt_engine.hpp"
#include "layer/base/log.hpp"

namespace cldmabuf {

std::string device_mismatch(const DeviceFacts &facts, const i915::Gen9Info &node) {
    if (facts.type & CL_DEVICE_TYPE_CPU) return {};  // same host pages as the dma-buf
    if (!(facts.type & CL_DEVICE_TYPE_GPU)) return "device is not a CPU or a GPU";
    const std::string node_name = node.path + (node.has_pci ? " at " + pci_text(node.pci) : "");
    if (facts.has_pci) {
        if (!node.has_pci)
            return "GPU device at " + pci_text(facts.pci) + " cannot be matched with Gen9 node " + node.path +
                   " (its PCI address is unknown)";
        if (!(facts.pci == node.pci))
            return "GPU device at " + pci_text(facts.pci) + " is not the Gen9 node " + node_name;
        return {};
    }
    // No cl_khr_pci_bus_info: the vendor is all there is to compare.
    if (facts.vendor_id != node.vendor_id) {
        char vendor[16];
        std::snprintf(vendor, sizeof vendor, "0x%04x", facts.vendor_id);
        return std::string("GPU device of vendor ") + vendor + " (no cl_khr_pci_bus_info) is not the Gen9 node " +
               node_name;
    }
    return {};
}

DeviceFacts device_facts(cl_device_id device, bool *ok) {
    DeviceFacts f;
    *ok = next().clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof f.type, &f.type, nullptr) == CL_SUCCESS &&
          next().clGetDeviceInfo(device, CL_DEVICE_VENDOR_ID, sizeof f.vendor_id, &f.vendor_id, nullptr) ==
              CL_SUCCESS;
    // A CPU device matches whatever its bus; only GPUs are asked.
    if (*ok && (f.type & CL_DEVICE_TYPE_GPU)) f.has_pci = cl_device_pci_address(device, &f.pci);
    return f;
}

// A sub-device answers as its root device (root_device_of): the same PCI
// function.  Root devices live as long as their platform, so their handles are
// a key that no other device can take over; a released sub-device's address can.
const char *blt_device_mismatch(cl_device_id queue_device) {
    static std::mutex mu;
    // A deque keeps each reason at its address while more devices are added.
    static std::deque<std::pair<cl_device_id, std::string>> cache;
    const cl_device_id device = root_device_of(queue_device);
    {
        std::lock_guard lock(mu);
        for (const auto &[d, why] : cache)
            if (d == device) return why.empty() ? nullptr : why.c_str();
    }
    std::string why;
    bool ok = false;
    const DeviceFacts facts = device_facts(device, &ok);
    i915::BltEngine *engine = i915::BltEngine::instance();
    if (!ok) why = "device query failed";
    else if (!engine) why = "no Gen9 blitter";
    else why = device_mismatch(facts, engine->device_info());
    if (!why.empty()) LOG_WARN("blitter: copies on device %p go to the ICD: %s", static_cast<void *>(device), why.c_str());
    std::lock_guard lock(mu);
    cache.emplace_back(device, std::move(why));
    return cache.back().second.empty() ? nullptr : cache.back().second.c_str();
}

}  // namespace cldmabuf
