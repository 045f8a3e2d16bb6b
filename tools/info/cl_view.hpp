// What the OpenCL platforms and devices of this process answer: the ICD loader
// is linked normally, so the answers include whatever OPENCL_LAYERS adds.
// cldmabuf-info compares two such views: its own (layer loaded) and one from
// a child process started without OPENCL_LAYERS (the ICD alone).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layer/base/cl_compat.h"

namespace cldmabuf::info {

struct ClDevice {
    cl_device_id id = nullptr;  // only valid in the process that enumerated it
    std::string name;
    cl_device_type type = 0;
    bool host_unified = false;
    bool image_support = false;
    cl_uint vendor_id = 0;
    std::string extensions;              // CL_DEVICE_EXTENSIONS
    std::vector<uint64_t> import_types;  // CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR
    bool has_pci = false;                // cl_khr_pci_bus_info answered
    std::string pci;                     // "dddd:bb:dd.f" when has_pci
};

struct ClPlatform {
    cl_platform_id id = nullptr;
    std::string name, vendor, version;
    std::string extensions;  // CL_PLATFORM_EXTENSIONS
    std::vector<uint64_t> import_types;
    std::vector<ClDevice> devices;
};

// Every platform and device as the loader in this process sees them.  On a
// loader error *error says why and the list is what was found before it.
std::vector<ClPlatform> enumerate_platforms(std::string *error);

// The view as text lines (the child's stdout) and back.
std::string serialize(const std::vector<ClPlatform> &platforms);
std::vector<ClPlatform> deserialize(const std::string &text);

// Runs `self_exe --icd-view` with OPENCL_LAYERS removed from its environment
// and parses what it prints: the ICDs without the layer.  Bounded by
// timeout_ms (the child is killed after it).  false with *why on failure.
bool icd_only_view(const std::string &self_exe, int timeout_ms, std::vector<ClPlatform> *out, std::string *why);

// Whether `word` is one entry of a space-separated extension list.
bool has_extension(const std::string &list, const std::string &word);
std::vector<std::string> split_extensions(const std::string &list);

}  // namespace cldmabuf::info
