#include "device_sum.hpp"

#include <catch2/catch_test_macros.hpp>

namespace e2e {

uint64_t device_sum(const ClEnv &env, cl_mem mem, size_t count, cl_mem *result) {
    cl_kernel k = env.build_kernel(
        "kernel void sum(global const uint *b, uint n, global ulong *out) {"
        "  if (get_global_id(0) == 0) { ulong s = 0; for (uint i = 0; i < n; ++i) s += b[i]; *out = s; } }",
        "sum");
    cl_int err = CL_SUCCESS;
    cl_mem out = clCreateBuffer(env.context, CL_MEM_READ_WRITE, sizeof(cl_ulong), nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    const cl_uint n = static_cast<cl_uint>(count);
    REQUIRE(clSetKernelArg(k, 0, sizeof mem, &mem) == CL_SUCCESS);
    REQUIRE(clSetKernelArg(k, 1, sizeof n, &n) == CL_SUCCESS);
    REQUIRE(clSetKernelArg(k, 2, sizeof out, &out) == CL_SUCCESS);
    const size_t one = 1;
    REQUIRE(env.acquire(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(clEnqueueNDRangeKernel(env.queue, k, 1, nullptr, &one, nullptr, 0, nullptr, nullptr) == CL_SUCCESS);
    REQUIRE(env.release(env.queue, 1, &mem, 0, nullptr, nullptr) == CL_SUCCESS);
    cl_ulong sum = 0;
    REQUIRE(clEnqueueReadBuffer(env.queue, out, CL_TRUE, 0, sizeof sum, &sum, 0, nullptr, nullptr) == CL_SUCCESS);
    if (result)
        *result = out;
    else
        clReleaseMemObject(out);
    clReleaseKernel(k);
    return sum;
}

}  // namespace e2e
