// The layer's cl_khr_semaphore entry points as a test sees them: looked up
// for the platform, and SKIP where the ICD's own serve it (an ICD that lists
// cl_khr_semaphore keeps its own at CLDMABUF_SEMAPHORES=auto; the CTS covers
// those).  make() creates a binary semaphore, exportable as a sync_fd and/or
// importing one.
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <dlfcn.h>

#include <cstring>
#include <vector>

#include "cl_fixture.hpp"
#include "layer/sync/semaphore_compat.h"  // the sync_fd names older CL headers lack

namespace e2e {

struct LayerSemaphores {
    clCreateSemaphoreWithPropertiesKHR_fn create = nullptr;
    clEnqueueWaitSemaphoresKHR_fn wait = nullptr;
    clEnqueueSignalSemaphoresKHR_fn signal = nullptr;
    clGetSemaphoreInfoKHR_fn info = nullptr;
    clRetainSemaphoreKHR_fn retain = nullptr;
    clReleaseSemaphoreKHR_fn release = nullptr;
    clGetSemaphoreHandleForTypeKHR_fn handle = nullptr;
    cl_int(CL_API_CALL *reimport)(cl_semaphore_khr, cl_semaphore_reimport_properties_khr *, int) = nullptr;

    explicit LayerSemaphores(const ClEnv &env) {
        auto get = [&](const char *n) { return clGetExtensionFunctionAddressForPlatform(env.platform, n); };
        create = reinterpret_cast<clCreateSemaphoreWithPropertiesKHR_fn>(get("clCreateSemaphoreWithPropertiesKHR"));
        wait = reinterpret_cast<clEnqueueWaitSemaphoresKHR_fn>(get("clEnqueueWaitSemaphoresKHR"));
        signal = reinterpret_cast<clEnqueueSignalSemaphoresKHR_fn>(get("clEnqueueSignalSemaphoresKHR"));
        info = reinterpret_cast<clGetSemaphoreInfoKHR_fn>(get("clGetSemaphoreInfoKHR"));
        retain = reinterpret_cast<clRetainSemaphoreKHR_fn>(get("clRetainSemaphoreKHR"));
        release = reinterpret_cast<clReleaseSemaphoreKHR_fn>(get("clReleaseSemaphoreKHR"));
        handle = reinterpret_cast<clGetSemaphoreHandleForTypeKHR_fn>(get("clGetSemaphoreHandleForTypeKHR"));
        reimport = reinterpret_cast<decltype(reimport)>(get("clReImportSemaphoreSyncFdKHR"));
        REQUIRE(create);
        Dl_info where{};
        if (!dladdr(reinterpret_cast<void *>(create), &where) || !where.dli_fname ||
            !std::strstr(where.dli_fname, "libcldmabuf"))
            SKIP("the ICD's own cl_khr_semaphore serves this platform (CLDMABUF_DEBUG=semaphores-force tests the layer's)");
        REQUIRE(wait);
        REQUIRE(signal);
        REQUIRE(info);
        REQUIRE(retain);
        REQUIRE(release);
        REQUIRE(handle);
        REQUIRE(reimport);
    }
    cl_semaphore_khr make(const ClEnv &env, bool exportable = false, int import_fd = -1) const {
        std::vector<cl_semaphore_properties_khr> p = {CL_SEMAPHORE_TYPE_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR};
        if (exportable)
            p.insert(p.end(), {CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR, CL_SEMAPHORE_HANDLE_SYNC_FD_KHR,
                               CL_SEMAPHORE_EXPORT_HANDLE_TYPES_LIST_END_KHR});
        if (import_fd >= 0)
            p.insert(p.end(), {CL_SEMAPHORE_HANDLE_SYNC_FD_KHR, static_cast<cl_semaphore_properties_khr>(import_fd)});
        p.push_back(0);
        cl_int err = CL_INVALID_VALUE;
        cl_semaphore_khr s = create(env.context, p.data(), &err);
        REQUIRE(err == CL_SUCCESS);
        REQUIRE(s);
        return s;
    }
};

}  // namespace e2e
