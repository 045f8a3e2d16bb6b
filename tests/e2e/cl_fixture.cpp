#include "cl_fixture.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace e2e {

std::string platform_string(cl_platform_id p, cl_platform_info what) {
    size_t n = 0;
    clGetPlatformInfo(p, what, 0, nullptr, &n);
    std::string s(n, '\0');
    clGetPlatformInfo(p, what, n, s.data(), nullptr);
    if (!s.empty() && s.back() == '\0') s.pop_back();
    return s;
}

bool device_has_images(const ClEnv &env) {
    cl_bool images = CL_FALSE;
    clGetDeviceInfo(env.device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, nullptr);
    return images == CL_TRUE;
}

std::string device_string(cl_device_id d, cl_device_info what) {
    size_t n = 0;
    clGetDeviceInfo(d, what, 0, nullptr, &n);
    std::string s(n, '\0');
    clGetDeviceInfo(d, what, n, s.data(), nullptr);
    if (!s.empty() && s.back() == '\0') s.pop_back();
    return s;
}

std::vector<std::string> split_words(const std::string &s) {
    std::istringstream in(s);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    return words;
}

namespace {

std::string real_path(const char *path) {
    char buf[PATH_MAX];
    return path && realpath(path, buf) ? std::string(buf) : std::string();
}

// OPENCL_LAYERS as the process started: ocl-icd splits the variable with
// strtok() in place on its first call, after which getenv() returns only the
// first entry.  Taken before main(), so before any OpenCL call.
const std::string &layers_at_start() {
    static const std::string v = std::getenv("OPENCL_LAYERS") ? std::getenv("OPENCL_LAYERS") : "";
    return v;
}
[[maybe_unused]] const std::string &snapshot_layers = layers_at_start();

}  // namespace

bool layer_requested() { return !layers_at_start().empty(); }

// Proof by ownership: the function pointer the loader hands out for the
// layer's entry point must lie inside the file OPENCL_LAYERS names.  Without
// the layer PoCL 3.1 has no such function at all; an ICD that had its own
// would answer from its own library, which fails the comparison too.
std::string layer_problem() {
    if (!layer_requested()) return "OPENCL_LAYERS is not set";
    const std::string &requested = layers_at_start();
    cl_uint n = 0;  // the loader loads the layers on its first call
    if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0) return "no OpenCL platform";
    std::vector<cl_platform_id> platforms(n);
    clGetPlatformIDs(n, platforms.data(), nullptr);
    std::string answered_by = "nobody";
    for (cl_platform_id p : platforms) {
        void *fn = clGetExtensionFunctionAddressForPlatform(p, "clEnqueueAcquireExternalMemObjectsKHR");
        Dl_info info{};
        if (!fn || !dladdr(fn, &info) || !info.dli_fname) continue;
        const std::string owner = real_path(info.dli_fname);
        answered_by = info.dli_fname;
        // ocl-icd splits OPENCL_LAYERS at ':'.
        std::istringstream entries(requested);
        for (std::string entry; std::getline(entries, entry, ':');)
            if (!owner.empty() && real_path(entry.c_str()) == owner) return {};
    }
    return "OPENCL_LAYERS=" + requested + " is set but that layer is not loaded: " +
           "clEnqueueAcquireExternalMemObjectsKHR is answered by " + answered_by;
}

bool layer_enabled() { return layer_problem().empty(); }

