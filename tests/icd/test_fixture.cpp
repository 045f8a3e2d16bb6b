#include "test_fixture.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace testicd_test {
namespace {
// tests/icd/testicd.hpp: the ICD's test-only platform queries.
constexpr cl_platform_info PLATFORM_TESTICD_LOG = 0x7E57;
constexpr cl_platform_info PLATFORM_TESTICD_LOG_CLEAR = 0x7E58;

void check(cl_int err, const char *what) {
    if (err != CL_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(err));
}
}  // namespace

Env::Env() {
    cl_uint n = 0;
    check(clGetPlatformIDs(1, &platform, &n), "clGetPlatformIDs");
    if (platform_string(platform, CL_PLATFORM_NAME) != "cldmabuf test ICD")
        throw std::runtime_error("the first platform is not the test ICD (OCL_ICD_VENDORS?)");
    check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr), "clGetDeviceIDs");
    cl_int err = CL_SUCCESS;
    context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    check(err, "clCreateContext");
    // The 1.x entry point: it exists on every version of the ICD.
    queue = clCreateCommandQueue(context, device, 0, &err);
    check(err, "clCreateCommandQueue");
    clear_icd_log();
}

Env::~Env() {
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
}

std::string Env::icd_log() const { return platform_string(platform, PLATFORM_TESTICD_LOG); }
void Env::clear_icd_log() const { clGetPlatformInfo(platform, PLATFORM_TESTICD_LOG_CLEAR, 0, nullptr, nullptr); }
void *Env::function(const char *name) const { return clGetExtensionFunctionAddressForPlatform(platform, name); }

std::string platform_string(cl_platform_id p, cl_platform_info what) {
    size_t n = 0;
    if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS) return "<error>";
    std::string s(n, '\0');
    clGetPlatformInfo(p, what, n, s.data(), nullptr);
    s.resize(std::strlen(s.c_str()));
    return s;
}

std::string device_string(cl_device_id d, cl_device_info what) {
    size_t n = 0;
    if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS) return "<error>";
    std::string s(n, '\0');
    clGetDeviceInfo(d, what, n, s.data(), nullptr);
    s.resize(std::strlen(s.c_str()));
    return s;
}

std::vector<std::string> words(const std::string &s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

int make_memfd(size_t size) {
    int fd = memfd_create("testicd-opaque", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(size)) != 0) throw std::runtime_error("memfd");
    return fd;
}

}  // namespace testicd_test
