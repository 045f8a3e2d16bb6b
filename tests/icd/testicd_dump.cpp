// testicd-dump: every platform and device query the first platform answers,
// one line each ("<scope> <name> <kind> <value>"), for comparing the answers
// with and without OPENCL_LAYERS (test_superset.cpp).  Names are scanned by
// range so that nothing the ICD answers is left out.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace {

// How a value compares: lists may grow with the layer, others must not change.
const char *kind_of(bool device, cl_uint name) {
    switch (name) {
    case CL_PLATFORM_EXTENSIONS:
    case CL_DEVICE_EXTENSIONS: return "words";
    case CL_PLATFORM_EXTENSIONS_WITH_VERSION:
    case CL_DEVICE_EXTENSIONS_WITH_VERSION: return "names";
    case 0x2044:  // CL_PLATFORM_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR
    case 0x204F:  // CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR
    case 0x2052:  // ..._ASSUME_LINEAR_IMAGES_HANDLE_TYPES_KHR
        return "set";
    case CL_DEVICE_PLATFORM:
    case CL_DEVICE_PARENT_DEVICE: return device ? "handle" : "raw";  // differs per process
    default: return "raw";
    }
}

void dump(const char *scope, bool device, cl_uint name, const std::vector<unsigned char> &v) {
    const std::string kind = kind_of(device, name);
    std::printf("%s 0x%x %s", scope, name, kind.c_str());
    if (kind == "words") {
        std::set<std::string> words;
        std::string text(reinterpret_cast<const char *>(v.data()), strnlen(reinterpret_cast<const char *>(v.data()), v.size()));
        size_t pos = 0;
        while (pos < text.size()) {
            size_t end = text.find(' ', pos);
            if (end == std::string::npos) end = text.size();
            if (end > pos) words.insert(text.substr(pos, end - pos));
            pos = end + 1;
        }
        for (const auto &w : words) std::printf(" %s", w.c_str());
    } else if (kind == "names") {
        const auto *nv = reinterpret_cast<const cl_name_version *>(v.data());
        for (size_t i = 0; i < v.size() / sizeof(cl_name_version); ++i) std::printf(" %s", nv[i].name);
    } else if (kind == "set") {
        const auto *t = reinterpret_cast<const cl_uint *>(v.data());
        for (size_t i = 0; i < v.size() / sizeof(cl_uint); ++i) std::printf(" 0x%x", t[i]);
    } else if (kind == "raw") {
        std::printf(" ");
        for (unsigned char c : v) std::printf("%02x", c);
    }
    std::printf("\n");
}

template <typename Query>
void scan(const char *scope, bool device, cl_uint first, cl_uint last, Query query) {
    for (cl_uint name = first; name <= last; ++name) {
        size_t bytes = 0;
        if (query(name, 0, nullptr, &bytes) != CL_SUCCESS) continue;
        std::vector<unsigned char> v(bytes);
        if (bytes && query(name, bytes, v.data(), nullptr) != CL_SUCCESS) continue;
        dump(scope, device, name, v);
    }
}

}  // namespace

int main() {
    cl_platform_id platform = nullptr;
    if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS) return 1;
    cl_device_id device = nullptr;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS) return 1;
    auto p = [platform](cl_uint n, size_t s, void *v, size_t *r) { return clGetPlatformInfo(platform, n, s, v, r); };
    auto d = [device](cl_uint n, size_t s, void *v, size_t *r) { return clGetDeviceInfo(device, n, s, v, r); };
    // Core names, then the KHR extension ranges (external memory/semaphores, 0x2000s; 0x4000s).
    scan("platform", false, 0x0900, 0x09ff, p);
    scan("platform", false, 0x2000, 0x20ff, p);
    scan("platform", false, 0x4000, 0x41ff, p);
    scan("device", true, 0x1000, 0x10ff, d);
    scan("device", true, 0x2000, 0x20ff, d);
    scan("device", true, 0x4000, 0x41ff, d);
    return 0;
}