ClEnv::ClEnv() {
    // A test run that asked for the layer and silently got the bare ICD
    // would "pass" everything that does not need it: fail instead.
    if (layer_requested()) {
        if (std::string why = layer_problem(); !why.empty()) throw std::runtime_error(why);
    }
    cl_uint n = 0;
    if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0) throw std::runtime_error("no OpenCL platform");
    std::vector<cl_platform_id> platforms(n);
    clGetPlatformIDs(n, platforms.data(), nullptr);
    const char *want = std::getenv("CLDMABUF_TEST_PLATFORM");
    for (cl_platform_id p : platforms) {
        std::string name = platform_string(p, CL_PLATFORM_NAME);
        if (want && *want && name.find(want) == std::string::npos) continue;
        cl_device_id d = nullptr;
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, nullptr) != CL_SUCCESS) continue;
        platform = p;
        device = d;
        platform_name = name;
        break;
    }
    if (!platform) throw std::runtime_error("no OpenCL platform matches CLDMABUF_TEST_PLATFORM");
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform), 0};
    cl_int err = CL_SUCCESS;
    context = clCreateContext(props, 1, &device, nullptr, nullptr, &err);
    if (!context) throw std::runtime_error("clCreateContext failed: " + std::to_string(err));
    queue = make_queue();
    acquire = reinterpret_cast<clEnqueueAcquireExternalMemObjectsKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(platform, "clEnqueueAcquireExternalMemObjectsKHR"));
    release = reinterpret_cast<clEnqueueReleaseExternalMemObjectsKHR_fn>(
        clGetExtensionFunctionAddressForPlatform(platform, "clEnqueueReleaseExternalMemObjectsKHR"));
}

ClEnv::~ClEnv() {
    if (queue) clReleaseCommandQueue(queue);
    if (context) clReleaseContext(context);
}

cl_command_queue ClEnv::make_queue(cl_command_queue_properties props) const {
    cl_queue_properties qp[] = {CL_QUEUE_PROPERTIES, props, 0};
    cl_int err = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueueWithProperties(context, device, props ? qp : nullptr, &err);
    if (!q) throw std::runtime_error("clCreateCommandQueueWithProperties failed: " + std::to_string(err));
    return q;
}

cl_event ClEnv::make_user_event() const {
    cl_int err = CL_SUCCESS;
    cl_event e = clCreateUserEvent(context, &err);
    if (!e) throw std::runtime_error("clCreateUserEvent failed: " + std::to_string(err));
    return e;
}

cl_kernel ClEnv::build_kernel(const char *source, const char *name) const {
    cl_int err = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &err);
    if (!program) throw std::runtime_error("clCreateProgramWithSource failed");
    err = clBuildProgram(program, 1, &device, nullptr, nullptr, nullptr);
    if (err != CL_SUCCESS) {
        size_t n = 0;
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
        std::string log(n, '\0');
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
        clReleaseProgram(program);
        throw std::runtime_error("build failed: " + log);
    }
    cl_kernel kernel = clCreateKernel(program, name, &err);
    clReleaseProgram(program);  // the kernel keeps it alive
    if (!kernel) throw std::runtime_error("clCreateKernel failed");
    return kernel;
}

std::vector<cl_external_memory_handle_type_khr> import_handle_types(cl_device_id device) {
    size_t bytes = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, 0, nullptr, &bytes) != CL_SUCCESS)
        return {};
    std::vector<cl_external_memory_handle_type_khr> types(bytes / sizeof(cl_external_memory_handle_type_khr));
    if (!types.empty() &&
        clGetDeviceInfo(device, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, bytes, types.data(), nullptr) !=
            CL_SUCCESS)
        return {};
    return types;
}

bool icd_has_own_external_memory(cl_device_id device) {
    for (auto t : import_handle_types(device))
        if (t != CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR) return true;
    return false;
}

cl_external_memory_handle_type_khr unlisted_handle_type(cl_device_id device) {
    const auto listed = import_handle_types(device);
    // OPAQUE_FD, OPAQUE_WIN32, OPAQUE_WIN32_KMT, then values no extension defines.
    for (cl_external_memory_handle_type_khr t : {0x2060u, 0x2061u, 0x2062u, 0x2063u, 0x2064u, 0x2065u, 0x2066u})
        if (std::find(listed.begin(), listed.end(), t) == listed.end()) return t;
    return 0x20ff;
}

}  // namespace e2e
