// Set-up for the tests on the test ICD: the real loader with
// OCL_ICD_VENDORS naming only tests/icd/testicd.icd, the layer through
// OPENCL_LAYERS, CLDMABUF_TESTICD choosing the ICD's mode (tests/meson.build).
#pragma once

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <string>
#include <vector>

#include "layer/base/cl_compat.h"

namespace testicd_test {

struct Env {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    Env();
    ~Env();
    Env(const Env &) = delete;
    Env &operator=(const Env &) = delete;

    // What the ICD received since the last clear (one call per line).
    std::string icd_log() const;
    void clear_icd_log() const;
    void *function(const char *name) const;
};

std::string platform_string(cl_platform_id p, cl_platform_info what);
std::string device_string(cl_device_id d, cl_device_info what);
std::vector<std::string> words(const std::string &s);
template <typename T>
std::vector<T> platform_array(cl_platform_id p, cl_platform_info what, cl_int *err = nullptr) {
    size_t bytes = 0;
    cl_int e = clGetPlatformInfo(p, what, 0, nullptr, &bytes);
    std::vector<T> out(bytes / sizeof(T));
    if (e == CL_SUCCESS && bytes) e = clGetPlatformInfo(p, what, bytes, out.data(), nullptr);
    if (err) *err = e;
    return out;
}
template <typename T>
std::vector<T> device_array(cl_device_id d, cl_device_info what, cl_int *err = nullptr) {
    size_t bytes = 0;
    cl_int e = clGetDeviceInfo(d, what, 0, nullptr, &bytes);
    std::vector<T> out(bytes / sizeof(T));
    if (e == CL_SUCCESS && bytes) e = clGetDeviceInfo(d, what, bytes, out.data(), nullptr);
    if (err) *err = e;
    return out;
}
std::string hex(uint64_t v);
// A memfd of `size` bytes: stands in for an opaque fd (the ICD owns it after a successful import).
int make_memfd(size_t size);

}  // namespace testicd_test
