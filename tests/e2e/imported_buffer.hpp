// A dma-buf imported as a read-write buffer (clCreateBufferWithProperties with
// CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR).  The import owns the fd from then
// on (the spec), so the Dmabuf only remembers its number and never closes it;
// the layer closes it with the cl_mem.
#pragma once

#include <catch2/catch_test_macros.hpp>

#include "cl_fixture.hpp"
#include "test_dmabufs.hpp"

namespace e2e {

struct ImportedBuffer {
    Dmabuf buf;
    cl_mem mem = nullptr;
    size_t size = 0;
    ImportedBuffer(const ClEnv &env, size_t sz) : buf(make_dmabuf(sz)), size(sz) {
        const cl_mem_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_DMA_BUF_KHR,
                                           static_cast<cl_mem_properties>(buf.fd), 0};
        cl_int err = CL_SUCCESS;
        mem = clCreateBufferWithProperties(env.context, props, CL_MEM_READ_WRITE, sz, nullptr, &err);
        REQUIRE(err == CL_SUCCESS);
        REQUIRE(mem);
    }
    ~ImportedBuffer() {
        if (mem) clReleaseMemObject(mem);
        buf.release_fd();  // closed by the layer with the object
    }
    ImportedBuffer(const ImportedBuffer &) = delete;
    ImportedBuffer &operator=(const ImportedBuffer &) = delete;
};

}  // namespace e2e
